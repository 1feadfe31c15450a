"""The Activation dumps page through AppTest, on dumps it reads: without a file, the upload's
limit and privacy said; an uploaded dump's diagnostics checked against numbers computed here
with torch in float64; norm pairs fitted with DyT; odd tensors, non-finite values counted,
.pt, .npz and .npy uploads read, and the page in Chinese.  Uploads go in through ``upload``
(tests/app/conftest.py)."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
import torch

from engine.dumps.limits import UPLOAD_LIMIT_MB
from tests.app.dump_uploads import (
    npy_bytes,
    npz_bytes,
    open_dumps_page,
    page_text,
    pt_bytes,
    safetensors_bytes,
    shown_cells,
    subheaders,
)
from tests.dumps import dump_files as files
from ui import i18n
from ui.i18n import translate


def _chart(app, title: str) -> dict:
    for chart in app.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        if spec["layout"].get("title", {}).get("text") == title:
            return spec
    raise AssertionError(f"no chart titled {title!r}")


def _array(value) -> np.ndarray:
    """A plotly array as AppTest gives it: a list, or base64 {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict):
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return data.reshape([int(n) for n in str(shape).split(",")]) if shape else data
    return np.asarray(value, dtype=float)


def _number_after(label: str, text: str) -> float:
    match = re.search(re.escape(label) + r"\s*(−?-?[\d.,]+(?:e[+-]?\d+)?)", text)
    assert match, (label, text)
    return float(match.group(1).replace("−", "-").replace(",", ""))


def test_without_a_file_the_page_states_the_limit_and_that_the_file_stays_private(app, upload):
    upload(None)
    open_dumps_page(app)
    assert app.title[0].value == "Activation dumps"
    privacy = " ".join(c.value for c in app.caption)
    assert f"Up to {UPLOAD_LIMIT_MB} MB per file" in privacy
    assert "shown to no other visitor" in privacy and "never put in the share link" in privacy
    assert subheaders(app) == [] and not app.error


# The report's sections (ui/url/ DUMP_SECTIONS) and the headings each shows.
SECTIONS = {
    "stream": ["Residual stream: RMS per layer and token", "What this stream shows"],
    "massive": ["Massive activations"],
    "centering": ["LayerNorm vs RMSNorm on this model"],
    "channels": ["Channels: what BatchNorm would pool"],
    "norms": ["A norm's input against its output: one token, then the DyT curve"],
}


def _show(app, section: str):
    app.segmented_control(key="du_section").set_value(section).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    return app


def test_an_uploaded_dump_shows_every_section_with_numbers_torch_agrees_with(app, upload):
    x = files.stream(layers=5, batch=2, tokens=7, d=16)  # [L, B, T, d], 2500 at token 0, ch 3
    upload("hidden.safetensors", safetensors_bytes(files.hf_names(x)))
    open_dumps_page(app)
    for section, headings in SECTIONS.items():
        assert subheaders(_show(app, section)) == ["What was read", *headings, "Downloads"]
        tables = [b for b in app.get("download_button") if "dumps_download_" in b.proto.id]
        assert len(tables) == 11  # ten tables as CSV and the JSON summary (besides each chart's)
    _show(app, "stream")
    text = page_text(app)
    assert "`hidden_states.{i}`" in text and "L = 5 points of the stream, B = 2, T = 7" in text
    assert "All 1,120 values are finite" in text
    # every token's RMS, drawn on a log scale: sqrt(mean x^2) in float64 by hand
    heatmap = _chart(app, "RMS of each token at each layer")
    expected = x[:, 0].double().pow(2).mean(-1).sqrt().numpy()  # [L, T]
    np.testing.assert_allclose(10 ** _array(heatmap["data"][0]["z"]), expected, rtol=1e-6)
    # massive activations: |a| > 100 and > 1000x the layer's median |a| (Sun et al. 2024)
    _show(app, "massive")
    values = x.double().numpy()
    threshold = np.maximum(100.0, 1000.0 * np.median(np.abs(values.reshape(5, -1)), axis=1))
    layer, batch, token, channel = np.nonzero(np.abs(values) > threshold[:, None, None, None])
    table = next(d.value for d in app.dataframe if "|a| / median" in d.value.columns)
    assert sorted(zip(table["layer"], table["sequence"], table["token"], table["channel"])) == (
        sorted(zip(layer, batch, token, channel))
    )
    assert len(table) == 6 and set(table["value"]) == {2500.0}
    # one token's LayerNorm vs RMSNorm: the middle layer (2), sequence 0, token 0
    _show(app, "centering")
    token = x[2, 0, 0].double()
    ln = torch.nn.functional.layer_norm(token, (16,), eps=1e-5)
    rms = token / token.pow(2).mean().add(1e-5).sqrt()
    detail = next(m.value for m in app.markdown if m.value.startswith("**Layer 2, sequence 0"))
    assert _number_after("μ =", detail) == pytest.approx(token.mean().item(), abs=1e-4)
    assert _number_after("RMS =", detail) == pytest.approx(token.pow(2).mean().sqrt().item(), 1e-4)
    difference = (ln - rms).pow(2).mean().sqrt().item()
    assert _number_after("RMSNorm(x) is", detail) == pytest.approx(difference, rel=1e-3)


def test_norm_pairs_get_a_dyt_fit_and_a_dump_without_them_says_so(app, upload):
    x = files.stream(layers=4, batch=1, tokens=9, d=16)
    upload("hooks.safetensors", safetensors_bytes(files.module_names(x)), "hooks")
    open_dumps_page(app, section="norms")
    assert "This dump holds the input and the output of 4 norms" in page_text(app)
    fits = next(d.value for d in app.dataframe if "α" in d.value.columns)
    assert list(fits["norm"]) == [f"model.layers.{i}.input_layernorm" for i in range(4)]
    upload("hidden.safetensors", safetensors_bytes(files.hf_names(x)), "plain")
    app.run()
    assert "holds no norm's input and output together" in app.info[0].value


def _odd_files() -> dict[str, bytes]:
    x = files.stream(layers=4, batch=1, tokens=5, d=8)
    layers = {f"h.{i}": x[i] for i in range(4)}
    extreme = np.full((5, 8), 1.7e308)
    extreme[:, ::2] *= -1
    scalars = {**{k: v[0].numpy() for k, v in layers.items()}, "ln.input": np.float32(1.0)}
    return {
        "grad.pt": pt_bytes({k: v.clone().requires_grad_() for k, v in layers.items()}),
        "param.pt": pt_bytes({k: torch.nn.Parameter(v.clone()) for k, v in layers.items()}),
        "extreme.npz": npz_bytes({f"h.{i}": extreme for i in range(4)}),
        "scalars.npz": npz_bytes({**scalars, "ln.output": np.float32(2.0)}),
    }


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # ±1.7e308: squares past float64
@pytest.mark.parametrize("name", ["grad.pt", "param.pt", "extreme.npz", "scalars.npz"])
def test_odd_tensors_are_read_whole_page_without_an_exception(app, upload, name):
    upload(name, _odd_files()[name])
    open_dumps_page(app)
    for section in SECTIONS:
        assert "Downloads" in subheaders(_show(app, section))


def test_non_finite_values_are_counted_never_dropped_silently(app, upload):
    x = files.stream(layers=4, batch=1, tokens=5, d=8)
    x[1, 0, 2, 5] = float("nan")
    x[3, 0, 4, 0] = float("inf")
    upload("broken.safetensors", safetensors_bytes(files.hf_names(x)))
    open_dumps_page(app)
    warning = app.warning[0].value
    assert "1 NaN, 1 +inf and 0 −inf among 160 values, on 2 layers" in warning


def test_the_page_in_chinese(app, upload):
    upload("hidden.safetensors", safetensors_bytes(files.hf_names(files.stream())))
    app.query_params["lang"] = "zh"
    app.session_state["language"] = "zh"
    open_dumps_page(app, section="massive")
    assert app.title[0].value == "激活转储"
    assert subheaders(app)[0] == "读到了什么" and "巨量激活" in subheaders(app)
    assert "What was read" not in page_text(app)


@pytest.mark.parametrize(
    "name, make, stream",
    [
        (  # a tuple's stream is said in words, not as its template {i}
            "hidden.pt",
            lambda x: pt_bytes(tuple(x[i].clone() for i in range(5))),
            "the file's tensors in their order, `0` to `4`",
        ),
        (
            "acts.npz",
            lambda x: npz_bytes({f"layer_{i}": x[i].numpy() for i in range(5)}),
            "layer_{i}",
        ),
        ("stack.npy", lambda x: npy_bytes(x.numpy()), "stack"),  # one [L, B, T, d] array
    ],
)
def test_torch_and_numpy_uploads_are_read_too(app, upload, name, make, stream):
    x = files.stream(layers=5, batch=2, tokens=7, d=16)
    upload(name, make(x))
    open_dumps_page(app)
    text = page_text(app)
    said = stream if "`" in stream else f"`{stream}`"
    assert said in text and "B = 2, T = 7, d = 16" in text and not app.error


@pytest.mark.parametrize(
    "lang, short, full",
    [("en", "outliers", "outliers (left out)"), ("zh", "离群值", "离群值（未参与拟合）")],
)
def test_the_dyt_table_keeps_its_nine_columns_narrow(app, upload, lang, short, full):
    """At 1280 px its last column was cut off: long headers are short, the full one their
    tooltip, and the fit's numbers have 5 significant digits."""
    x = files.stream(layers=4, batch=1, tokens=9, d=16)
    upload("hooks.safetensors", safetensors_bytes(files.module_names(x)), "hooks")
    app.query_params["lang"] = lang
    app.session_state["language"] = lang
    open_dumps_page(app, section="norms")
    table = next(d for d in app.dataframe if "α" in d.value.columns)
    assert short in table.value.columns and len(table.value.columns) == 9
    config = json.loads(table.proto.columns)
    assert config[short]["help"] == full
    shown = shown_cells(table)
    header = {c: translate(f"dumps.col.{c}", lang) for c in ("layer", "points", "r2_all")}
    assert list(shown[header["points"]]) == ["144", "144", "143", "143"]  # counts ...
    assert list(shown[short]) == ["0", "0", "1", "1"]
    assert list(shown[header["layer"]]) == ["0", "1", "2", "3"]  # ... and places as typed
    assert shown[header["r2_all"]][3] == "−3,185.9"  # grouped, with the true minus
    assert table.value[header["r2_all"]][3] < -3185  # the number under it: sorted by value
    assert all(len(a) <= 7 for a in shown["α"])  # one count of decimals, 5 digits at most
    assert len({len(a.partition(".")[2]) for a in shown["α"]}) == 1


def test_a_two_axis_upload_says_it_was_read_as_one_layer_and_how_to_give_several(app, upload):
    """A random [64, 64] array was read as one layer without a word; a stack of layers needs
    no note."""
    upload("random.npy", npy_bytes(np.random.default_rng(0).standard_normal((64, 64))))
    open_dumps_page(app)
    (note,) = [i.value for i in app.info if "One point of the stream" in i.value]
    assert "`random` is read as [T, d], T = 64, d = 64, so nothing" in note
    assert "[L, T, d] or [L, B, T, d]" in note
    upload("stack.npy", npy_bytes(np.random.default_rng(0).standard_normal((3, 64, 64))))
    app.run()
    assert not [i for i in app.info if "One point of the stream" in i.value]


def test_a_table_too_large_to_style_keeps_its_printf_formats(app, upload, monkeypatch):
    """Past ``STYLED_CELLS`` (pandas refuses a Styler of 262,144 cells, and writes about
    10 µs a cell) a table is drawn with Streamlit's printf formats, grouped, never refused."""
    monkeypatch.setattr("ui.views.dumps_tables.STYLED_CELLS", 10)
    x = files.stream(layers=4, batch=1, tokens=9, d=16)
    upload("hooks.safetensors", safetensors_bytes(files.module_names(x)), "hooks")
    open_dumps_page(app, section="norms")
    table = next(d for d in app.dataframe if "α" in d.value.columns)
    formats = {
        n: c.get("type_config", {}).get("format")
        for n, c in json.loads(table.proto.columns).items()
    }
    assert formats["points"] == "%,d" and formats["layer"] == "%d" and formats["α"]
    assert not table.proto.arrow_data.styler.display_values


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_infinite_value_is_no_massive_activation_and_the_section_draws(app, upload, lang):
    """A float32 upload holding +inf: the massive section counts finite values only (the
    page says NaN/inf are left out), so it lists none rather than failing on an empty list."""
    x = np.random.default_rng(0).standard_normal((3, 4, 8)).astype(np.float32)
    x[1, 2, 3] = np.inf
    upload("one_inf.npy", npy_bytes(x))
    app.session_state["language"] = lang  # as the sidebar's language choice sets it
    open_dumps_page(app, section="massive")
    assert translate("dumps.no_massive", lang) in page_text(app)


@pytest.mark.parametrize(
    "lang, headers", [("en", ["entry", "why not used"]), ("zh", ["条目", "未使用的原因"])]
)
def test_the_entries_a_stream_leaves_out_are_listed_under_headers_in_the_pages_language(
    app, lang, headers, monkeypatch
):
    """The example read as the final norm's input: the table of entries not used had its
    headers translated twice ("dumps.col.why it is not used"; in Chinese both)."""
    # AppTest names a select box's value outside the app's session, in the default language
    monkeypatch.setattr(i18n, "DEFAULT_LANGUAGE", lang)
    app.query_params["lang"] = lang
    app.session_state["language"] = lang
    open_dumps_page(app, source="example")
    app.session_state["dumps_stream_example"] = "model.norm.input"
    app.run()
    assert not app.exception
    tables = [df.value for df in app.dataframe if len(df.value.columns) == 2]
    assert [list(frame.columns) for frame in tables] == [headers]
