"""Share links opened fresh, as a new user would: stable ids, older links, hostile values."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui import compute

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _open(query: dict, page: str | None = None) -> AppTest:
    compute.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    if page is not None:  # a deep link: the first run is that page's
        at.switch_page(f"app_pages/{page}.py")
    return at.run()


def _warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


def test_an_older_vector_lab_link_with_a_display_name_opens_the_same_view():
    at = _open({"lang": "zh", "vl_text": "2, 4, 6", "vl_norm": "RMSNorm"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="vl_norm").value == "rmsnorm"
    assert at.query_params["vl_norm"] == "rmsnorm"  # rewritten as the stable id


def test_a_depth_link_made_in_chinese_opens_the_same_view_in_english():
    query = {"lang": "en", "dp_sublayer": "类注意力混合器", "tl_steps": "100", "dp_layers": "12"}
    at = _open(query, "depth")
    assert not at.exception and not at.warning
    assert at.selectbox(key="dp_sublayer").value == "attention"
    at.segmented_control(key="dp_section").set_value("training").run()
    assert at.number_input(key="dp_steps").value == 100  # the old tl_ key still works
    assert at.query_params["dp_sublayer"] == "attention"
    assert "tl_steps" not in at.query_params and at.query_params["dp_steps"] == "100"


def test_changing_a_setting_writes_its_id_and_a_default_leaves_the_url():
    at = _open({"lang": "en"})
    at.selectbox(key="vl_norm").select("rmsnorm").run()
    assert at.query_params["vl_norm"] == "rmsnorm"
    at.selectbox(key="vl_norm").select("layernorm").run()
    assert "vl_norm" not in at.query_params


@pytest.mark.parametrize(
    "key, value, accepted",
    [
        ("dp_layers", "100000", "1 … 1000"),
        ("dp_sublayer", "conv", "linear, mlp, attention, transformer"),
        ("dp_final", "maybe", "true, false"),
    ],
)
def test_a_refused_depth_value_is_named_with_what_is_accepted(key, value, accepted):
    at = _open({"lang": "en", key: value}, "depth")
    assert not at.exception
    warning = _warnings(at)
    assert key in warning and value in warning and accepted in warning
    assert key not in at.query_params  # the page shows the default, and the URL says so


def test_an_unknown_parameter_and_a_bad_language_are_named():
    at = _open({"lang": "xx", "foo": "1"})
    assert not at.exception
    warning = _warnings(at)
    assert "foo" in warning and "xx" in warning
    assert at.query_params["lang"] == "en"


def test_user_text_in_a_message_is_shown_literally_never_as_a_link():
    at = _open({"lang": "en", "vl_text": "https://evil.example/login"})
    assert not at.exception
    message = at.error[0].value
    assert "`https://evil.example/login`" in message  # a code span: never a link


def test_full_width_commas_and_unicode_minus_from_a_chinese_keyboard_are_numbers():
    at = _open({"lang": "zh", "vl_text": "1，2，3，−4"})
    assert not at.exception and not at.error
    assert "d = 4" in " ".join(latex.value for latex in at.latex)


def test_a_value_too_small_for_the_storage_dtype_is_reported():
    at = _open({"lang": "en", "vl_text": "1e-320, 1, 2"})
    assert not at.exception and not at.error
    assert "stored as 0" in " ".join(i.value for i in at.info)


def test_the_heaviest_accepted_depth_link_waits_for_a_click_with_an_estimate():
    query = {"lang": "en", "dp_layers": "1000", "dp_d": "512", "dp_tokens": "512"}
    at = _open({**query, "dp_placements": "pre"}, "depth")
    assert not at.exception and not at.error
    button = at.button(key="dp_simulate")
    assert "Simulate (about" in button.label and " s)" in button.label
    assert not at.get("plotly_chart") or all(
        chart.proto.id != "dp_residual" for chart in at.get("plotly_chart")
    )


def test_a_typed_input_too_long_for_a_link_is_left_out_with_a_note():
    text = "\n".join(", ".join(f"{r}.{c}" for c in range(1024)) for r in range(48))  # ~290 KB
    at = _open({"lang": "en"})
    at.text_area(key="vl_text").input(text).run()
    assert not at.exception and not at.error
    assert "vl_text" not in at.query_params  # the link would be refused by the server
    assert any("too long for a link" in caption.value for caption in at.caption)


def test_a_stale_lesson_answer_is_named_and_the_others_are_kept():
    at = _open({"lang": "en", "ls_answers": "why_normalize.a,bogus.z,which_axis.b"}, "lessons")
    assert not at.exception
    assert "`bogus.z`" in _warnings(at)
    kept = at.query_params["ls_answers"]  # the learner's two real answers, still in the link
    assert (
        "why_normalize.a" in str(kept) and "which_axis.b" in str(kept) and "bogus" not in str(kept)
    )
