"""The Axes page through AppTest: each section, each norm's shared set, each experiment, refusals.

Numbers on the page are checked against independent computations (numpy on the tensor the
page draws, nn.BatchNorm1d's own error), never against the page's engine calls.
"""

import base64
import json

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from engine.axes.sharing import axes_statistics
from engine.axes.sources import make_tensor
from engine.config import AxesSpec
from tests.app.conftest import APP
from ui.formatting import as_ascii
from ui.i18n import translate
from ui.text.axes import nan_note


def _open(app, **settings):
    app.switch_page("app_pages/axes.py").run()
    for key, value in settings.items():
        _set(app, key, value)
    assert not app.exception
    return app


def _set(app, key: str, value):
    kinds = ("number_input", "selectbox", "segmented_control", "text_input", "toggle", "slider")
    kinds += ("select_slider",)
    for kind in kinds:
        widgets = [w for w in app.get(kind) if getattr(w, "key", None) == key]
        if widgets:
            widgets[0].set_value(value).run()
            assert not app.exception
            return
    raise AssertionError(f"no widget {key}")


def _text(app) -> str:
    parts = [m.value for m in app.markdown] + [c.value for c in app.caption]
    parts += [e.value for kind in ("success", "info", "warning", "error") for e in app.get(kind)]
    return "\n".join(parts)


def _metrics(app) -> dict[str, str]:
    """Each metric's text as the app's own parsers read it back ("−0.08" as "-0.08")."""
    return {m.label: as_ascii(m.value) for m in app.metric}


def _array(data) -> np.ndarray:
    if isinstance(data, dict) and "bdata" in data:
        flat = np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
        shape = data.get("shape")
        if isinstance(shape, str):
            shape = [int(n) for n in shape.split(",")]
        return flat.reshape(shape) if shape else flat
    return np.asarray(data, dtype=float)


def _chart(app, key: str) -> dict:
    for chart in app.get("plotly_chart"):
        if chart.proto.id and key in chart.proto.id:
            return json.loads(chart.proto.spec)
    raise AssertionError(f"no chart {key}")


def _lit(app) -> set[tuple[int, int]]:
    """(row, channel) of the input panel's unveiled cells (veil opacity 0)."""
    veil = _array(_chart(app, "ax_heatmap")["data"][1]["z"])
    return {(int(r), int(c)) for r, c in zip(*np.nonzero(veil == 0))}


def test_default_layernorm_lights_the_clicked_row_and_states_its_statistics(app):
    _open(app)
    assert app.title[0].value == "Axes"
    text = _text(app)
    assert "computes **B·T = 4·16 = 64** (μ, σ) pairs" in text
    assert "γ and β: shape [32] each" in text
    assert _lit(app) == {(1 * 16 + 4, c) for c in range(32)}  # default cell (1, 4, 10)
    row = make_tensor(AxesSpec()).x[1, 4].double().numpy()  # the tensor the page draws
    metrics = _metrics(app)
    assert float(metrics["μ"]) == pytest.approx(row.mean(), abs=1e-4)
    assert float(metrics["σ²"]) == pytest.approx(row.var(), abs=1e-4)
    assert metrics["cells pooled"] == "32"


def test_picking_a_cell_moves_the_shared_set(app):
    _open(app, ax_cell_b=2, ax_cell_t=7, ax_cell_c=20)
    assert _lit(app) == {(2 * 16 + 7, c) for c in range(32)}
    assert "Cell (b = 2, t = 7, c = 20)" in _text(app)


@pytest.mark.parametrize(
    "kind, expected_count, lit",
    [
        ("batchnorm", "**d = 32** (μ, σ) pairs", {(r, 10) for r in range(64)}),
        ("instancenorm", "**B·d = 4·32 = 128** (μ, σ) pairs", {(16 + t, 10) for t in range(16)}),
        (
            "groupnorm",
            "**B·G = 4·4 = 16** (μ, σ) pairs",
            {(16 + t, c) for t in range(16) for c in range(8, 16)},
        ),
        ("rmsnorm", "**B·T = 4·16 = 64** mean squares", {(20, c) for c in range(32)}),
        ("dyt", "computes no statistic", {(20, 10)}),
    ],
)
def test_each_norm_lights_its_own_set(app, kind, expected_count, lit):
    _open(app, ax_norm=kind)
    assert expected_count in _text(app)
    assert _lit(app) == lit


def test_groupnorm_states_both_layouts_and_the_leak(app):
    _open(app, ax_norm="groupnorm")
    text = _text(app)
    assert "B·G = 16 statistics" in text and "B·T·G = 256 statistics" in text
    assert "Correction" not in text
    assert "GroupNorm pools over T" in text and "leaks the future" in text
    # pooled cells: one sequence's group of d/G = 8 channels over all T = 16 positions
    assert _metrics(app)["cells pooled"] == "128"


def test_masked_batchnorm_pools_only_real_tokens(app):
    _open(app, ax_source="padded", ax_norm="batchnorm", ax_mask=True)
    real = sum((16, 12, 8, 4))  # the staircase of lengths: PAD left out of the channel
    assert _metrics(app)["cells pooled"] == str(real)
    spec = AxesSpec(source="padded")
    x, mask = make_tensor(spec).x.double().numpy(), make_tensor(spec).real.numpy()
    channel = x[:, :, 10][mask]  # default cell's channel, real positions only
    assert float(_metrics(app)["μ"]) == pytest.approx(channel.mean(), abs=1e-4)
    # the legend counts the real positions, not "all B·T positions" (64) beside 40 cells
    assert "every position that is not PAD (40 cells)" in _text(app).replace("\u00a0", " ")
    assert "all B·T positions" not in _text(app)


def test_bad_settings_are_refused_with_a_message(app):
    _open(app, ax_norm="groupnorm", ax_groups=5)
    assert "5 does not divide 32. Divisors of d: 1, 2, 4, 8, 16, 32" in app.error[0].value
    _set(app, "ax_groups", 4)  # back to a divisor
    assert not app.error
    _set(app, "ax_source", "padded")
    _set(app, "ax_lengths", "16, 12, oops")
    assert "`oops` is not a whole number" in app.error[0].value
    _set(app, "ax_lengths", "16, 12")
    assert "Sentence lengths given: 2, for B = 4." in app.error[0].value
    _set(app, "ax_lengths", "16, 12, 8, 40")
    assert "has length 40, but every length must be from 1 to T = 16" in app.error[0].value


def test_64_lengths_written_with_commas_and_spaces_are_read_and_a_longer_text_is_refused(app):
    """ "128, 127, …, 65" (283 characters) is a valid list for B = 64: the box's browser limit
    of 256 dropped it without a word.  Past the link's limit a text is refused with its
    length, and the staircase is used."""
    _open(app, ax_source="padded", ax_batch=64, ax_tokens=128, ax_d=8)
    box = next(w for w in app.text_input if w.key == "ax_lengths")
    assert box.proto.max_chars == 0  # no browser limit
    lengths = ", ".join(str(n) for n in range(128, 64, -1))
    assert len(lengths) == 283
    _set(app, "ax_lengths", lengths)
    assert not app.error and not app.warning
    _set(app, "ax_section", "batchnorm")
    assert "lengths 128, 127, 126" in _text(app)  # the padding experiment's sentences
    _set(app, "ax_section", "cells")
    _set(app, "ax_lengths", "1, " * 200 + "1")
    said = "Sentence lengths is 601 characters long; at most 512 are accepted, so the page"
    assert said + " leaves it out." in _text(app)
    assert not app.error  # the staircase, not the refused text


def test_the_cell_limit_is_refused_and_large_tensors_are_summarised(app):
    _open(app, ax_batch=8, ax_tokens=64, ax_d=128)
    assert "65,536 cells is more than this page draws cell by cell" in _text(app)
    assert "4 rows × 2 channels" in _text(app)
    _set(app, "ax_d", 256)
    assert "cells is more than the 65,536 this page computes" in app.error[0].value
    _set(app, "ax_d", 32)
    _set(app, "ax_batch", 64)
    _set(app, "ax_tokens", 32)
    assert "each brick is the mean of 8 rows × 1 channel," in _text(app)  # not "1 channels"
    _set(app, "ax_batch", 1)
    _set(app, "ax_tokens", 64)
    _set(app, "ax_d", 1000)  # bricks of 16 channels: the last of 1,000 holds 8
    assert "The last column of bricks holds 8 channels." in _text(app)


def _failures(app, **settings):
    _open(app, ax_section="batchnorm", **settings)
    return _text(app)


def test_every_experiment_draws_its_chart_and_lesson(app):
    text = _failures(app)
    for key in ("ax_padding", "ax_small", "ax_train_eval", "ax_causal"):  # two panels each
        assert _chart(app, key)["data"] and _chart(app, f"{key}_2")["data"]
    assert _chart(app, "ax_one")["data"]
    assert len(app.success) == 5  # one lesson per experiment
    for number in range(1, 6):
        assert any(s.value.startswith(f"{number}. ") for s in app.subheader)
    # padding: 40 real tokens of 64 positions (lengths 16, 12, 8, 4) -> 37.5 % PAD
    assert "With 37.5\u00a0% of the positions PAD" in text
    assert "LayerNorm's outputs of the real tokens move by 0:" in text
    # small batches: b = 1 pools T = 16 values per channel
    assert "With b = 1 (n = 16 values per channel)" in text


def test_batch_of_one_quotes_the_claim_and_shows_what_pytorch_does(app):
    text = _failures(app)
    assert "With a batch of size one the variance is zero" in text  # stated as a claim
    bn = torch.nn.BatchNorm1d(32).train()
    with pytest.raises(ValueError) as raised:
        bn(torch.zeros(1, 32))
    assert f"raises ValueError before computing anything, on purpose: “{raised.value}”" in text
    assert "The claim does not hold: nothing divides by zero." in text
    assert "collapses every output to β (PyTorch in float32: max |y − β| = 2.146×10⁻⁵)" in text


def test_causal_leak_names_the_leaking_norms(app):
    text = _failures(app)
    lesson = next(s.value for s in app.success if s.value.startswith("Replacing token"))
    assert "Replacing token t = 15" in lesson
    for name in ("BatchNorm", "InstanceNorm", "GroupNorm"):
        assert name in lesson.split("Under")[0]
    assert "Under LayerNorm, RMSNorm, DyT: by exactly 0." in lesson
    assert "A norm that pools over T" in text


def test_train_eval_shift_and_momentum(app):
    _failures(app, ax_shift=0.0)
    lesson = next(s.value for s in app.success if s.value.startswith("After 100 steps"))
    assert "shifted by 0σ" in lesson
    _set(app, "ax_momentum", 0.0)  # refused by the box (above 0), never the engine's refusal
    assert not app.error and app.number_input(key="ax_momentum").value == 0.1
    assert any("above 0 and up to 1" in w.value for w in app.warning)


def test_small_batch_refuses_too_many_draws(app):
    _failures(app, ax_tokens=512, ax_d=8, ax_draws=2000)
    assert any("more than the 16,777,216 accepted" in e.value for e in app.error)


@pytest.mark.parametrize("section", ["cells", "batchnorm"])
def test_chinese_page_opened_from_a_link(section):
    """A link in Chinese opens each section in Chinese (AppTest formats widget labels outside
    the session, so the page is opened from the link, not switched to Chinese in place)."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["lang"] = "zh"
    app.run()
    app.session_state["ax_section"] = section  # as ui.url.address_bar.seed puts ?ax_section=...
    _open(app)
    assert app.title[0].value == "轴与统计量"
    if section == "cells":
        assert "计算 **B·T = 4·16 = 64** 组 (μ, σ)" in _text(app)
    else:
        assert any("这个说法不成立" in s.value for s in app.success)
        assert len(app.success) == 5


def test_one_token_tensor_explains_what_needs_more(app):
    """B = T = 1: the experiments that need two values say so; nothing crashes."""
    _open(app, ax_batch=1, ax_tokens=1, ax_section="batchnorm")
    errors = " ".join(e.value for e in app.error)
    assert "B·T = 1·1 = 1: a running variance needs at least two values" in errors
    assert "T = 1: a later token needs an earlier one" in errors
    assert any("This batch has no PAD position" in s.value for s in app.success)
    assert any("The claim does not hold" in s.value for s in app.success)


@pytest.mark.parametrize(
    "kind, sizes, module",
    [
        ("batchnorm", {"ax_batch": 1, "ax_tokens": 1}, torch.nn.BatchNorm1d),
        ("instancenorm", {"ax_tokens": 1}, torch.nn.InstanceNorm1d),
    ],
)
def test_a_statistic_of_one_value_says_what_pytorchs_module_does(app, kind, sizes, module):
    """The cells view said "Computed by PyTorch" with σ² = 0 where PyTorch's module refuses
    the tensor in training mode, and that "a later token" changes the statistics at T = 1.
    The message is the module's own, as it raises it on the tensor's shape."""
    _open(app, ax_norm=kind, **sizes)
    b, t = sizes.get("ax_batch", 4), sizes["ax_tokens"]
    with pytest.raises(ValueError) as raised:
        module(32).train()(torch.zeros(b, 32, t))
    text = _text(app)
    said = "refuses this tensor in training mode and" if kind == "instancenorm" else "in training"
    assert f"PyTorch's nn.{module.__name__} {said}" in text  # eval: tests/axes/test_axes_sharing.py
    assert str(raised.value) in text
    assert "a later token changes" not in text
    _set(app, "ax_tokens", 2)
    assert "refuses this tensor" not in _text(app) and "a later token changes" in _text(app)


def test_dyt_pools_no_cell(app):
    _open(app, ax_norm="dyt")
    assert _metrics(app)["cells pooled"] == "—"  # not 1: it pools nothing, not the cell


def test_zero_epsilon_on_a_pad_row_shows_nan_not_a_traceback(app):
    _open(app, ax_source="padded", ax_eps=0.0, ax_cell_b=3, ax_cell_t=10)
    assert "a PAD position" in _text(app)
    assert _metrics(app)["σ²"] == "0"  # a row of PAD zeros has no spread
    assert any("NaN" in latex.value for latex in app.latex)  # (0 - 0) / sqrt(0 + 0)


def _example_stream(point: int) -> torch.Tensor:
    """[B, T, d] float64: stream point ``point`` of the shipped dump, read with safetensors."""
    from safetensors import safe_open

    from engine.dumps.example import EXAMPLE_DUMP

    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        return handle.get_tensor(f"model.layers.{point}.input").double()


def test_the_example_source_is_a_slice_of_smollm2s_real_stream(app):
    link = {"ax_source": "example", "ax_layer": "12", "ax_tokens": "24", "ax_norm": "rmsnorm"}
    link.update({"ax_cell_b": "2", "ax_cell_t": "0", "ax_cell_c": "5"})
    for key, value in link.items():
        app.query_params[key] = value
    _open(app)
    assert not app.error and not app.warning
    x = _example_stream(12)  # [4, 24, 576]
    channels = sorted(x.pow(2).mean(dim=(0, 1)).sqrt().topk(32).indices.tolist())  # [32]
    assert 507 in channels  # the massive-activation channel is among the 32 largest
    text = _text(app)
    assert f"largest RMS ({', '.join(str(c) for c in channels[:12])}, …). The" in text  # no "…."
    assert f"is in column {channels.index(507)} (channel 507)" in text
    largest = float(x.abs().max())  # grouped as the Dumps page writes the same entry
    assert f"The largest |x|, {round(largest):,}," in text and largest == round(largest)
    token = x[2, 0, channels].numpy()  # the clicked cell's row: sequence 2, the first token
    metrics = _metrics(app)  # shown to 4 significant digits, its power of ten written out
    mantissa, _, power = metrics["mean square"].partition("×10")
    shown = float(mantissa) * 10 ** int(
        power.translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-"))
    )
    assert shown == pytest.approx(float((token**2).mean()), rel=1e-3)
    assert power  # 2.213×10⁷, never "2.213e+07"
    assert metrics["cells pooled"] == "32"
    assert "**B·T = 4·24 = 96** mean squares" in text


def test_the_example_source_says_when_a_link_asks_for_more_than_it_holds(app):
    for key, value in {"ax_source": "example", "ax_batch": "9", "ax_d": "1000"}.items():
        app.query_params[key] = value
    _open(app)
    warnings = " ".join(w.value for w in app.warning)
    assert "`ax_batch` = 9 is more than the example dump holds: showing 4" in warnings
    assert "`ax_d` = 1000 is more than the example dump holds: showing 576" in warnings
    assert "All 576 channels of the dump at layer 12" in _text(app)
    assert "B·T·d = 36,864 cells is more than this page draws cell by cell" in _text(app)
    _set(app, "ax_layer", 30)  # the last block's output
    assert "All 576 channels of the dump at layer 30" in _text(app) and not app.exception
    _set(app, "ax_d", 1)  # one channel: the one of largest RMS, in the singular
    assert "Column 0 is channel 507 of the dump at layer 30, the one of largest RMS" in _text(app)


def test_the_batchnorm_experiments_say_they_are_synthetic_on_the_example(app):
    app.query_params["ax_source"] = "example"
    _open(app, ax_section="batchnorm")
    assert "BatchNorm's five experiments draw synthetic tensors" in _text(app)
    assert not app.exception


def test_the_heaviest_train_eval_link_waits_for_a_click_and_the_rest_is_drawn():
    """ax_steps at its maximum on the largest tensor: hundreds of times the default's
    work, so a link shows a button for experiment 3 and says why; the rest draws at once."""
    app = AppTest.from_file(APP, default_timeout=90)
    link = {"ax_section": "batchnorm", "ax_batch": "8", "ax_tokens": "64", "ax_d": "128"}
    app.query_params.update({"lang": "en", **link, "ax_steps": "1000"})
    app.switch_page("app_pages/axes.py").run()
    assert not app.exception
    button = app.button(key="ax_train_eval_run")
    assert button.label == "Run experiment 3"
    assert "about 320× the work of the default settings" in _text(app)
    assert "starts only when you press the button" in _text(app)
    with pytest.raises(AssertionError):
        _chart(app, "ax_train_eval")
    for key in ("ax_padding", "ax_small", "ax_one", "ax_causal"):
        assert _chart(app, key)["data"]
    button.click().run()
    assert _chart(app, "ax_train_eval")["data"]
    assert any(s.value.startswith("After 1000 steps") for s in app.success)


def test_the_heatmap_offers_its_data_and_the_box_diagram_offers_none(app):
    """The box beside the heatmap is a drawing of the [B, T, d] cube: its CSV held drawing
    coordinates under "scatter 1"; the heatmap's holds the tensor."""
    _open(app)
    ids = " ".join(b.proto.id for b in app.get("download_button"))
    assert "ax_heatmap_csv" in ids, ids
    assert "ax_box_csv" not in ids, ids


def test_nan_outputs_are_counted_and_explained_beside_the_blank_heatmap(app):
    """BatchNorm over one value per channel with ε = 0: every output is 0/0, a blank
    heatmap; the page says how many and why, as the Vector Lab does (and in Chinese)."""
    _open(app, ax_norm="batchnorm", ax_batch=1, ax_tokens=1, ax_eps=0.0)
    d = AxesSpec().d
    said = " ".join(w.value for w in app.warning)
    assert f"{d} of {d} outputs are NaN" in said and "divides 0 by 0" in said
    spec = AxesSpec(kind="batchnorm", batch=1, tokens=1, eps=0.0)
    zh = nan_note(axes_statistics(spec), "zh")
    counted = translate("axes.legend.nan_outputs", "zh", nan=f"{d:,}", total=f"{d:,}")
    assert zh == counted + translate("axes.legend.nan_cause", "zh")  # zh joins with no space
    _set(app, "ax_eps", 1e-5)
    assert not app.exception and "NaN" not in " ".join(w.value for w in app.warning)
