"""ui.url: links read and written.  Values and older display names parse to ids; a bad value
is refused naming the parameter and what is accepted; a link or a list too long is refused
whole; every value a page can hold comes back from its link; the address bar is rewritten
only when it no longer describes the page.  Streamlit's own ``bind`` still drops bad values."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from ui.i18n import translate
from ui.url.address_bar import describes
from ui.url.codec import PRESENT, parse, query_string, serialize, serialize_one
from ui.url.pages import AXES, DEPTH, DUMPS, GEOMETRY, KERNELS, MODELS, PAGES, VECTOR_LAB


def _bound_widgets():
    import streamlit as st

    st.number_input("L", min_value=1, max_value=100, value=48, key="dp_layers", bind="query-params")
    names = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"}
    st.selectbox("norm", list(names), format_func=names.get, key="vl_norm", bind="query-params")


def test_bind_is_not_used_because_it_drops_bad_values():
    """Streamlit's own URL binding (docs/architecture.md) drops a value out of range without a
    word, and reads display labels, not ids.  If this fails, Streamlit changed: look again at
    whether ``bind="query-params"`` can carry the URL contract."""
    at = AppTest.from_function(_bound_widgets)
    at.query_params.update({"dp_layers": "500", "vl_norm": "rmsnorm"})
    at.run()
    assert at.number_input(key="dp_layers").value == 48  # 500 dropped ...
    assert not at.warning and not at.error and "dp_layers" not in at.query_params  # unnamed
    assert at.selectbox(key="vl_norm").value == "layernorm"  # an id is not a label to bind


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("vl_norm", ["RMSNorm"], "rmsnorm"),  # older links wrote the display name
        ("vl_norm", ["rmsnorm"], "rmsnorm"),
        ("vl_dist", ["均匀 U(−√3, √3)"], "uniform"),  # a name written by the Chinese page
        ("vl_source", ["Random"], "random"),
        ("vl_source", ["随机生成"], "random"),
        ("vl_source", ["Type vectors"], "text"),  # the name before "Type"
        ("vl_source", ["An example"], "preset"),  # the name before "Example"
        ("vl_shift", ["100.0"], 100.0),
        ("vl_d", ["4096"], 4096),
    ],
)
def test_vector_lab_values_and_older_display_names_parse_to_ids(key, raw, expected):
    assert parse(VECTOR_LAB[key], raw) == (expected, None)


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("dp_sublayer", ["类注意力混合器"], "attention"),  # made in Chinese, opened in English
        ("dp_sublayer", ["attention-like mixer"], "attention"),
        ("dp_placements", ["Post-Norm", "Peri-Norm（三明治）"], ["post", "peri"]),
        ("dp_placements", ["post,pre,post"], ["pre", "post"]),  # a repeat at its last place
        ("dp_activation", ["RELU"], "relu"),  # str.upper labels of older links
        ("dp_lr", ["0.003"], 3e-3),
        ("dp_d", ["1024"], 1024),
        ("dp_final", ["false"], False),
        ("dp_run_b", ["Pre-Norm"], "pre"),
        ("dp_placements", ["OLMo 2", "olmo2"], ["olmo2"]),
        ("dp_placements", ["OLMo-2"], ["olmo2"]),  # the name links wrote before "OLMo 2"
    ],
)
def test_depth_values_and_older_display_names_parse_to_ids(key, raw, expected):
    assert parse(DEPTH[key], raw) == (expected, None)


def test_models_values_parse_to_ids_and_older_input_names():
    assert parse(MODELS["md_family"], ["gemma2"]) == ("gemma2", None)
    assert parse(MODELS["md_input"], ["Paste a config.json"]) == ("paste", None)
    assert parse(MODELS["md_input"], ["粘贴 config.json"]) == ("paste", None)
    assert parse(MODELS["md_family"], ["Gemma 2"])[1] is not None  # ids only, never names


def test_dumps_values_parse_to_ids_and_the_eps_in_any_spelling():
    assert parse(DUMPS["du_source"], ["Upload a file"]) == ("upload", None)
    assert parse(DUMPS["du_source"], ["上传文件"]) == ("upload", None)
    assert parse(DUMPS["du_eps"], ["1e-5"]) == (1e-5, None)
    assert parse(DUMPS["du_eps"], ["0.00001"]) == (1e-5, None)
    assert query_string(DUMPS, {"du_eps": 1e-6, "du_axes": "BTd"}) == "du_axes=BTd&du_eps=1e-6"


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("ax_norm", ["GroupNorm"], "groupnorm"),  # a display name, as older links write them
        ("ax_source", ["带填充的句子"], "padded"),  # made in Chinese, opened in English
        ("ax_preset", ["One outlier channel"], "outlier_channel"),
        ("ax_eps", ["0.00001"], 1e-5),
        ("ax_eps", ["0"], 0.0),
        ("ax_lengths", ["16,12,8,4"], "16,12,8,4"),  # parsed and checked by the page
        ("ax_sizes", ["1,4,16"], [1, 4, 16]),
        ("ax_shift", ["-2.5"], -2.5),
    ],
)
def test_axes_values_parse_to_ids(key, raw, expected):
    assert parse(AXES[key], raw) == (expected, None)


@pytest.mark.parametrize(
    "key, raw",
    [
        ("ax_d", ["0"]),  # d = 0: refused with what is accepted
        ("ax_batch", ["65"]),
        ("ax_eps", ["0.5"]),  # not one of the offered ε
        ("ax_norm", ["layer"]),
        ("ax_sizes", ["3"]),
        ("ax_lengths", ["1," * 300]),
        ("ax_momentum", ["1.5"]),
    ],
)
def test_axes_bad_values_are_refused(key, raw):
    value, refusal = parse(AXES[key], raw)
    assert value is None and refusal.params["param"] == key


def test_kernels_passes_parse_from_ids_and_names():
    assert parse(KERNELS["kn_passes"], ["forward"]) == (["forward"], None)
    assert parse(KERNELS["kn_passes"], ["前向 + 反向"]) == (["forward+backward"], None)


@pytest.mark.parametrize(
    "key, raw",
    [
        ("dp_layers", ["100000"]),  # out of range: refused, never clamped
        ("dp_layers", ["-3"]),
        ("dp_layers", ["4.5"]),
        ("dp_layers", ["nan"]),
        ("dp_layers", ["1e400"]),
        ("dp_layers", ["1_2"]),  # Python's float() reads 12; nobody links that meaning it
        ("du_massive_abs", ["1_000"]),
        ("dp_sublayer", ["conv"]),
        ("dp_placements", ["sideways"]),
        ("dp_final", ["yes"]),
        ("vl_norm", ["<script>"]),
        ("vl_eps", ["1" * 41]),
        ("kn_d", [""]),
        ("md_family", ["<script>"]),
        ("md_tokens", ["0"]),
        ("md_example", ["ngpt"]),  # a family without an example config
        ("du_massive_abs", ["0"]),  # the engine refuses a threshold <= 0
        ("du_token_layer", ["-2"]),  # -1 is "the middle layer"; nothing below
        ("du_eps", ["1e-7"]),
        ("du_source", ["file"]),
    ],
)
def test_bad_values_are_refused_with_the_parameter_and_what_is_accepted(key, raw):
    page = {"dp": DEPTH, "vl": VECTOR_LAB, "kn": KERNELS, "md": MODELS, "du": DUMPS}[
        key.split("_")[0]
    ]
    value, refusal = parse(page[key], raw)
    assert value is None and refusal is not None
    assert refusal.params["param"] == key
    assert refusal.params["accepted"] == page[key].accepted()


def test_words_in_a_link_are_read_whatever_their_case_and_surrounding_spaces():
    assert parse(DEPTH["dp_placements"], ["POST, Pre "]) == (["post", "pre"], None)
    assert parse(DEPTH["dp_norm"], ["layernorm "]) == ("layernorm", None)
    assert parse(DUMPS["du_log"], [" TRUE"]) == (True, None)
    for param in (p for page in PAGES.values() for p in page.params if p.choices):
        ids = [serialize_one(param, c).casefold() for c in param.choices]
        assert len(set(ids)) == len(ids), param.key  # no two ids differ only by case


def test_refusals_say_what_is_accepted_in_words():
    assert DEPTH["dp_layers"].accepted() == "1 … 1,000"
    assert DEPTH["dp_sublayer"].accepted() == "`linear`, `mlp`, `attention`, `transformer`"
    assert DEPTH["dp_final"].accepted() == "`true`, `false`"


def test_query_string_writes_ids_and_leaves_defaults_out():
    query = query_string(
        DEPTH, {"dp_placements": ["pre", "peri"], "dp_layers": 48, "dp_sublayer": "attention"}, "zh"
    )
    assert query == "lang=zh&dp_placements=pre&dp_placements=peri&dp_sublayer=attention"


def test_presentation_mode_is_an_app_wide_parameter_without_a_prefix():
    pinned = ("present", "choice", "off", ("off", "on", "results"))
    assert (PRESENT.key, PRESENT.kind, PRESENT.default, PRESENT.choices) == pinned
    assert query_string(DEPTH, {"dp_layers": 12}, "en", "on") == "lang=en&present=on&dp_layers=12"
    assert query_string(DEPTH, {"dp_layers": 12}, "en", "off") == "lang=en&dp_layers=12"


def test_lesson_progress_parses_from_a_link_and_refuses_unknown_answers():
    from ui.url.pages import LESSONS_PAGE

    answers = ["worked_example.b", "rmsnorm.c"]
    assert parse(LESSONS_PAGE["ls_answers"], answers) == (answers, None)
    assert parse(LESSONS_PAGE["ls_answers"], ["worked_example.b,rmsnorm.c"]) == (answers, None)
    assert parse(LESSONS_PAGE["ls_answers"], ["worked_example.e"])[1] is not None


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("ge_eps", ["0.00001"], 1e-5),  # any spelling of an offered eps
        ("ge_spread", ["1e-3"], 1e-3),
        ("ge_d", ["2"], 2),
        ("ge_show", ["dyt,layernorm"], ["dyt", "layernorm"]),
        ("ge_show", ["RMSNorm"], ["rmsnorm"]),  # the display name, as other pages' links
        ("ge_dist", ["均匀 U(−√3, √3)"], "uniform"),
        ("ge_vector", ["1, 2"], "1, 2"),  # parsed and checked by the page
    ],
)
def test_geometry_values_parse_to_ids(key, raw, expected):
    assert parse(GEOMETRY[key], raw) == (expected, None)


@pytest.mark.parametrize(
    "key, raw",
    [
        ("ge_d", ["4"]),  # the scene draws d <= 3; wider vectors have ge_wide_d
        ("ge_wide_d", ["100"]),
        ("ge_eps", ["2e-5"]),
        ("ge_count", ["2001"]),
        ("ge_gamma_x", ["nan"]),
        ("ge_section", ["<script>"]),
        ("ge_axis_a", ["8192"]),
    ],
)
def test_geometry_bad_values_are_refused(key, raw):
    value, refusal = parse(GEOMETRY[key], raw)
    assert value is None and refusal.params["param"] == key


def test_a_geometry_link_for_a_vector_lab_row_leaves_defaults_out():
    query = query_string(GEOMETRY, {"ge_section": "vector", "ge_vector": "3, 1", "ge_eps": 1e-5})
    assert query == "ge_section=vector&ge_vector=3%2C+1"


def test_a_link_longer_than_any_the_app_writes_is_refused_whole():
    from ui.url.codec import MAX_URL_CHARS, link_refusal

    longest = "vl_text=" + "1" * (MAX_URL_CHARS - len("vl_text="))
    assert link_refusal(longest) is None and link_refusal("") is None
    refusal = link_refusal(longest + "1")
    assert refusal.key == "link_too_long"
    assert refusal.params == {"chars": f"{MAX_URL_CHARS + 1:,}", "limit": f"{MAX_URL_CHARS:,}"}


def _longest_serialization(param):
    """The value of ``param`` whose link text is longest (a page can hold any accepted one)."""
    if param.kind == "choices":
        return list(param.choices)
    if param.kind == "text":
        return "中" * param.max_chars  # 9 characters in a link each
    if param.kind in ("int", "float"):
        candidates = [param.low, param.high]
        if param.kind == "float":
            candidates.append(param.low + (param.high - param.low) / 3)  # a long repr
        else:
            candidates = [int(c) for c in candidates]
    elif param.kind == "bool":
        candidates = [True, False]
    else:
        candidates = list(param.choices)
    return max(candidates, key=lambda value: len(",".join(serialize(param, value))))


@pytest.mark.parametrize("page", list(PAGES.values()), ids=list(PAGES))
def test_every_value_a_page_can_hold_comes_back_from_its_link(page):
    """What a page writes into its link, it reads back unchanged and unrefused: each
    parameter at either end of its range, every choice, every list whole, texts at their
    longest."""
    for param in page.params:
        values = [_longest_serialization(param)]
        if param.kind in ("int", "float"):
            values += [param.high] if param.positive else [param.low, param.high]
        if param.kind == "choice":
            values += list(param.choices)
        for value in values:
            back, refusal = parse(param, serialize(param, value))
            assert refusal is None and back == value, param.key


def test_a_plus_typed_into_a_link_by_hand_is_read_as_the_plus_it_meant():
    """``?kn_passes=forward+backward`` typed by hand: a "+" in a query is a space."""
    param = PAGES["kernels"]["kn_passes"]
    assert parse(param, ["forward backward"]) == (["forward+backward"], None)
    assert parse(param, ["forward+backward"]) == (["forward+backward"], None)


def test_a_refusal_names_a_long_menu_by_its_pattern_and_count():
    """52 answer ids would fill the screen: the first three, the last and how many."""
    _, refusal = parse(PAGES["lessons"]["ls_answers"], ["why_normalize.a,zz"])
    assert (
        refusal.params["accepted"].endswith("(52)") and refusal.params["accepted"].count(",") == 4
    )
    _, refusal = parse(PAGES["models"]["md_family"], ["zz"])
    assert "llama3" in refusal.params["accepted"]  # 18 families: listed whole


def test_a_text_too_long_for_its_parameter_counts_as_the_typed_box_does():
    """ "The link's du_prompt is 1,999 characters long", with the separator the box's own
    message writes, never "1999"."""
    param = PAGES["dumps"]["du_prompt"]
    value, refusal = parse(param, ["a" * 1999])
    assert value is None and refusal.key == "too_long"
    assert refusal.params["chars"] == "1,999" and refusal.params["limit"] == f"{param.max_chars:,}"


def test_a_text_too_long_whose_default_is_empty_is_said_not_read_not_defaulted():
    """A class code 40 characters long: no default class is shown instead; the link's value
    was not read (the page is in no class)."""
    value, refusal = parse(PAGES["lessons"]["ls_class"], ["A" * 40])
    assert value is None and refusal.key == "too_long_unread"
    assert "default" not in translate(f"share.{refusal.key}", "en", **refusal.params)


def test_a_parameter_the_engine_needs_above_zero_refuses_zero_in_the_link():
    """``ax_momentum``: 0 would learn nothing, and the engine refuses it, so the link does too
    (it said "accepted: 0 … 1", then the page refused 0)."""
    param = PAGES["axes"]["ax_momentum"]
    for text in ("0", "-0", "0.0"):
        value, refusal = parse(param, [text])
        assert value is None and refusal.params["accepted"] == "(0, 1]"
    assert parse(param, ["1e-3"]) == (0.001, None)


@pytest.mark.parametrize("page", list(PAGES.values()), ids=list(PAGES))
def test_the_longest_link_a_page_can_write_is_not_refused_whole(page):
    """Every parameter at its longest, the texts left out (``url.publish`` leaves out
    any text that would take the link past the limit): fewer pairs than Streamlit reads."""
    from ui.url.codec import link_refusal

    values = {p.key: _longest_serialization(p) for p in page.params if p.kind != "text"}
    query = query_string(page, values, "zh", "results")
    assert link_refusal(query) is None
    assert query.count("&") + 1 < 100  # far from MAX_URL_PAIRS: room for any text


@pytest.mark.parametrize(
    ("share_open", "shown", "redraw"),
    [(False, (), False), (True, (), True), (False, ("kn_left_out",), True)],
)
def test_a_section_rerun_writes_the_url_and_asks_for_the_share_box_only_when_it_shows(
    share_open, shown, redraw
):
    def script(open_box, shown_left_out):
        import streamlit as st

        from ui.url import address_bar

        st.session_state["_url_published"] = ("kernels", tuple(shown_left_out))
        st.session_state["kn_d"] = 2048  # a section's widget changed since that run
        st.session_state["share_open"] = open_box
        st.session_state["redraw"] = address_bar.republish("en")

    at = AppTest.from_function(script, args=(share_open, shown)).run()
    assert at.query_params["kn_d"] == "2048"
    assert at.session_state["redraw"] is redraw


def test_an_address_with_defaults_written_out_already_describes_the_state():
    """A lesson's link writes defaults; rewriting it without them would add a history entry
    (Back would need two presses), so publish leaves such an address alone."""
    wanted = {"lang": ["en"], "vl_eps": ["0"]}
    written = {"lang": ["en"], "vl_text": ["1, 2, 3, 4"], "vl_norm": ["layernorm"], "vl_eps": ["0"]}
    assert describes(VECTOR_LAB, written, wanted)
    assert describes(VECTOR_LAB, wanted, wanted)
    assert not describes(VECTOR_LAB, {**written, "vl_norm": ["rmsnorm"]}, wanted)
    assert not describes(VECTOR_LAB, {**written, "vl_norm": ["sideways"]}, wanted)  # refused
    assert not describes(VECTOR_LAB, {**written, "lang": ["zh"]}, wanted)
    assert not describes(VECTOR_LAB, {**written, "nothing": ["1"]}, wanted)  # unknown: dropped
    assert not describes(VECTOR_LAB, {"lang": ["en"]}, wanted)  # eps 0 is not the default
    assert not describes(VECTOR_LAB, {**written, "vl_norm": ["LayerNorm"]}, wanted)  # old name
