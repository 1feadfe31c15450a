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
    assert table.loc["⟨y,\u00a01⟩", "LayerNorm"] == "0"
    assert "1 : 2 : 3 : 4" == table.loc["Ratios of yᵢ", "RMSNorm"]
    # the float32 outputs' cosine with x, written as the note under it writes it: its gap to 1
    # to 50 digits (mpmath) is 3.1×10⁻¹⁶; float64's cosine itself held 1 − 3.3×10⁻¹⁶
    import mpmath
    import torch

    out = torch.nn.functional.rms_norm(torch.tensor([1.0, 2.0, 3.0, 4.0]), (4,), eps=1e-5)
    y = [mpmath.mpf(float(v)) for v in out]  # PyTorch's own float32 outputs
    x = [mpmath.mpf(v) for v in (1, 2, 3, 4)]
    with mpmath.workdps(50):
        dot = mpmath.fsum(a * b for a, b in zip(x, y))
        gap = 1 - dot / (mpmath.sqrt(mpmath.fsum(a * a for a in x)) * mpmath.norm(y))
    assert mpmath.nstr(gap, 2) == "3.1e-16"
    cos = table.loc["cos(x, y)", "RMSNorm"]
    notes = " ".join(m.value for m in app.markdown)
    assert cos == "1 − 3.1×10⁻¹⁶" and f"cos(x, y) = {cos}" in notes


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
        (",,,", "The input is empty"),  # no number: it raised "non-empty last axis"
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
    assert "as the message above says" in app.info[0].value
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


def test_dyt_is_not_said_to_take_statistics_in_the_dtype_it_computes_in(app):
    """The caption under the dtypes said "Statistics: float16 (sum, then divide, …)" of DyT,
    which takes none (engine/norms/reference.py, ``dyt``: tanh(α·x) in the compute dtype)."""
    app.selectbox(key="vl_compute").select("float16")
    app.selectbox(key="vl_norm").select("dyt").run()
    captions = " ".join(c.value for c in app.caption)
    assert "DyT takes no statistics: tanh(α·x), γ and β are computed in float16." in captions
    assert "Statistics: float16" not in captions
    app.selectbox(key="vl_norm").select("rmsnorm").run()
    captions = " ".join(c.value for c in app.caption)
    assert "Statistics: float16 (sum, then divide" in captions and "DyT" not in captions


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


def test_presenting_the_steps_run_beside_the_chart_not_under_an_empty_third():
    """Presenting, the inputs sit closed in their box; the left third of the page held only
    that box, and a room saw the chart three screens down.  The steps now run in one column
    and the chart and what follows it in the next, from the top."""
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"lang": "en", "present": "on"})
    at.run()
    assert not at.exception
    steps, results = [c for c in at.columns if c.get("latex") or c.get("plotly_chart")]
    assert len(steps.get("latex")) > 5 and not steps.get("plotly_chart")
    assert results.get("plotly_chart") and results.get("table") and not results.get("latex")
    assert [h.value for h in steps.get("subheader")] == ["Step by step"]


def test_entries_whose_squares_round_to_zero_with_eps_zero_are_explained(app):
    """1e-30, 2e-30, 4e-30 with ε = 0: σ² is 0 in float32 and the outputs ±∞, with a warning
    that says why (their squares) and what ε is for, not only "3 outputs are inf or NaN"."""
    app.text_input(key="vl_eps").input("0").run()
    app.text_area(key="vl_text").input("1e-30, 2e-30, 4e-30").run()
    assert not app.exception
    said = " ".join(w.value for w in app.warning).replace("\u00a0", " ")
    assert "σ² = 0 in float32 though the entries differ" in said, said
    assert "1.401×10⁻⁴⁵" in said and "outputs are inf or NaN" not in said
