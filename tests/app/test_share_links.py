"""Share links opened fresh, as a new user would: stable ids, older links, hostile values."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _open(query: dict, page: str | None = None) -> AppTest:
    st.cache_resource.clear()
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


def test_a_hidden_sections_setting_stays_in_the_link_until_the_page_is_left():
    """Widgets keep their value while a section hides them (``persist_state="page"``): the
    link still carries it, and it is back when the section is; another page forgets it."""
    at = _open({"lang": "en"}, "depth")
    at.number_input(key="dp_layers").set_value(12).run()
    at.segmented_control(key="dp_section").set_value("training").run()
    at.run()  # a second run with the stack's settings hidden
    assert at.query_params["dp_layers"] == "12"
    at.segmented_control(key="dp_section").set_value("stack").run()
    assert at.number_input(key="dp_layers").value == 12
    at.switch_page("app_pages/vector_lab.py").run()
    at.switch_page("app_pages/depth.py").run()
    assert at.number_input(key="dp_layers").value == 48 and "dp_layers" not in at.query_params


def test_changing_a_setting_writes_its_id_and_a_default_leaves_the_url():
    at = _open({"lang": "en"})
    at.selectbox(key="vl_norm").select("rmsnorm").run()
    assert at.query_params["vl_norm"] == "rmsnorm"
    at.selectbox(key="vl_norm").select("layernorm").run()
    assert "vl_norm" not in at.query_params


@pytest.mark.parametrize(
    "key, value, accepted",
    [
        ("dp_layers", "100000", "1 … 1,000"),
        ("dp_sublayer", "conv", "`linear`, `mlp`, `attention`, `transformer`"),
        ("dp_final", "maybe", "`true`, `false`"),
    ],
)
def test_a_refused_depth_value_is_named_with_what_is_accepted(key, value, accepted):
    at = _open({"lang": "en", key: value}, "depth")
    assert not at.exception
    warning = _warnings(at)
    assert key in warning and value in warning and accepted in warning
    assert key not in at.query_params  # the page shows the default, and the URL says so


def test_an_older_links_key_is_read_and_its_refused_value_named_by_that_key():
    at = _open({"lang": "en", "dp_section": "training", "tl_lr": "0.003"}, "depth")
    assert not at.exception and at.session_state["dp_lr"] == 0.003  # the key before dp_lr
    at = _open({"lang": "en", "dp_section": "training", "tlb_placement": "bogus"}, "depth")
    assert not at.exception
    warning = _warnings(at)
    assert "tlb_placement" in warning and "bogus" in warning and "dp_run_b" not in warning


def test_an_unknown_parameter_and_a_bad_language_are_named():
    at = _open({"lang": "xx", "foo": "1"})
    assert not at.exception
    warning = _warnings(at)
    assert "foo" in warning and "xx" in warning
    assert at.query_params["lang"] == "en"


def _repeated_notices(at) -> list[str]:
    return [w.value for w in at.warning if "times, with different values" in w.value]


def test_a_key_given_twice_is_named_once_with_the_value_read_and_the_link_rewritten():
    at = _open({"lang": "en", "vl_norm": ["layernorm", "rmsnorm"], "vl_eps": ["1e-5", "1e-6"]})
    assert not at.exception
    notices = _repeated_notices(at)
    assert len(notices) == 2 and "`vl_norm` 2 times" in notices[0] and "`rmsnorm`" in notices[0]
    assert "`vl_eps` 2 times" in notices[1] and "`1e-6`" in notices[1]
    assert at.selectbox(key="vl_norm").value == "rmsnorm"  # the last, as before
    assert at.query_params["vl_norm"] == "rmsnorm"  # one value left in the address bar
    at.selectbox(key="vl_dtype").select("float16").run()  # a rerun: the notice is not repeated
    assert len(_repeated_notices(at)) == 2
    at.switch_page("app_pages/depth.py").run()
    at.switch_page("app_pages/vector_lab.py").run()  # and once gone, it does not come back
    assert not at.exception and not at.warning
    at.selectbox(key="language_select").select("zh").run()  # the language switch still works
    assert at.query_params["lang"] == "zh" and not at.warning


def test_a_repeated_language_is_named_in_the_language_read_and_the_same_value_twice_is_not():
    at = _open({"lang": ["en", "zh"], "vl_norm": ["rmsnorm", "rmsnorm"]})
    assert not at.exception and len(at.warning) == 1
    assert "`lang` 出现了 2 次" in at.warning[0].value and "最后一个：`zh`" in at.warning[0].value
    assert at.query_params["lang"] == "zh" and at.query_params["vl_norm"] == "rmsnorm"
    assert at.selectbox(key="vl_norm").value == "rmsnorm"


def test_a_repeated_setting_stays_named_beside_a_refused_one():
    """A page opened by a deep link reads it twice; the second read skipped the repeated
    ``vl_text`` (its value already in the widget's state) and its notice was lost whenever
    another value (here ``vl_source``) was refused on both reads."""
    at = _open({"lang": "en", "vl_source": "", "vl_text": ["", "-1"]}, "vector_lab")
    warning = _warnings(at)
    assert not at.exception and len(at.warning) == 2, warning
    assert "`vl_source`" in warning and "`vl_text` 2 times" in warning


def test_a_setting_given_under_its_key_and_its_older_key_is_named():
    at = _open({"lang": "en", "dp_section": "training", "dp_steps": "100", "tl_steps": "200"},
               "depth")  # fmt: skip
    assert not at.exception and len(at.warning) == 1
    warning = _warnings(at)
    assert "`dp_steps` more than once" in warning and "(`tl_steps`)" in warning
    assert "`dp_steps` = `100`" in warning and at.number_input(key="dp_steps").value == 100
    assert "tl_steps" not in at.query_params


def test_a_landing_given_twice_is_written_back_once():
    at = _open({"lang": "en", "at": ["results", "results"]}, "depth")
    assert not at.exception and not at.warning
    assert at.query_params["at"] == "results"


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


def test_the_heaviest_accepted_depth_link_waits_for_a_click_and_says_why():
    query = {"lang": "en", "dp_layers": "1000", "dp_d": "512", "dp_tokens": "512"}
    at = _open({**query, "dp_placements": "pre"}, "depth")
    assert not at.exception and not at.error
    assert at.button(key="dp_simulate").label == "Simulate"
    why = " ".join(c.value for c in at.caption)
    assert "about 889× the work of the default settings" in why
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


def _unknown_keys(prefix: str, count: int, width: int) -> dict:
    return {f"{prefix}{i:04d}_" + "x" * width: "1" for i in range(count)}


def test_a_link_longer_than_the_app_writes_opens_at_the_defaults_and_says_why():
    query = {"lang": "zh", "ge_count": "7", **_unknown_keys("zz", 990, 145)}  # ~150 KB
    at = _open(query, "geometry")
    assert not at.exception and not at.error
    assert len(at.warning) == 1  # one notice, not one per key
    warning = _warnings(at)
    # said in the link's language, the one value read: its other settings are not
    assert "153,468 个字符" in warning and "96,000 个字符" in warning
    assert at.number_input(key="ge_count").value == 500  # not the link's 7
    assert "zz0000" not in str(at.query_params) and at.query_params.get("lang") == "zh"
    assert at.get("component_instance")  # the scene at its defaults, drawn


def test_a_page_opened_by_a_link_too_long_is_usable_and_keeps_saying_why():
    at = _open({"lang": "en", "ge_count": "7", **_unknown_keys("zz", 990, 145)}, "geometry")
    assert "153,468 characters long" in _warnings(at)
    at.number_input(key="ge_count").set_value(9).run()  # usable; the notice stays
    assert at.query_params["ge_count"] == "9" and "153,468 characters long" in _warnings(at)


def test_many_unknown_parameters_are_named_in_one_notice():
    at = _open({"lang": "en", **_unknown_keys("zz", 30, 3), "vl_norm": "rmsnorm"})
    assert not at.exception and len(at.warning) == 1
    warning = _warnings(at)
    assert "30 settings this page does not know" in warning and "22 more" in warning
    assert "`zz0000_xxx`" in warning and "`zz0007_xxx`" in warning
    assert at.selectbox(key="vl_norm").value == "rmsnorm"  # the known ones are read


def test_the_link_a_page_writes_beside_streamlits_embed_options_stays_acceptable():
    """Streamlit keeps ``embed`` and ``embed_options`` in the address bar whatever the page
    writes: the text left out for length counts them, so the next run reads the link."""
    from urllib.parse import urlencode

    from ui.url.codec import MAX_URL_CHARS

    at = _open({"lang": "en", "embed": "true", "embed_options": "x" * 10_000})
    at.text_area(key="vl_text").input("1 " * 44_000).run()  # 88,000 characters in a link
    assert not at.exception
    written = urlencode(at.query_params, doseq=True)
    assert "embed_options" in written and len(written) <= MAX_URL_CHARS
    assert "vl_text" not in at.query_params
    assert any("too long for a link" in caption.value for caption in at.caption)
    at.run()
    assert "characters long" not in _warnings(at)


def _dropped_link_checks(at) -> list:
    return [h for h in at.get("html") if "ns-dropped-link" in h.proto.body]


def test_a_session_whose_link_reached_it_empty_lets_the_browser_check_for_a_dropped_link():
    """Streamlit's server passes on a link of more than 1,000 pairs as no link at all: on the
    first page of such a session the browser is asked to say so (tests/e2e/test_links_browser.py
    sees it do so); the notice is hidden until it does, so it is no warning here."""
    at = _open({}, "depth")
    checks = _dropped_link_checks(at)
    assert len(checks) == 1 and "a link may hold at most 1,000" in checks[0].proto.body
    assert not at.warning
    at.number_input(key="dp_layers").set_value(12).run()
    assert _dropped_link_checks(at)  # it stays with the page
    at.switch_page("app_pages/vector_lab.py").run()
    assert not _dropped_link_checks(at)  # not on another page
    assert not _dropped_link_checks(_open({"lang": "en"}, "depth"))  # a link that arrived


# --- links short enough for a QR code and a chat message ------------------------------------

SHORT_LINK = 500  # characters: a QR code read from the back of a room, a chat message
HOST = "https://normscope.example.org/"  # a plausible address in front of the query


def test_every_example_link_is_short_enough_to_share():
    from engine.norms.precision_presets import PRESETS
    from ui.url.codec import query_string
    from ui.url.pages import VECTOR_LAB
    from ui.widgets.vector_lab import example_states, preset_state

    presets = {p.name: p.rows() for p in PRESETS}
    for name in example_states(presets):
        for lang, present in (("en", "off"), ("zh", "results")):
            query = query_string(VECTOR_LAB, preset_state(name, presets), lang, present)
            assert len(f"{HOST}?{query}") <= SHORT_LINK, (name, len(query))


def test_a_wide_example_is_named_by_its_id_and_switching_leaves_nothing_behind():
    at = _open({"lang": "en"})
    at.selectbox(key="vl_menu").select("massive_activation").run()
    assert not at.exception
    assert at.query_params["vl_source"] == "preset"
    assert at.query_params["vl_preset"] == "massive_activation"
    assert "vl_text" not in at.query_params
    at.selectbox(key="vl_menu").select("plus_minus_300").run()
    assert at.query_params["vl_text"] == "-300, 300, -300, 300"
    assert "vl_source" not in at.query_params and "vl_preset" not in at.query_params
    at.selectbox(key="vl_menu").select("tokens").run()
    assert "vl_dtype" not in at.query_params  # the float16 of the example before is gone


def test_a_preset_link_opens_the_same_row_as_the_long_link_that_typed_it():
    from engine.norms.precision_presets import preset

    row = preset("massive_activation").rows()[0]
    long_link = {"lang": "en", "vl_text": ", ".join(f"{v:g}" for v in row), "vl_dtype": "float16"}
    assert len(urlencode(long_link)) > 20_000  # as the old example link wrote it
    old = _open(long_link)
    new = _open({"lang": "en", "vl_source": "preset", "vl_preset": "massive_activation",
                 "vl_dtype": "float16"})  # fmt: skip
    for at in (old, new):
        assert not at.exception and not at.warning
    assert [m.value for m in old.metric] == [m.value for m in new.metric]


@pytest.mark.parametrize(
    "page, query",
    [
        ("vector_lab", {"vl_source": "random", "vl_scale": "0.001", "vl_shift": "0.004"}),
        ("axes", {"ax_section": "batchnorm", "ax_momentum": "0.004"}),
        ("depth", {"dp_norm": "dyt", "dp_alpha": "0.014"}),
        ("geometry", {"ge_section": "affine", "ge_gamma_x": "0.123", "ge_shift": "0.004"}),
    ],
)
def test_a_linked_fraction_is_shown_as_it_is_computed_not_rounded_to_two_places(page, query):
    """Streamlit's default "%0.2f" showed a momentum of 0.004 as "0.00"; each float box and
    slider now writes its value so that reading it back gives the value the page uses."""
    at = _open({"lang": "en", **query}, page)
    assert not at.exception and not at.warning
    shown = {}
    for widget in [*at.number_input, *at.slider]:
        if isinstance(widget.value, float):
            shown[widget.key] = widget.proto.format % widget.value  # printf, as the browser
            assert float(shown[widget.key]) == widget.value, widget.key
    linked = {key: value for key, value in query.items() if key in shown}
    assert linked and all(shown[key] == value for key, value in linked.items())


def test_a_linked_row_past_a_one_row_input_is_said_and_dropped_from_the_link():
    """With one row there is no box to pick it; a link's ``vl_row`` past it was kept silently."""
    at = _open({"lang": "en", "vl_text": "1, 2, 3, 4", "vl_row": "64"})
    assert not at.exception
    assert (
        "`vl_row` = 64 is past the end of this view, whose last value for it is 1: showing 1."
        in (_warnings(at).replace("\u00a0", " "))
    )
    assert "vl_row" not in at.query_params


def test_back_reads_the_entrys_settings_again_but_keeps_a_committed_prediction(monkeypatch):
    """The browser's Back (Streamlit marks its run) reads every setting from the entry it
    returned to, a left-out one as its default; a prediction committed since stays."""
    at = _open({"lang": "en", "ls_lesson": "rmsnorm"}, "lessons")
    at.session_state["ls_answers"] = ["rmsnorm.b"]  # committed since that entry
    at.session_state["ls_view"] = "sheet"
    monkeypatch.setattr("ui.url.address_bar._history_navigation", lambda: True)
    at.query_params.clear()
    at.query_params.update({"lang": "en", "ls_lesson": "geometry"})  # the entry Back shows
    at.run()
    assert not at.exception
    assert at.session_state["ls_lesson"] == "geometry" and at.session_state["ls_view"] == "lesson"
    assert at.session_state["ls_answers"] == ["rmsnorm.b"]


def _back_to(at, monkeypatch, query: dict) -> None:
    """Run ``at`` as the browser's Back to an entry whose address is ``query``."""
    monkeypatch.setattr("ui.url.address_bar._history_navigation", lambda: True)
    at.query_params.clear()
    at.query_params.update(query)
    at.run()
    assert not at.exception


def test_back_keeps_a_text_the_links_leave_out_for_its_length(monkeypatch):
    text = "\n".join(", ".join(f"{r}.{c}" for c in range(1024)) for r in range(48))  # ~290 KB
    at = _open({"lang": "en"})
    at.text_area(key="vl_text").input(text).run()
    at.selectbox(key="vl_norm").select("rmsnorm").run()
    _back_to(at, monkeypatch, {"lang": "en"})  # the entry before the norm changed
    assert at.text_area(key="vl_text").value == text  # no entry holds it: none undoes it
    assert at.selectbox(key="vl_norm").value == "layernorm"


def test_back_to_an_entry_the_app_did_not_write_keeps_the_page(monkeypatch):
    """Streamlit pushes the bare page when the page changes, before the page writes its
    settings: that entry says nothing of them."""
    at = _open({"lang": "en", "vl_text": "2, 4, 6"})
    _back_to(at, monkeypatch, {})
    assert at.text_area(key="vl_text").value == "2, 4, 6"


def test_back_returns_to_the_entrys_language_and_presentation(monkeypatch):
    at = _open({"lang": "zh", "present": "on"})
    _back_to(at, monkeypatch, {"lang": "en"})
    assert at.session_state["language"] == "en" and at.session_state["present"] == "off"
    assert at.title[0].value == "Vector Lab"


def test_in_chinese_the_accepted_values_are_listed_with_chinese_commas():
    at = _open({"lang": "zh", "dp_sublayer": "conv"}, "depth")
    assert "`linear`、`mlp`、`attention`、`transformer`" in _warnings(at)
