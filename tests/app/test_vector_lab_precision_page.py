"""The Vector Lab's precision story through AppTest: storage rounding, the half-precision
presets and where each path overflows, the resolution of each type."""

import json

import pytest


def _latex(at) -> str:
    return "\n".join(element.value for element in at.latex)


def _chart(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def _expanders(app) -> dict[str, str]:
    """Each precision path's expander label -> the text inside it."""
    out = {}
    for expander in app.expander:
        texts = [e.value for kind in ("error", "warning", "success") for e in expander.get(kind)]
        out[expander.label] = " ".join(texts)
    return out


def _path(app, name: str) -> tuple[str, str]:
    """(outcome, text) of the path whose label starts with ``name``."""
    label, text = next((k, v) for k, v in _expanders(app).items() if k.startswith(name + ":"))
    return label.split(": ")[-1], text


def test_textbook_preset_overflows_only_where_the_sum_is_stored_in_half(app):
    app.selectbox(key="vl_menu").select("textbook_4096x100").run()
    assert not app.exception
    assert _path(app, "float32 statistics (upcast)")[0] == "right"
    assert _path(app, "PyTorch half ops, no upcast")[0] == "right"  # mean of squares: 10000
    assert _path(app, "fused PyTorch op on the half tensor")[0] == "right"
    outcome, text = _path(app, "sum, then divide, in half")
    assert outcome == "silently 0"
    assert "Σxᵢ² is stored in float16: 4.096×10⁷ is beyond float16's largest finite" in text
    assert "So RMS² = ∞ and rstd = 1/√∞ = 0: every output xᵢ · 0 is 0" in text
    outcome, text = _path(app, "naive kernel: a running half-precision sum")
    assert (
        outcome == "silently 0"
        and "passes float16's largest finite number 65,504 at term 7: 70,000" in text
    )
    assert "x = [1, 1, 1" not in text  # the chart shows the steps' (sum-then-divide) zeros


def test_layernorm_sum_overflow_gives_mu_infinite_and_nan(app):
    app.selectbox(key="vl_menu").select("textbook_4096x100").run()
    app.selectbox(key="vl_norm").select("layernorm").run()
    assert not app.exception
    outcome, text = _path(app, "sum, then divide, in half")
    assert outcome == "inf / NaN"
    assert "Σxᵢ is stored in float16: the sum 4.096×10⁵ is beyond float16's largest finite" in text
    assert "So μ = ∞: every xᵢ − μ is infinite, and the outputs are NaN (4,096 of 4,096)" in text
    outcome, text = _path(app, "naive kernel: a running half-precision sum")
    assert "The running sum Σxᵢ" in text and "at term 679: 67,900 is stored as ∞" in text
    names = [trace.get("name") for trace in _chart(app)["data"]]
    assert "LayerNorm: inf / NaN" in names
    # a constant row: F.layer_norm leaves a residue where the exact output is 0
    notes = " ".join(info.value for info in app.info)
    assert "F.layer_norm returns 0.0009766 for every entry" in notes


def test_squared_deviations_overflow_silently_for_layernorm(app):
    app.selectbox(key="vl_menu").select("plus_minus_300").run()
    assert not app.exception
    outcome, text = _path(app, "sum, then divide, in half")
    assert outcome == "silently 0"
    assert "(x₁ − μ)² = (−300)² = 90,000 is beyond float16's largest finite number 65,504" in text
    assert "The number squared is the deviation x₁ − μ (μ = 0), not the entry" in text
    assert "So σ² = ∞ and rstd = 1/√∞ = 0: every output (xᵢ − μ) · 0 is 0" in text
    assert "are NaN" not in text  # the old page claimed NaN for every LayerNorm overflow
    outcome, text = _path(app, "PyTorch half ops, no upcast")
    assert outcome == "silently 0"
    assert "σ² = 90,000 is summed in float32 but stored in float16" in text
    assert _path(app, "fused PyTorch op on the half tensor")[0] == "right"


def test_massive_activation_squares_the_deviation_not_the_entry(app):
    app.selectbox(key="vl_menu").select("massive_activation").run()
    assert not app.exception
    outcome, text = _path(app, "PyTorch half ops, no upcast")
    assert outcome == "silently 0"
    assert "x₁² = (1,000)² = 10⁶ is beyond float16's largest finite number 65,504" in text
    app.selectbox(key="vl_norm").select("layernorm").run()
    assert _path(app, "PyTorch half ops, no upcast")[0] == "right"  # x.var accumulates in float32
    outcome, text = _path(app, "sum, then divide, in half")
    assert "(x₁ − μ)² = (999.7561)² = 9.995×10⁵" in text and "not the entry x₁ = 1,000" in text


def test_running_half_sum_of_ones_stalls_at_2048(app):
    app.selectbox(key="vl_menu").select("ones_4096").run()
    assert not app.exception
    outcome, text = _path(app, "naive kernel: a running half-precision sum")
    assert outcome == "wrong"
    assert "stalls at 2,048: adding term 2,049 (1) to the stored 2,048 should give 2,049" in text
    assert "the next float16 number above 2,048 is 2,048 + 2" in text
    assert "RMS² = 0.5 instead of 1" in text
    assert all(_path(app, name)[0] == "right" for name in ("sum, then divide, in half",))
    captions = " ".join(c.value for c in app.caption)
    assert "Adding 1 again and again to a running float16 sum stops at 2,048" in captions
    assert "magnitude 256 or more squares to ∞" in captions


def test_zero_variance_preset_says_it_once_for_every_path(app):
    app.selectbox(key="vl_menu").select("zero_variance").run()
    assert not app.exception
    warnings = [w.value for w in app.warning]
    assert any("of the formula is 0 · ∞ = NaN — in any precision" in w for w in warnings)
    assert any("nn.LayerNorm / nn.functional.layer_norm use ε = 1e-5" in w for w in warnings)
    assert set(_expanders(app)) >= {"sum, then divide, in half: inf / NaN"}


@pytest.mark.parametrize(
    "dtype, digits, eps",
    [("float16", "3.3", "2⁻¹⁰ ≈ 1 + 0.0009766"), ("bfloat16", "2.4", "2⁻⁷ ≈ 1 + 0.007812")],
)
def test_resolution_is_significant_decimal_digits(app, dtype, digits, eps):
    app.selectbox(key="vl_dtype").select(dtype).run()
    assert not app.exception
    text = " ".join(m.value for m in app.markdown)
    assert f"about {digits} significant decimal digits" in text
    assert f"the next {dtype} number after 1 is 1 + {eps}" in text
    assert "10^−" not in text


def test_float32_resolution_and_no_half_story(app):
    text = " ".join(m.value for m in app.markdown)
    assert "**float32**: largest finite number 3.403×10³⁸; 24 significand bits, about 7.2" in text
    # 2⁻²³ = 1.1920929e-07, written as the largest number before it is, never "1.19e-7"
    assert "the next float32 number after 1 is 1 + 2⁻²³ ≈ 1 + 1.192×10⁻⁷." in text
    assert not app.expander or all(": right" not in e.label for e in app.expander)


def test_bfloat16_storage_rounding_is_reported(app):
    app.selectbox(key="vl_menu").select("bf16_rounding").run()
    notes = [info.value for info in app.info if "changed 3 of the input's numbers" in info.value]
    assert notes and "e.g. 1000.5 → 1000." in notes[0]  # as a box writes it, not 1000.0


def test_the_rounding_note_counts_with_commas_writes_the_true_minus_and_skips_random_draws(app):
    """Typed values float32 changes are counted (1,024 of them) and quoted with the page's
    minus; a random draw's float64 values, which nobody saw, are not quoted at every draw,
    and when they are too small for the storage, they are said to be drawn, not typed."""
    app.text_area(key="vl_text").input(", ".join(["0.1"] * 1024)).run()
    notes = [info.value for info in app.info if "of the input's numbers" in info.value]
    assert notes and "changed 1,024 of the input's numbers" in notes[0], notes
    app.text_area(key="vl_text").input("-0.1, 1").run()  # float32 stores −0.10000000149…
    notes = [info.value for info in app.info if "of the input's numbers" in info.value]
    assert notes and "e.g. −0.1 → −0.10000000149011612." in notes[0], notes
    app.text_area(key="vl_text").input("1e-320, 1").run()  # flushed to 0: said once, not twice
    said = [info.value for info in app.info]
    assert any("too small for float32" in note for note in said), said
    assert not any("of the input's numbers" in note for note in said), said
    app.segmented_control(key="vl_source").set_value("random").run()
    app.number_input(key="vl_d").set_value(4096).run()
    assert not app.exception and not app.error
    assert not [info.value for info in app.info if "of the input's numbers" in info.value]
    app.selectbox(key="vl_dtype").set_value("float16").run()
    app.number_input(key="vl_scale").set_value(1e-9).run()  # drawn below float16's smallest
    said = [i.value for i in app.info if "too small for float16" in i.value]
    assert len(said) == 1, said
    assert said[0].startswith("4,096 drawn values are too small for float16"), said
    assert said[0].endswith("a larger scale or mean shift keeps them."), said


def test_layernorm_in_float16_overflows_only_where_its_formula_does(app):
    # 300..303: x^2 would overflow float16, but LayerNorm squares x - mu, which is small.
    app.text_area(key="vl_text").input("300, 301, 302, 303").run()
    app.selectbox(key="vl_dtype").select("float16").run()
    app.selectbox(key="vl_compute").select("float16").run()
    assert not app.exception and not app.error
    paths = [label for label in _expanders(app) if label.startswith(("float32 ", "sum,", "naive"))]
    assert len(paths) == 3 and all(label.endswith(": right") for label in paths)
    app.selectbox(key="vl_norm").select("rmsnorm").run()  # RMSNorm does square x: overflow
    outcome, text = _path(app, "sum, then divide, in half")
    assert outcome == "silently 0" and "x₁² = (300)² = 90,000 is beyond" in text
