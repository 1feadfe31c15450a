"""The Vector Lab driven through AppTest, from app.py, as a user would."""

import json

import pytest


def _latex(at) -> str:
    return "\n".join(element.value for element in at.latex)


def _chart(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def test_default_page_is_the_vector_lab_with_the_textbook_numbers(app):
    assert not app.exception
    assert app.title[0].value == "Vector Lab"
    latex = _latex(app)
    assert "= 2.5" in latex and "1.25" in latex and "7.5 = 1.25 + 2.5^2" in latex
    assert r"\left[-1.3416, -0.4472, 0.4472, 1.3416\right]" in latex


def test_rmsnorm_shows_its_output_and_the_comparison(app):
    app.selectbox(key="vl_norm").select("rmsnorm").run()
    assert not app.exception
    assert r"\left[0.3651, 0.7303, 1.0954, 1.4606\right]" in _latex(app)
    table = app.table[0].value
    assert table.loc["y", "RMSNorm"] == "[0.3651, 0.7303, 1.0954, 1.4606]"
    assert table.loc["⟨y, 1⟩", "LayerNorm"] == "0"
    assert "1 : 2 : 3 : 4" == table.loc["Ratios y₁ : y₂ : …", "RMSNorm"]


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
    assert not app.error and "7.5 = 1.25 + 2.5^2" in _latex(app)


def test_value_beyond_float16_is_refused_when_stored_as_float16(app):
    app.selectbox(key="vl_dtype").select("float16").run()
    app.text_area(key="vl_text").input("1, 70000").run()
    assert not app.exception
    assert "cannot be stored in float16" in app.error[0].value


def test_bad_eps_gamma_and_groups_are_explained(app):
    app.text_input(key="vl_eps").input("-1").run()
    assert "ε = `-1` is not accepted" in app.error[0].value
    app.text_input(key="vl_eps").input("1e-5").run()
    app.text_input(key="vl_gamma").input("1 2").run()
    assert "γ has 2 values but d = 4" in app.error[0].value
    app.text_input(key="vl_gamma").input("1").run()
    app.selectbox(key="vl_norm").select("groupnorm").run()
    app.number_input(key="vl_groups").set_value(3).run()
    assert "3 does not divide 4" in app.error[0].value
    assert not app.exception


def test_fp16_overflow_preset_explains_and_fixes(app):
    app.selectbox(key="vl_preset").select("fp16_overflow").run()
    assert not app.exception
    errors = " ".join(error.value for error in app.error)
    assert "sum of squares Σxᵢ² = 4.096e+07" in errors and "625.3×" in errors
    assert "every output is 0" in errors
    code = " ".join(block.value for block in app.code)
    assert "float32: y = [1, 1, 1" in code


def test_layernorm_fp16_overflow_marks_nan_in_the_chart(app):
    app.selectbox(key="vl_preset").select("fp16_overflow").run()
    app.selectbox(key="vl_norm").select("layernorm").run()
    assert any("inf or NaN" in warning.value for warning in app.warning)
    names = [trace.get("name") for trace in _chart(app)["data"]]
    assert "LayerNorm: inf / NaN" in names


def test_bfloat16_storage_rounding_is_reported(app):
    app.selectbox(key="vl_preset").select("bf16_rounding").run()
    assert any("changed 3 of the typed numbers" in info.value for info in app.info)


@pytest.mark.parametrize("kind", ["batchnorm", "instancenorm", "groupnorm", "dyt"])
def test_every_norm_kind_renders(app, kind):
    app.selectbox(key="vl_preset").select("tokens").run()
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
    # 300..303: x^2 would overflow float16, but LayerNorm never forms x^2: it is finite.
    app.text_area(key="vl_text").input("300, 301, 302, 303").run()
    app.selectbox(key="vl_dtype").select("float16").run()
    app.selectbox(key="vl_compute").select("float16").run()
    assert not app.exception and not app.error
    assert any("No overflow" in s.value for s in app.success)
    app.selectbox(key="vl_norm").select("rmsnorm").run()  # RMSNorm does square: overflow
    assert "squaring the largest entry gives 91809" in app.error[0].value


def test_zero_variance_with_eps_zero_is_explained_not_blamed_on_precision(app):
    app.text_area(key="vl_text").input("5, 5, 5").run()
    app.text_input(key="vl_eps").input("0").run()
    assert not app.exception
    assert any("0 · ∞ = NaN" in w.value for w in app.warning)
    assert not any("float32: y =" in block.value for block in app.code)


def test_pooled_norms_do_not_show_the_rows_own_statistics(app):
    app.selectbox(key="vl_preset").select("tokens").run()
    app.selectbox(key="vl_norm").select("batchnorm").run()
    latex = _latex(app)
    assert r"\mu_{c}" in latex and r"\sigma^2 = \frac{1}{d}" not in latex
    assert app.dataframe  # the per-channel statistics table
