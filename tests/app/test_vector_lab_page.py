"""The Vector Lab driven through AppTest, from app.py, as a user would."""

import json
import re

import pytest


def _latex(at) -> str:
    return "\n".join(element.value for element in at.latex)


def _chart(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def test_default_page_is_the_vector_lab_with_the_textbook_numbers(app):
    assert not app.exception
    assert app.title[0].value == "Vector Lab"
    latex = _latex(app)
    assert "= 2.5" in latex and "1.25" in latex and "7.5 &= 1.25 + 2.5^2" in latex
    assert r"\left[-1.3416, -0.4472, 0.4472, 1.3416\right]" in latex


def test_rmsnorm_shows_its_output_and_the_comparison(app):
    app.selectbox(key="vl_norm").select("rmsnorm").run()
    assert not app.exception
    assert r"\left[0.3651, 0.7303, 1.0954, 1.4606\right]" in _latex(app)
    table = app.table[0].value
    assert table.loc["y", "RMSNorm"] == "[0.3651, 0.7303, 1.0954, 1.4606]"
    assert table.loc["⟨y, 1⟩", "LayerNorm"] == "0"
    assert "1 : 2 : 3 : 4" == table.loc["Ratios of yᵢ", "RMSNorm"]
    # the float32 outputs' cosine with x, 1 − 3.3×10⁻¹⁶, written as the note under it writes it
    cos = table.loc["cos(x, y)", "RMSNorm"]
    notes = " ".join(m.value for m in app.markdown)
    assert cos == "1 − 3.3×10⁻¹⁶" and f"cos(x, y) = {cos}" in notes


def test_a_tiny_rows_comparison_writes_every_cell_with_its_power_of_ten(app):
    """LayerNorm of [1, 2, 3]·10⁻³⁰ with ε = 10⁻⁵: (x − μ)/√(σ² + ε) ≈ ±10⁻³⁰/0.0031623
    = ±3.162×10⁻²⁸ (by hand); each cell as the cosine beside it writes its gap."""
    app.text_area(key="vl_text").input("1e-30, 2e-30, 3e-30").run()
    assert not app.exception
    table = app.table[0].value
    assert table.loc["y", "LayerNorm"].startswith("[−3.162×10⁻²⁸, 0, 3.162×10⁻²⁸")
    cells = table.to_numpy().ravel().tolist()
    assert not [cell for cell in cells if re.search(r"\de[-+]?\d", cell)], cells


def test_batchnorm_over_one_row_says_why_every_output_is_beta(app):
    app.selectbox(key="vl_norm").select("batchnorm").run()
    note = "BatchNorm over one row"
    assert not app.exception and any(note in info.value for info in app.info)
    app.text_area(key="vl_text").input("1, 2, 3, 4\n2, 2, 2, 2").run()
    assert not app.exception and not any(note in info.value for info in app.info)


def test_an_eps_float16_holds_as_zero_is_explained_as_no_eps(app):
    app.text_area(key="vl_text").input("0, 0, 0, 0").run()
    app.selectbox(key="vl_dtype").select("float16").run()
    app.selectbox(key="vl_compute").select("float16").run()
    app.text_input(key="vl_eps").input("1e-8").run()
    assert not app.exception
    shown = " ".join(w.value for w in app.warning)
    assert "ε = 1e-8 is 0 in float16" in shown and "σ² = 0 and ε = 0" in shown
    assert "outputs are inf or NaN" not in shown  # said once, by the ε = 0 explanation


def test_beta_field_only_for_norms_that_have_a_beta(app):
    keys = lambda: {box.key for box in app.text_input}  # noqa: E731
    assert "vl_beta" in keys()  # LayerNorm: γ and β
    app.text_input(key="vl_beta").input("0.5").run()
    app.selectbox(key="vl_norm").select("rmsnorm").run()
    assert not app.exception and "vl_beta" not in keys() and "vl_gamma" in keys()
    assert any("RMSNorm has no β" in caption.value for caption in app.caption)
    assert r"eta" not in _latex(app)
    assert r"\left[0.3651, 0.7303, 1.0954, 1.4606\right]" in _latex(app)  # β = 0.5 not added
    app.selectbox(key="vl_norm").select("layernorm").run()
    assert app.text_input(key="vl_beta").value == "0.5"  # kept while RMSNorm was shown


def test_chart_holds_the_input_and_output(app):
    spec = _chart(app)
    names = [trace.get("name") for trace in spec["data"]]
    assert "LayerNorm" in names and "RMSNorm (γ=1, β=0)" in names


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("1, 2, x", "`x` (row 1, position 3) is not a number"),
        ("", "The input is empty"),
        ("1 2 3\n4 5", "Rows have different lengths"),
        ("1 nan 3", "not a finite number"),
        ("1 inf", "not a finite number"),
        ("1 1e400", "beyond the range of a 64-bit float"),
        ("\n".join(["1 2"] * 65), "more than the 64 this page accepts"),
    ],
)
def test_bad_vectors_show_a_message_and_no_exception(app, text, fragment):
    app.text_area(key="vl_text").input(text).run()
    assert not app.exception
    assert any(fragment in error.value for error in app.error), [e.value for e in app.error]
    assert "Fix the input" in app.info[0].value
    # The page keeps working: a good vector afterwards computes again.
    app.text_area(key="vl_text").input("1, 2, 3, 4").run()
    assert not app.error and "7.5 &= 1.25 + 2.5^2" in _latex(app)


def test_value_beyond_float16_is_refused_when_stored_as_float16(app):
    app.selectbox(key="vl_dtype").select("float16").run()
    app.text_area(key="vl_text").input("1, 70000").run()
    assert not app.exception
    assert "cannot be stored in float16" in app.error[0].value


def test_an_overflowing_beta_in_half_precision_is_counted_and_the_paths_say_they_leave_it_out(
    app,
):
    app.selectbox(key="vl_dtype").select("float16").run()
    app.text_input(key="vl_beta").input("1e300").run()  # y = ∞ in every channel
    assert not app.exception
    assert "4 outputs are inf or NaN" in " ".join(w.value for w in app.warning)
    # the real paths compare the normalization alone: their verdicts are not about y + β
    assert any("before γ and β" in m.value for m in app.markdown)


def test_a_gamma_float32_holds_as_zero_is_named_with_the_type_it_is_zero_in(app):
    app.text_input(key="vl_gamma").input("1e-320").run()
    assert not app.exception and not app.error
    shown = " ".join(i.value for i in app.info)
    assert "γ = 1e-320 is 0 in float32" in shown and "that are 0 in float32: 1." in shown
    app.text_input(key="vl_gamma").input("1e-30").run()
    assert "is 0 in float32" not in " ".join(i.value for i in app.info)


def test_bad_eps_gamma_and_groups_are_explained(app):
    app.text_input(key="vl_eps").input("-1").run()
    assert "ε = `-1` is not accepted" in app.error[0].value
    app.text_input(key="vl_eps").input("1e-5").run()
    app.text_input(key="vl_gamma").input("1 2").run()
    assert "γ has 2 values but d = 4" in app.error[0].value
    app.text_input(key="vl_gamma").input("1, x, 1, 1").run()
    assert app.error[0].value.startswith("γ: `x` (value 2) is not a number")
    app.text_input(key="vl_gamma").input("1").run()
    app.selectbox(key="vl_norm").select("groupnorm").run()
    app.number_input(key="vl_groups").set_value(3).run()
    assert "3 does not divide 4" in app.error[0].value
    assert not app.exception


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


def test_all_zero_outputs_make_no_claim_about_direction(app):
    app.selectbox(key="vl_menu").select("plus_minus_300").run()
    notes = " ".join(m.value for m in app.markdown if m.value.startswith("- "))
    assert "cos(x, y) = NaN" not in notes and "∞ = ∞" not in notes
    assert "LayerNorm's output on this row is all 0: σ² = ∞ in float16" in notes
    assert "has no direction" in notes
    compare = next(t.value for t in app.table if "cos(x, y)" in t.value.index)
    assert compare.loc["cos(x, y)", "LayerNorm"] == "—"
    latex_captions = " ".join(c.value for c in app.caption)
    assert "not checkable on this row: RMS², σ² overflowed to ∞ in float16" in latex_captions


def test_each_kind_states_its_own_default_eps(app):
    app.selectbox(key="vl_norm").select("rmsnorm").run()
    help_text = app.text_input(key="vl_eps").help
    assert "eps=None" in help_text and "ε = 1.19e-7 for float32 inputs" in help_text
    assert "LlamaRMSNorm defaults to 1e-6" in help_text
    app.selectbox(key="vl_norm").select("layernorm").run()
    assert "use ε = 1e-5" in app.text_input(key="vl_eps").help


def test_dyt_alpha_help_says_whose_default_it_is(app):
    app.selectbox(key="vl_norm").select("dyt").run()
    help_text = app.number_input(key="vl_alpha").help
    assert "α₀ = 0.5 is the paper's default for non-LLM models" in help_text
    assert "tunes α₀ per model width" in help_text and "arXiv:2503.10622" in help_text


def test_bfloat16_storage_rounding_is_reported(app):
    app.selectbox(key="vl_menu").select("bf16_rounding").run()
    notes = [info.value for info in app.info if "changed 3 of the input's numbers" in info.value]
    assert notes and "e.g. 1000.5 → 1000." in notes[0]  # as a box writes it, not 1000.0


def test_the_rounding_note_counts_with_commas_writes_the_true_minus_and_skips_random_draws(app):
    """Typed values float32 changes are counted (1,024 of them) and quoted with the page's
    minus; a random draw's float64 values, which nobody saw, are not quoted at every draw."""
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


@pytest.mark.parametrize("kind", ["batchnorm", "instancenorm", "groupnorm", "dyt"])
def test_every_norm_kind_renders(app, kind):
    app.selectbox(key="vl_menu").select("tokens").run()
    app.selectbox(key="vl_norm").select(kind).run()
    assert not app.exception and not app.error
    assert "y" in _latex(app)


def test_random_vectors(app):
    app.segmented_control(key="vl_source").set_value("random").run()
    app.number_input(key="vl_d").set_value(512).run()
    assert not app.exception
    assert "d = 512" in _latex(app)


def test_language_switch_changes_labels(app):
    app.selectbox(key="language_select").select("zh").run()
    assert not app.exception
    assert app.title[0].value == "向量实验室"
    assert app.text_area(key="vl_text").label == "向量（每行一个）"
    app.text_area(key="vl_text").input("1, a").run()
    assert "不是数字" in app.error[0].value


def test_share_link_query_restores_state():
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"lang": "zh", "vl_text": "2, 4, 6", "vl_norm": "RMSNorm"})
    at.run()
    assert not at.exception
    assert at.title[0].value == "向量实验室"
    assert at.selectbox(key="vl_norm").value == "rmsnorm"
    assert "d = 3" in _latex(at)


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


def test_zero_variance_with_eps_zero_is_explained_not_blamed_on_precision(app):
    app.text_area(key="vl_text").input("5, 5, 5").run()
    app.text_input(key="vl_eps").input("0").run()
    assert not app.exception
    assert any("0 · ∞ = NaN" in w.value for w in app.warning)
    assert not any("float32: y =" in block.value for block in app.code)


def test_pooled_norms_do_not_show_the_rows_own_statistics(app):
    app.selectbox(key="vl_menu").select("tokens").run()
    app.selectbox(key="vl_norm").select("batchnorm").run()
    latex = _latex(app)
    assert r"\mu_{c}" in latex and r"\sigma^2 = \frac{1}{d}" not in latex
    assert app.dataframe  # the per-channel statistics table


def test_the_path_the_steps_run_is_said_once_and_never_claims_an_upcast_of_float32(app):
    """All float32: one sentence says so ("Everything here is float32"); the steps' path is
    named where a half precision is in play, and float32 statistics say what is upcast."""
    captions = " ".join(c.value for c in app.caption)
    assert (
        "Everything here is float32" in captions and "The worked steps, the chart" not in captions
    )
    assert "Statistics: float32 (a half-precision input is upcast first)." in captions
    app.selectbox(key="vl_dtype").select("float16").run()
    captions = " ".join(c.value for c in app.caption)
    assert (
        "The worked steps, the chart and the comparison run float32 (a half-precision" in captions
    )


def test_pooled_statistics_are_counted_from_1_as_the_page_counts_channels(app):
    """The GroupNorm table numbered its groups 0 and 1 beside "channel 1 … 8"."""
    app.text_area(key="vl_text").input("3, -1, 4, 1, 5, 9, 2, 6").run()
    app.selectbox(key="vl_norm").select("groupnorm").run()
    app.number_input(key="vl_groups").set_value(2).run()
    (table,) = [frame.value for frame in app.dataframe if "rstd" in frame.value.columns]
    assert list(table.index) == [1, 2] and table.index.name == "group"
    app.selectbox(key="vl_norm").select("batchnorm").run()
    (table,) = [frame.value for frame in app.dataframe if "rstd" in frame.value.columns]
    assert list(table.index) == list(range(1, 9)) and table.index.name == "channel"
