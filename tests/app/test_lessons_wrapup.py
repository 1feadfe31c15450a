"""The Lessons page's course-level view through AppTest: the lesson picker marks the lessons
answered, and after the last lesson's answer a wrap-up gives the progress bar's counts, the
lessons left (with a way to each) or a closing line; in a paced class it gives no verdict the
class still hides."""

from __future__ import annotations

import pytest

from tests.app.test_class_pages import ANSWER, FIRST, _commit, _instructor, _learner
from tests.app.test_lessons_page import _open
from ui.classroom import store
from ui.i18n import translate
from ui.lessons.catalog import LESSON_IDS, lesson

LAST = LESSON_IDS[-1]
MARK = {"en": " (answered)", "zh": "（已作答）"}
WRAP_TITLE = {"en": "End of the course", "zh": "课程结束"}


def _right(lesson_id: str) -> str:
    return f"{lesson_id}.{lesson(lesson_id).answer}"


def _wrong(lesson_id: str) -> str:
    return f"{lesson_id}.{next(o for o in 'abcd' if o != lesson(lesson_id).answer)}"


def _title(lesson_id: str, lang: str = "en") -> str:
    return f"{LESSON_IDS.index(lesson_id) + 1}. {translate(f'lessons.{lesson_id}.title', lang)}"


def _subheaders(at) -> list[str]:
    return [s.value for s in at.subheader]


def _goto(at) -> dict[str, str]:
    """The wrap-up's buttons: {lesson id: label}."""
    return {
        b.key.removeprefix("ls_goto_"): b.label
        for b in at.button
        if b.key and b.key.startswith("ls_goto_")
    }


def _keyed_under(node, prefix: str, found: bool = False) -> list[str]:
    """The keys of the widgets under a container whose key starts with ``prefix``."""
    keys = []
    for child in getattr(node, "children", {}).values():
        name = (getattr(getattr(child, "proto", None), "id", "") or "").rpartition("-")[2]
        inside = found or name.startswith(prefix)
        if inside and getattr(child, "key", None):
            keys.append(child.key)
        keys += _keyed_under(child, prefix, inside)
    return keys


# --- the picker marks what the learner answered ---------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lesson_picker_marks_the_lessons_answered_in_words(lang):
    at = _open({"lang": lang, "ls_answers": [_wrong("rmsnorm"), _right("precision")]})
    assert not at.exception
    options = at.selectbox(key="ls_choose").options
    marked = [o for o in options if o.endswith(MARK[lang])]
    assert marked == [_title("rmsnorm", lang) + MARK[lang], _title("precision", lang) + MARK[lang]]
    assert options[0] == _title(FIRST, lang)  # not answered: the title alone
    at.radio(key=f"ls_pick_{FIRST}").set_value("b").run()
    at.button(key=f"ls_commit_{FIRST}").click().run()
    # the lesson shown is not marked: the box's one-line value cut a long title on a phone
    assert at.selectbox(key="ls_choose").options[0] == _title(FIRST, lang)
    at.button(key="ls_next").click().run()
    assert at.selectbox(key="ls_choose").options[0] == _title(FIRST, lang) + MARK[lang]
    at.button(key="ls_previous").click().run()
    at.button(key=f"ls_again_{FIRST}").click().run()  # answered no more: unmarked
    at.button(key="ls_next").click().run()
    assert at.selectbox(key="ls_choose").options[0] == _title(FIRST, lang)
    at.selectbox(key="ls_choose").select("precision").run()  # a marked lesson is still picked
    assert at.header[0].value.startswith("10. ") and not at.exception


# --- the wrap-up after the last lesson ------------------------------------------------------


def test_after_the_last_lessons_answer_a_wrap_up_counts_and_leads_to_what_is_left():
    answers = [_right(FIRST), _wrong("rmsnorm"), _right(LAST)]
    at = _open({"lang": "en", "ls_lesson": LAST, "ls_answers": answers})
    assert not at.exception
    assert WRAP_TITLE["en"] in _subheaders(at)
    text = "\n".join(m.value for m in at.markdown)
    assert "You answered 3 of the 13 lessons, 2 of them right." in text
    progress = at.get("progress")[0].proto.text
    assert "3 answered, 2 right" in progress  # the same numbers as the progress bar
    left = [i for i in LESSON_IDS if i not in (FIRST, "rmsnorm", LAST)]
    assert list(_goto(at).items()) == [(i, _title(i)) for i in left]  # by number, in order
    assert not at.success[1:]  # no closing line while lessons are left
    at.button(key="ls_goto_which_axis").click().run()
    assert at.query_params["ls_lesson"] == "which_axis"
    assert at.header[0].value == _title("which_axis")
    assert at.selectbox(key="ls_choose").value == "which_axis"
    assert WRAP_TITLE["en"] not in _subheaders(at)  # only under the last lesson


def test_no_wrap_up_before_the_last_lessons_answer_or_on_another_lesson():
    everything_but_last = [_right(i) for i in LESSON_IDS[:-1]]
    at = _open({"lang": "en", "ls_lesson": LAST, "ls_answers": everything_but_last})
    assert not at.exception and WRAP_TITLE["en"] not in _subheaders(at)
    assert not _goto(at)
    everything = [*everything_but_last, _right(LAST)]
    at = _open({"lang": "en", "ls_lesson": LESSON_IDS[-2], "ls_answers": everything})
    assert not at.exception and WRAP_TITLE["en"] not in _subheaders(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_with_every_lesson_answered_the_wrap_up_closes_the_course(lang):
    answers = [_right(i) for i in LESSON_IDS[:-1]] + [_wrong(LAST)]
    at = _open({"lang": lang, "ls_lesson": LAST, "ls_answers": answers})
    assert not at.exception
    assert WRAP_TITLE[lang] in _subheaders(at)
    assert not _goto(at)
    closing = translate("lessons.wrap_done", lang)
    assert [s.value for s in at.success] == [closing]
    total = len(LESSON_IDS)
    score = translate("lessons.wrap_score", lang, answered=total, total=total, right=total - 1)
    assert score in "\n".join(m.value for m in at.markdown)


@pytest.mark.parametrize("present", ["on", "results"])
def test_presenting_the_wrap_up_keeps_its_buttons_as_navigation(present):
    query = {"lang": "en", "ls_lesson": LAST, "ls_answers": [_right(LAST)], "present": present}
    at = _open(query)
    assert not at.exception
    assert WRAP_TITLE["en"] in _subheaders(at)
    buttons = {f"ls_goto_{i}" for i in LESSON_IDS[:-1]}
    assert buttons <= set(_keyed_under(at.main, "nav_"))  # shown in every mode, like Next
    assert not buttons & set(_keyed_under(at.main, "controls_"))
    assert at.selectbox(key="ls_choose").value == LAST


def test_in_a_paced_class_the_wrap_up_counts_no_verdict_the_class_hides():
    """A locked-in answer counts as answered, and as right only once revealed: the wrap-up
    says how many wait, as the progress bar counts them; the instructor's picker (the same
    select box) marks nothing."""
    teacher, code, key = _instructor()
    learner = _commit(_learner(code), ANSWER)  # lesson 1, right, not revealed
    learner.selectbox(key="ls_choose").select(LAST).run()
    _commit(learner, lesson(LAST).answer, LAST)
    assert WRAP_TITLE["en"] not in _subheaders(learner)  # its answer waits for the reveal
    store().reveal(code, key, LAST)
    learner.run()
    assert not learner.exception
    assert WRAP_TITLE["en"] in _subheaders(learner)
    text = "\n".join(m.value for m in learner.markdown)
    assert "You answered 2 of the 13 lessons, 1 of them right." in text
    assert "2 answered, 1 right" in learner.get("progress")[0].proto.text
    waiting = [c.value for c in learner.caption if "instructor's reveal" in c.value]
    assert waiting == [translate("lessons.wrap_waiting", "en", count=1)]
    assert FIRST not in _goto(learner) and "which_axis" in _goto(learner)
    options = teacher.run().selectbox(key="cl_pick").options
    assert options == [_title(i) for i in LESSON_IDS]


def test_a_label_the_picker_no_longer_lists_keeps_the_lesson_of_a_fresh_session(monkeypatch):
    """A mark added since the browser drew the menu: the browser may send the picker a label
    this run does not list, in a session that never moved (no ``ls_lesson`` yet).  The
    current lesson stays, and the page does not fail."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState
    from streamlit.testing.v1.element_tree import Selectbox

    at = _open({"lang": "en"})
    stale = f"5. {translate('lessons.geometry.title', 'en')}{MARK['en']}"
    drawn = Selectbox._widget_state

    def sent(box):
        if box.key != "ls_choose":
            return drawn.fget(box)
        state = WidgetState()
        state.id, state.string_value = box.id, stale
        return state

    monkeypatch.setattr(Selectbox, "_widget_state", property(sent))
    at.run()
    assert not at.exception
    assert at.header[0].value.startswith(f"1. {translate('lessons.why_normalize.title', 'en')}")
