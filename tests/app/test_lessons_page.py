"""The Lessons page through AppTest: predict and commit, progress in the URL, and every
lesson's link opening its page in the intended state, showing the fact the lesson is about."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.app.conftest import scrolls_to
from tests.plain_text import plain
from ui.lessons.catalog import LESSON_IDS, LESSONS, lesson
from ui.lessons.targets import TARGETS
from ui.url.pages import DEFAULT_PAGE

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _open(query: dict, page: str = "lessons") -> AppTest:
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update(query)
    at.switch_page(f"app_pages/{page}.py")
    return at.run()


def _texts(at) -> str:
    parts = [
        e.value
        for kind in ("markdown", "caption", "info", "success", "error")
        for e in at.get(kind)
    ]
    parts += [e.value for e in at.latex] + [str(m.value) for m in at.metric]
    return plain("\n".join(parts))  # "⟨y, 1⟩" is written with a no-break space


def _maths(at) -> list[str]:
    return [e.value.strip("$\n") for e in at.latex]


def _all(at, key: str) -> list[str]:
    value = at.query_params[key]
    return list(value) if isinstance(value, list | tuple) else [value]


def _link(at):
    links = at.get("page_link")
    assert len(links) == 1
    return links[0].proto


def _array(value) -> np.ndarray:
    """A plotly array as AppTest gives it: a list, or base64 {"dtype", "bdata"}."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray([np.nan if v is None else v for v in value], dtype=float)


def _last_values(at, chart_key: str) -> dict[str, float]:
    """The last point of every named trace of a chart: {trace name: y}."""
    chart = next(c for c in at.get("plotly_chart") if chart_key in c.proto.id)
    data = json.loads(chart.proto.spec)["data"]
    return {t["name"]: float(_array(t["y"])[-1]) for t in data if t.get("name") and "y" in t}


# --- predict, commit, see the verdict; progress in the URL ------------------------------------


def test_a_committed_right_answer_is_confirmed_and_kept_in_the_url():
    at = _open({"lang": "en"})
    assert not at.exception
    assert at.title[0].value == "Lessons" and at.header[0].value == "1. Why normalize at all"
    assert not at.success and not at.error  # nothing revealed before committing
    assert not at.get("page_link")  # nor the page that shows the answer
    how = "Commit to an answer first"
    assert [c.value for c in at.caption if c.value.startswith(how)]  # how the page works
    item = lesson("why_normalize")
    assert _maths(at) == list(item.maths)  # the set-up's maths only
    assert at.button(key="ls_commit_why_normalize").disabled  # nothing picked yet
    at.radio(key="ls_pick_why_normalize").set_value("b").run()
    at.button(key="ls_commit_why_normalize").click().run()
    assert not at.exception
    assert at.success[0].value.startswith("Right: (b)")
    assert "2.5×10¹⁴" in _texts(at)  # the reveal, with the engine's number
    assert _all(at, "ls_answers") == ["why_normalize.b"]
    assert at.radio(key="ls_pick_why_normalize").disabled
    assert _maths(at) == list(item.maths + item.answer_maths)
    assert "doubles at every layer" in _texts(at)  # the explanation, after the commit
    assert len(at.get("page_link")) == 1
    assert not [c.value for c in at.caption if c.value.startswith(how)]  # done: not said again


@pytest.mark.parametrize("present", ["on", "results"])
def test_presenting_a_lesson_puts_its_title_and_question_before_the_navigation(present):
    at = _open({"lang": "en", "ls_lesson": "precision", "present": present})
    assert not at.exception
    assert not at.title  # the lesson's own heading is the first thing on the screen
    order = [e.type for e in at.main if e.type in ("header", "subheader", "selectbox")]
    assert order[:2] == ["header", "subheader"] and order[-1] == "selectbox"
    assert at.selectbox(key="ls_choose").value == "precision"  # navigation kept, not hidden
    assert not at.button(key="ls_next").disabled
    assert not [c for c in at.caption if c.value.startswith("Commit to")]  # not for the room


def test_a_wrong_answer_names_the_engines_answer_and_can_be_retaken():
    at = _open({"lang": "en", "ls_lesson": "worked_example"})
    at.radio(key="ls_pick_worked_example").set_value("a").run()
    at.button(key="ls_commit_worked_example").click().run()
    message = at.error[0].value
    assert "You chose (a) −1.5" in message and "the engine says (b) −1.3416" in message
    options = at.radio(key="ls_pick_worked_example").options  # the list marks both, too
    right, wrong = (
        ":green-badge[:material/check: right answer]",
        ":red-badge[:material/close: your answer]",
    )
    assert [o for o in options if o.endswith(right)] == [f"(b) −1.3416 {right}"]
    assert [o for o in options if o.endswith(wrong)] == [f"(a) −1.5 {wrong}"]
    at.button(key="ls_again_worked_example").click().run()
    assert not at.error and "ls_answers" not in at.query_params
    assert at.radio(key="ls_pick_worked_example").value is None


def test_a_commit_scrolls_its_verdict_into_view_once_and_a_links_answer_never():
    at = _open({"lang": "en", "ls_lesson": "precision", "present": "on"})
    at.radio(key="ls_pick_precision").set_value("b").run()
    at.button(key="ls_commit_precision").click().run()
    assert scrolls_to(at, "verdict_precision") and "Not quite" in at.error[0].value
    assert not scrolls_to(at.run(), "verdict_precision")  # once: a rerun leaves it be
    linked = _open({"lang": "en", "ls_lesson": "precision", "ls_answers": "precision.b"})
    assert linked.error and not scrolls_to(linked, "verdict_precision")


def test_an_answer_from_a_link_is_called_the_links_and_an_answer_made_here_the_learners():
    """A link's ``ls_answers`` may be a classmate's: its verdict said "You chose (a)" to
    someone who never chose.  It is called the link's, with how to answer oneself; once the
    learner answers again and commits, the verdict is theirs."""
    at = _open({"lang": "en", "ls_lesson": "worked_example", "ls_answers": "worked_example.a"})
    assert not at.exception
    message = at.error[0].value
    assert "The link carried (a) −1.5" in message and "You chose" not in message
    assert "the engine says (b) −1.3416" in message
    assert any("came with the link" in c.value for c in at.caption)
    options = at.radio(key="ls_pick_worked_example").options
    assert "(a) −1.5 :red-badge[:material/close: the link's answer]" in options
    at.button(key="ls_again_worked_example").click().run()
    at.radio(key="ls_pick_worked_example").set_value("a").run()
    at.button(key="ls_commit_worked_example").click().run()
    assert "You chose (a) −1.5" in at.error[0].value
    assert not any("came with the link" in c.value for c in at.caption)


def test_the_wrap_up_counts_the_answers_that_came_with_the_link():
    """The course's end counted a link's answers as the learner's, with no word: it says how
    many came with the link, and none once the learner answers here."""
    last = LESSON_IDS[-1]
    at = _open({"lang": "en", "ls_lesson": last, "ls_answers": [f"{last}.a", "rmsnorm.c"]})
    assert not at.exception
    assert "2 of these answers came with the link" in _texts(at)
    at.button(key=f"ls_again_{last}").click().run()
    at.radio(key=f"ls_pick_{last}").set_value("a").run()
    at.button(key=f"ls_commit_{last}").click().run()
    assert "1 of these answers came with the link" in _texts(at)


def test_a_link_resumes_where_the_learner_was_with_their_answers():
    query = {"lang": "zh", "ls_lesson": "precision", "ls_answers": ["precision.c", "rmsnorm.a"]}
    at = _open(query)
    assert not at.exception and not at.warning
    assert at.header[0].value.startswith("10. ")
    assert at.success and "答对了" in at.success[0].value
    assert "链接所带的答案" in at.success[0].value  # not the learner's own click
    progress = at.get("progress")[0].proto.text
    assert "第 10 课" in progress and "已作答 2 题，答对 1 题" in progress
    at.button(key="ls_next").click().run()
    assert at.query_params["ls_lesson"] == "gemma_offset"
    assert _all(at, "ls_answers") == ["precision.c", "rmsnorm.a"]


def test_two_answers_to_one_lesson_in_a_link_are_said_and_the_last_is_kept():
    """Another setting given twice is said (share.repeated); two answers to one lesson were
    resolved silently."""
    at = _open({"lang": "en", "ls_answers": ["why_normalize.b", "rmsnorm.a", "why_normalize.d"]})
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "holds 2 answers to lesson 1, (b), (d)" in warning and "the last one, (d)" in warning
    assert sorted(_all(at, "ls_answers")) == ["rmsnorm.a", "why_normalize.d"]
    assert not at.run().warning  # said once: the link now holds what the page read


def test_an_answer_repeated_in_a_link_is_read_at_its_last_place():
    """ "a, b, a" ends on (a): the repeat was dropped at its first place, and the page said it
    read (b), the middle one, as "the last"."""
    answers = ["which_axis.a", "which_axis.b", "which_axis.a"]
    at = _open({"lang": "en", "ls_lesson": "which_axis", "ls_answers": answers})
    warning = " ".join(w.value for w in at.warning)
    assert "(b), (a)" in warning and "the last one, (a)" in warning
    assert _all(at, "ls_answers") == ["which_axis.a"]


def test_hostile_progress_values_are_named_not_obeyed():
    at = _open({"lang": "en", "ls_lesson": "<script>", "ls_answers": "rmsnorm.z"})
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "ls_lesson" in warning and "ls_answers" in warning
    assert at.header[0].value.startswith("1. ")


def test_the_lesson_picker_and_previous_next_move_through_the_course():
    at = _open({"lang": "en"})
    assert at.button(key="ls_previous").disabled
    at.selectbox(key="ls_choose").select("cost").run()
    assert (
        at.header[0].value
        == f"{LESSON_IDS.index('cost') + 1}. Cost: memory-bound, and fused add + norm"
    )
    at.button(key="ls_previous").click().run()
    assert at.query_params["ls_lesson"] == "gemma_offset"
    at.selectbox(key="ls_choose").select("real_models").run()
    assert at.button(key="ls_next").disabled


def test_the_instructor_sheet_lists_every_lesson_link_in_order():
    at = _open({"lang": "en", "ls_view": "sheet", "present": "on"})
    assert not at.exception
    text = _texts(at)
    positions = [text.index(f"{n}. {lesson_title}") for n, lesson_title in _titles(at)]
    assert positions == sorted(positions)
    for lesson_id in LESSON_IDS:
        target = TARGETS[lesson_id]
        path = "/" if target.page == "vector_lab" else f"/{target.page}?"
        assert path in text, lesson_id
    assert text.count("present=on") == 2 * len(LESSON_IDS)  # each link, and its address written out


def _titles(at):
    from ui.i18n import translate

    return [(n, translate(f"lessons.{i}.title", "en")) for n, i in enumerate(LESSON_IDS, 1)]


# --- every link opens its page in the intended state, showing the lesson's fact --------------


def _follow(lesson_id: str, lang: str = "en") -> AppTest:
    """Open the lesson with its prediction committed, read its link (shown only after the
    commit), and open that link fresh, as a click does."""
    committed = f"{lesson_id}.{lesson(lesson_id).answer}"
    at = _open({"lang": lang, "ls_lesson": lesson_id, "ls_answers": committed})
    link = _link(at)
    target = TARGETS[lesson_id]
    assert link.page == ("" if target.page == DEFAULT_PAGE else target.page)
    query = parse_qs(link.query_string)
    assert query["lang"] == [lang]
    page = _open({k: v if len(v) > 1 else v[0] for k, v in query.items()}, target.page)
    assert not page.exception, page.exception
    assert not page.warning  # nothing in the link was refused
    for key, value in target.as_dict().items():
        assert page.session_state[key] == value, key
    return page


FACTS = {
    "which_axis": lambda at: "**BatchNorm** computes **d = 32** (μ, σ) pairs." in _texts(at),
    "worked_example": lambda at: "-1.3416, -0.4472, 0.4472, 1.3416" in _texts(at),
    "rmsnorm": lambda at: "0.3651, 0.7303, 1.0954, 1.4606" in _texts(at),
    "batchnorm_sequences": lambda at: (
        "y = γ·(x − μ)/√(σ² + ε) + β = β in every channel" in _texts(at)
    ),
    "precision": lambda at: (
        "(x₁ − μ)² = (−300)² = 90,000 is beyond float16's largest finite number 65,504"
        in _texts(at)
    ),
    "gemma_offset": lambda at: "0.3651, 0.7303, 1.0954, 1.4606" in _texts(at),
    "cost": lambda at: "5 passes" in _texts(at) and "1.25" in _texts(at),
    "real_models": lambda at: (
        "has RMS 5.481 at layer 11 and 946.678 at layer 12" in _texts(at)
        and "The largest |a| in the dump is 26,464" in _texts(at)
    ),
    "geometry": lambda at: (  # the lesson's ε = 0: "every output has length √3 ≈ 1.7321"
        "LayerNorm: ‖y‖ = 1.7321 for every input (√d = 1.7321)" in _texts(at)
        and "⟨y, 1⟩ of LayerNorm is 0 in exact arithmetic" in _texts(at)
    ),
}
DEPTH_FACTS = {  # lesson -> (chart, {trace: (value, relative tolerance)})
    "why_normalize": ("dp_residual", {"No norm": (2.5e14, 0.1)}),  # alone: lesson 7 asks Pre's
    "pre_post": ("dp_residual", {"Post-Norm": (1.0, 0.05), "Pre-Norm": (48, 0.1)}),
    "peri_olmo2": (
        "dp_residual",
        {"Pre-Norm": (5.7, 0.05), "Peri-Norm (sandwich)": (48, 0.05), "OLMo 2": (48, 0.05)},
    ),
    "deepnorm": ("dp_update", {"Post-Norm": (0.99, 0.03), "DeepNorm": (0.102, 0.1)}),
}


@pytest.mark.slow  # opens every lesson's page
@pytest.mark.parametrize("lesson_id", sorted(FACTS))
def test_the_link_opens_its_page_configured_and_showing_the_fact(lesson_id):
    page = _follow(lesson_id)
    assert FACTS[lesson_id](page), lesson_id


@pytest.mark.slow  # each runs the Depth page's simulations (2-3 stacks of 48 layers)
@pytest.mark.parametrize("lesson_id", sorted(DEPTH_FACTS))
def test_the_depth_links_open_simulations_that_show_the_lessons_numbers(lesson_id):
    page = _follow(lesson_id)
    chart, expected = DEPTH_FACTS[lesson_id]
    last = _last_values(page, chart)
    for trace, (value, tolerance) in expected.items():
        assert last[trace] == pytest.approx(value, rel=tolerance), (trace, last)
    facts = lesson(lesson_id).facts
    assert any(
        abs(f.value - value) <= tolerance * value
        for f in facts.values()
        for value, tolerance in expected.values()
    )


def test_every_built_lesson_has_a_fact_check_here():
    assert set(LESSON_IDS) == set(FACTS) | set(DEPTH_FACTS)


def test_a_link_wins_over_settings_changed_earlier_in_the_session():
    """A learner changes the Vector Lab, goes back to the lessons and follows a link there."""
    at = _open({"lang": "en"}, "vector_lab")
    at.selectbox(key="vl_norm").select("batchnorm").run()
    at.switch_page("app_pages/lessons.py").run()
    at.selectbox(key="ls_choose").select("worked_example").run()
    at.radio(key="ls_pick_worked_example").set_value("a").run()
    at.button(key="ls_commit_worked_example").click().run()  # the link shows once committed
    link = _link(at)
    at.query_params.clear()
    at.query_params.update({k: v[0] for k, v in parse_qs(link.query_string).items()})
    at.switch_page("app_pages/vector_lab.py").run()
    assert not at.exception
    assert at.selectbox(key="vl_norm").value == "layernorm"
    assert at.session_state["vl_eps"] == "0"


def test_the_lessons_open_in_chinese_with_chinese_links():
    at = _open({"lang": "zh", "ls_lesson": "rmsnorm", "ls_answers": "rmsnorm.c"})
    assert not at.exception
    assert at.header[0].value == "4. RMSNorm 省掉了什么"
    link = _link(at)
    assert parse_qs(link.query_string)["lang"] == ["zh"] and "打开向量实验室" in link.label
    assert len(LESSONS) == 13


@pytest.mark.parametrize(
    "lesson_id, place", [("cost", "memory"), ("batchnorm_sequences", "batch_of_one")]
)
def test_a_lesson_link_lands_on_the_place_it_promised_once(lesson_id, place):
    page = _follow(lesson_id)
    marks = [h.proto.body for h in page.get("html") if f'id="ns-at-{place}"' in h.proto.body]
    assert len(marks) == 1 and "scrollIntoView" in marks[0]
    assert page.query_params["at"] == place  # the link keeps saying where it lands
    page.run()  # a rerun (a setting changed) leaves the reader where they are
    assert not [h for h in page.get("html") if "ns-at-" in h.proto.body]


def test_a_place_on_another_page_is_refused_by_name():
    """``at=memory`` is the Kernels page's place: on Axes it is named in a notice (it was
    dropped without a word, while ``at=nowhere`` got one), and Kernels takes it."""
    axes = _open({"lang": "en", "at": "memory"}, "axes")
    notices = [w.value for w in axes.warning if "`at` = `memory`" in w.value]
    assert len(notices) == 1 and "`top`, `batch_of_one`" in notices[0]
    kernels = _open({"lang": "en", "at": "memory"}, "kernels")
    assert not [w for w in kernels.warning if "`at`" in w.value]


@pytest.mark.parametrize(("first", "second"), [("en", "zh"), ("zh", "en")])
def test_a_pick_not_yet_committed_survives_a_language_switch_and_commits(first, second):
    at = _open({"lang": first, "ls_lesson": "rmsnorm"})
    at.radio(key="ls_pick_rmsnorm").set_value("c").run()
    at.selectbox(key="language_select").select(second).run()
    assert not at.exception
    radio = at.radio(key="ls_pick_rmsnorm")
    assert radio.value == "c"
    # the browser matches its tick by label: it is sent the pick in the new language's labels
    assert radio.proto.set_value and radio.proto.raw_value == radio.options[2]
    assert not at.button(key="ls_commit_rmsnorm").disabled
    at.button(key="ls_commit_rmsnorm").click().run()
    assert _all(at, "ls_answers") == ["rmsnorm.c"]
    assert at.success or at.error  # the verdict of the committed pick
