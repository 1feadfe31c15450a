"""Class mode through AppTest: the Class page (start, live counts, the instructor's actions,
refusals) and a learner on the Lessons page from the join link (counted, paced, second round,
following the class), each on an empty class database (``conftest.py``)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from classroom import rules
from classroom.store import ClassStore
from tests.app.conftest import APP, fragment_ids, scrolls_to
from ui import landing
from ui.classroom import counts_for_people, store
from ui.formatting import literal
from ui.i18n import translate
from ui.lessons.catalog import LESSON_IDS, lesson
from ui.widgets import class_learner

FIRST = LESSON_IDS[0]
ANSWER = lesson(FIRST).answer
WRONG = next(o for o in "abcd" if o != ANSWER)


def _open(page: str, query: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    at.switch_page(f"app_pages/{page}.py")
    return at.run()


def _button(at, label: str):
    (button,) = [b for b in at.button if b.label == label]
    return button


def _counts(at) -> str:
    """The instructor's line of counts (joined, answered per round)."""
    (line,) = [m.value for m in at.markdown if " joined · " in m.value]
    return line


def _texts(at, *kinds: str) -> str:
    return "\n".join(e.value for kind in kinds for e in at.get(kind))


def _instructor() -> tuple[AppTest, str, str]:
    at = _open("classroom", {"lang": "en"})
    _button(at, "Start a class").click().run()
    return at, at.query_params["cl_code"], at.session_state["cl_key"]


def _learner(code: str, lang: str = "en", token: str | None = None, **more: str) -> AppTest:
    """A browser opening the join link (with ``more`` parameters): its page reports the
    learner token the browser made before joining (``class_learner._browser_token``), or
    ``token``, the one it has."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"lang": lang, "ls_class": code, **more})
    at.switch_page("app_pages/lessons.py")
    if rules.normalize_code(code):
        browser = {"token": token or rules.new_secret(128)}
        at.session_state[class_learner.BROWSER + rules.normalize_code(code)] = browser
    return at.run()


def _commit(at: AppTest, option: str, lesson_id: str = FIRST) -> AppTest:
    at.radio(key=f"ls_pick_{lesson_id}").set_value(option).run()
    return at.button(key=f"ls_commit_{lesson_id}").click().run()


def test_starting_a_class_gives_a_code_and_a_private_key_in_the_instructor_link():
    at, code, key = _instructor()
    assert rules.normalize_code(code) == code and len(key) >= 40
    assert at.title[0].value == f"Class {rules.shown_code(code)}"
    assert key not in _texts(at, "markdown")  # only in the private link's box
    assert key in "\n".join(c.value for c in at.code)
    assert _counts(at).startswith("**0** joined · **0** answered")
    assert not at.exception
    # the join link, which wraps after "/", "?" and "&" only
    join = f"/<wbr>lessons?<wbr>lang=en&amp;<wbr>ls_class={code}</p>"
    assert join in "\n".join(e.proto.body for e in at.get("html"))


def test_learners_from_the_join_link_are_counted_in_both_languages():
    teacher, code, key = _instructor()
    english, chinese = _learner(code), _learner(code, "zh")
    assert rules.shown_code(code) in _texts(english, "caption")
    assert f"课堂 {rules.shown_code(code)}" in _texts(chinese, "caption")
    _commit(english, ANSWER)
    _commit(chinese, WRONG)
    said = [e.value for kind in ("success", "info", "warning") for e in chinese.get(kind)]
    assert len(said) == 1 and said[0].startswith("已锁定并计入课堂：")  # one message, not two
    assert _texts(english, "info").startswith("Locked in and counted in the class: (")
    assert _counts(teacher.run()).startswith("**2** joined · **2** answered")
    room = store().room(code, key, FIRST)
    assert room.counts[0][ANSWER] == 1 and room.counts[0][WRONG] == 1
    # a learner may leave at any time (the button was there only beside a link's dropped
    # answers): the vote stays counted and the page goes on without the class
    english.button(key="cl_leave").click().run()
    assert rules.shown_code(code) not in _texts(english, "caption") and not english.exception
    assert _counts(teacher.run()).startswith("**2** joined · **2** answered")
    assert chinese.button(key="cl_leave").label == "退出课堂"


def test_a_join_link_opened_twice_at_once_in_one_browser_is_one_learner():
    """A double tap or a QR code scanned twice: both pages join with the token the browser
    made before either joined, so the class counts one learner; a second browser behind
    the same address (a class shares one) is a second learner."""
    teacher, code, key = _instructor()
    token = rules.new_secret(128)
    first, second = _learner(code, token=token), _learner(code, token=token)
    for page in (first, second):
        assert rules.shown_code(code) in _texts(page, "caption") and not page.exception
    _commit(first, ANSWER)
    _commit(second, WRONG)  # a change of mind in the other tab replaces the vote
    assert _counts(teacher.run()).startswith("**1** joined · **1** answered")
    _learner(code)  # another browser in the room
    assert _counts(teacher.run()).startswith("**2** joined · **1** answered")
    assert store().room(code, key, FIRST).counts[0][WRONG] == 1


def test_a_page_waits_for_its_browsers_token_before_joining_and_shows_no_lesson():
    """Until the browser has reported the token it keeps for the class, the page says it is
    joining and draws no lesson (in a paced class, its answer is hidden only once joined)."""
    teacher, code, _ = _instructor()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"lang": "zh", "ls_class": code})
    at.switch_page("app_pages/lessons.py")
    at.run()
    assert not at.exception and "正在加入课堂" in _texts(at, "caption")
    assert not at.radio and _counts(teacher.run()).startswith("**0** joined")
    at.session_state[class_learner.BROWSER + code] = {"token": rules.new_secret(128)}
    at.run()  # the browser's report reruns the page
    assert f"课堂 {rules.shown_code(code)}" in _texts(at, "caption") and at.radio
    assert _counts(teacher.run()).startswith("**1** joined")


def test_a_paced_class_shows_the_answer_only_once_revealed():
    teacher, code, _ = _instructor()
    learner = _commit(_learner(code), WRONG)
    assert "Not quite" not in _texts(learner, "error")
    assert not any(
        "right answer" in label for label in learner.radio(key=f"ls_pick_{FIRST}").options
    )
    assert not at_least_one_page_link(learner)
    assert not scrolls_to(learner, f"verdict_{FIRST}")  # nothing shown yet: the scroll waits
    _button(teacher.run(), "Reveal the answer").click().run()
    learner.run()
    assert "Not quite" in _texts(learner, "error")
    assert "revealed the answer" in _texts(learner, "info")
    assert at_least_one_page_link(learner)
    assert scrolls_to(learner, f"verdict_{FIRST}")  # the reveal brings the verdict into view, once
    assert not scrolls_to(learner.run(), f"verdict_{FIRST}")


def test_a_paced_learners_commit_counts_as_answered_and_its_verdict_waits_for_the_reveal():
    teacher, code, _ = _instructor()
    learner = _commit(_learner(code), ANSWER)
    assert "· 1 answered, 0 right" in learner.get("progress")[0].proto.text
    _button(teacher.run(), "Reveal the answer").click().run()
    assert "· 1 answered, 1 right" in learner.run().get("progress")[0].proto.text


def at_least_one_page_link(at) -> bool:
    return len(at.get("page_link")) > 0


def test_the_counts_csv_is_read_at_the_click_with_a_vote_the_page_never_reran_for(monkeypatch):
    """The chart redraws every second without the rest of the instructor's page: the CSV is
    made when the button is clicked (a deferred download), so a late vote is in it."""
    import streamlit as st

    given = {}
    real = st.download_button

    def spy(label, **kwargs):
        given[kwargs.get("key")] = kwargs["data"]
        return real(label, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    teacher, code, key = _instructor()
    _commit(_learner(code), WRONG)  # after the instructor's page last ran
    rows = given["cl_csv"]().splitlines()
    title = translate(f"lessons.{FIRST}.title", "en")
    assert f"{FIRST},1,{WRONG},1,{title},no" in rows
    assert rows == counts_for_people(store().export_csv(code, key), "en").splitlines()
    store().end_class(code, key)  # in the instructor's other tab: the votes are deleted
    assert given["cl_csv"]() == "lesson,round,option,votes,title,right\n"  # the header alone


def test_a_second_round_unlocks_the_prediction_and_counts_apart():
    teacher, code, key = _instructor()
    learner = _commit(_learner(code), WRONG)
    _button(teacher.run(), "Second round").click().run()
    learner.run()
    assert "Second round" in _texts(learner, "info")
    assert learner.radio(key=f"ls_pick_{FIRST}").value is None  # asked again
    _commit(learner, ANSWER)
    room = store().room(code, key, FIRST)
    assert room.counts == (
        {**dict.fromkeys("abcd", 0), WRONG: 1},
        {**dict.fromkeys("abcd", 0), ANSWER: 1},
    )
    assert "**1** in round 1, **1** in round 2" in _counts(teacher.run())
    learner.run()  # a later run does not unlock it again
    assert learner.radio(key=f"ls_pick_{FIRST}").value == ANSWER


def test_closed_voting_counts_nothing_and_says_so():
    teacher, code, key = _instructor()
    learner = _learner(code)
    _button(teacher.run(), "Close voting").click().run()
    _commit(learner.run(), ANSWER)
    assert "not counted in the class unless your instructor opens voting again" in _texts(
        learner, "caption"
    )
    assert store().room(code, key, FIRST).answered == (0,)
    _button(teacher.run(), "Reopen voting").click().run()
    learner.run()  # as the caption said: counted once voting is open again
    assert store().room(code, key, FIRST).counts[0][ANSWER] == 1


def test_a_prediction_after_the_reveal_is_not_said_to_count_if_voting_reopens():
    """A revealed lesson's voting never opens again: a commit after the reveal is not
    counted, and the caption does not promise otherwise."""
    teacher, code, key = _instructor()
    learner = _learner(code)
    _button(teacher.run(), "Reveal the answer").click().run()
    _commit(learner.run(), ANSWER)
    said = _texts(learner, "caption")
    assert "The answer has been revealed: this prediction is not counted" in said
    assert "unless your instructor opens voting again" not in said
    assert store().room(code, key, FIRST).answered == (0,)


def test_a_counted_vote_under_closed_voting_is_not_said_to_be_replaceable():
    """A learner's counted vote, then the instructor closes voting: the locked-in notice no
    longer says "Answer again" replaces it (an answer now is not counted)."""
    teacher, code, key = _instructor()
    learner = _commit(_learner(code), WRONG)
    assert "Answer again replaces your vote" in _texts(learner, "info")
    _button(teacher.run(), "Close voting").click().run()
    said = _texts(learner.run(), "info")
    assert (
        "Locked in and counted in the class" in said and "Voting on this question is closed" in said
    )
    assert "Answer again replaces" not in said
    assert said.count("Voting on this question is closed") == 1  # said once, in the notice


def _moved_to_the_third_lesson() -> AppTest:
    """A learner whose class the instructor has moved to lesson 3, after its next run."""
    teacher, code, _ = _instructor()
    learner = _learner(code)
    teacher.selectbox(key="cl_pick").set_value(LESSON_IDS[2]).run()
    assert landing.MOVED not in teacher.session_state  # the Class page stays where it is
    _button(teacher, "Everyone to lesson 3").click().run()
    learner.run()
    assert learner.session_state["ls_lesson"] == LESSON_IDS[2]
    return learner


def test_everyone_to_lesson_n_moves_a_following_learner():
    learner = _moved_to_the_third_lesson()
    assert learner.header[0].value.startswith("3. ")
    moved = f'data-moved-to="{LESSON_IDS[2]}"'  # opened at its title (ui.landing.to_top)
    assert [h for h in learner.get("html") if moved in h.proto.body]
    learner.button(key="ls_previous").click().run()  # the learner may still look back
    assert learner.session_state["ls_lesson"] == LESSON_IDS[1]


def test_a_forged_instructor_key_is_refused_and_changes_nothing():
    teacher, code, key = _instructor()
    forged = _open("classroom", {"lang": "en", "cl_code": code, "cl_key": "x" * 43})
    assert "has this instructor’s key" in _texts(forged, "error")
    assert not [b for b in forged.button if b.label == "Reveal the answer"]
    assert store().room(code, key, FIRST).state == rules.LessonState()


def test_an_instructors_address_without_its_key_says_where_the_key_is():
    """The address bar of a presenting instructor, copied into another browser."""
    teacher, code, key = _instructor()
    copied = _open("classroom", {"lang": "en", "cl_code": code})
    said = _texts(copied, "error")
    assert f"names class **{rules.shown_code(code)}** but holds no instructor’s key" in said
    assert "is wrong" not in said and not [
        b for b in copied.button if b.label == "Reveal the answer"
    ]
    for hostile in ("**ab** :red[x]", ":material/home:", "😀"):  # no code: said so, as given
        said = _texts(_open("classroom", {"lang": "en", "cl_code": hostile}), "error")
        assert f"`cl_code` is {literal(hostile)}, which is not a class code" in said, said
        assert "names class" not in said  # never treated as a class that exists


def test_a_wrong_code_is_refused_once_and_the_lessons_go_on(monkeypatch):
    joins, real = [], ClassStore.join
    monkeypatch.setattr(ClassStore, "join", lambda *args: joins.append(args) or real(*args))
    learner = _learner("zzzzzz")
    assert "No open class has the code **ZZZ-ZZZ**." in _texts(learner, "error")
    _commit(learner, ANSWER)
    assert "Right" in _texts(learner, "success")  # the lesson itself works without a class
    assert len(joins) == 1  # not guessed again on every rerun
    malformed = _learner("<b>1</b>")
    assert "is not a class code" in _texts(malformed, "error")
    assert not malformed.exception
    # the way out is named for a learner who never joined: not "Leave the class"
    assert learner.button(key="cl_leave").label == "Go on without a class"
    learner.button(key="cl_leave").click().run()
    assert not _texts(learner, "error") and "ls_class" not in learner.query_params


def test_a_flood_of_votes_is_refused_with_a_message_and_the_first_vote_stands(monkeypatch):
    monkeypatch.setattr(rules, "VOTE_LIMIT", rules.Limit(1, 60.0))
    teacher, code, key = _instructor()
    learner = _commit(_learner(code), WRONG)
    learner.button(key=f"ls_again_{FIRST}").click().run()
    _commit(learner, ANSWER)
    assert "More than 1 votes" in _texts(learner, "warning")
    assert store().room(code, key, FIRST).counts[0][WRONG] == 1


def test_ending_the_class_is_confirmed_and_its_learners_are_told_on_the_next_poll(
    timer_rerun, monkeypatch
):
    teacher, code, key = _instructor()
    learner, other = _commit(_learner(code), ANSWER), _learner(code, "zh")
    teacher.button(key="cl_end").click().run()
    assert teacher.query_params.get("cl_code") is None
    assert "2 joined; 1 of them answered" in _texts(teacher, "success")
    (poll,) = fragment_ids(learner)
    timer_rerun(learner, poll)  # the poll notices the end and reruns the page
    assert f"Your instructor ended class **{rules.shown_code(code)}**" in _texts(learner, "info")
    assert not learner.error and not learner.exception
    assert learner.query_params["ls_answers"] == f"{FIRST}.{ANSWER}"  # their answer stays,
    assert learner.success[0].value.startswith("Right: (")  # now shown as outside a class
    assert "讲师已结束课堂" in _texts(other.run(), "info")
    # a browser whose join is refused is not told of "your" class: it may never have been
    # in it, even with the class's cookie (written before the join), as on a reload
    monkeypatch.setattr(class_learner, "_opened_with", lambda code: rules.new_secret(128))
    for newcomer in (_learner(code), _learner(code).run()):
        said = _texts(newcomer, "info")
        assert f"Class **{rules.shown_code(code)}** has ended" in said
        assert "Your instructor" not in said


@pytest.mark.parametrize("present", ["off", "on"])
def test_the_instructor_key_never_stays_in_the_address_bar_and_the_class_stays(present):
    """The Class page is projected with or without presentation mode: a room that reads
    the address bar never reads the key (the instructor link is in its private box, and
    the browser keeps the key in a cookie for a reload)."""
    at, code, key = _instructor()
    assert "cl_key" not in at.query_params  # just started
    opened = _open("classroom", {"lang": "en", "cl_code": code, "cl_key": key, "present": present})
    assert "cl_key" not in opened.query_params
    assert opened.query_params["cl_code"] == code
    assert not opened.exception
    assert " joined · " in _counts(opened)  # still the instructor's view
    cookie = [h.proto.body for h in opened.get("html") if "normscope_teach_" in h.proto.body]
    assert cookie and key in cookie[0] and "max-age=86400" in cookie[0]
    assert key not in _texts(opened, "markdown", "caption")
    # the instructor link, in its private box: not while presenting
    assert (key in _texts(opened, "code")) == (present == "off")


@pytest.mark.parametrize("lang, go", [("en", "Join the class"), ("zh", "加入课堂")])
def test_a_typed_code_is_checked_as_typed_and_the_refusal_says_what_is_accepted(lang, go):
    """A malformed code got no message and a join link; only the Lessons page refused it."""
    at = _open("classroom", {"lang": lang})
    for typed in ("000000", "ABCDEFG", "<b>x</b>", "ABC-DE1"):
        at.text_input(key="cl_typed").input(typed).run()
        refusal = _texts(at, "error")
        assert f"`{typed}`" in refusal and f"`{rules.CODE_ALPHABET}`" in refusal
        assert not [link for link in at.get("page_link") if link.label.startswith(go)]
    pasted = "https://normscope.example.org/lessons?lang=en&ls_class=ABCDEF" + "x" * 40
    at.text_input(key="cl_typed").input(pasted).run()  # the browser's box takes it whole
    assert at.text_input(key="cl_typed").value == pasted
    assert "`ABCDEFxxxx" in _texts(at, "error")  # the link's code, refused with the reason
    for link in (  # a pasted join link, or an instructor's: its code (never its key)
        "https://normscope.example.org/lessons?lang=en&ls_class=abc-def",
        "http://10.0.0.5:8501/classroom?cl_code=ABCDEF&cl_key=secret",
        "https://normscope.example.org/lessons?lang=en&ls_answers="  # every lesson answered
        + "%2C".join(f"{lesson_id}.a" for lesson_id in LESSON_IDS)
        + "&ls_class=ABCDEF",
    ):
        assert len(link) <= at.text_input(key="cl_typed").proto.max_chars  # the browser keeps it
        at.text_input(key="cl_typed").input(link).run()
        assert _texts(at, "error") == ""
        (joining,) = [j for j in at.get("page_link") if j.label.startswith(go)]
        assert joining.proto.query_string == "ls_class=ABCDEF"
    at.text_input(key="cl_typed").input(" abc-def ").run()  # as it may be typed: a code
    assert _texts(at, "error") == ""
    (link,) = [link for link in at.get("page_link") if link.label.startswith(go)]
    assert link.proto.query_string == "ls_class=ABCDEF"
    assert not at.exception
