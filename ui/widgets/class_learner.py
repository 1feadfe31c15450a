"""A learner in a class: joining from the join link and following the class (its
prediction, counted or not: ``class_vote``).

The join link is the lessons page with ``ls_class=<code>``.  The browser joins once per
session; its learner token (the anonymous id the store keeps only hashed) lives in the
session and in a cookie for the class, so a reload or a second tab of the same browser is
the same learner.  The browser makes that token itself, before the page joins, and keeps it
in the cookie (``_browser_token``): two pages opened at once (a double tap, a QR code scanned
twice) both find the same one and join as one learner, whereas a token made by the server at
the join would reach the cookie only after the first page had drawn, too late for the second.
Nothing else tells a browser apart before it has the cookie: a class shares one network
address, and many of its browsers are the same model.  A refused code is remembered for the
session and not tried again on every rerun (each wrong try counts against the room's
network); a busy database is asked again on the next run.

While in a class the page polls the store every ``POLL_S`` seconds and reruns when the
instructor changes something this learner sees: a round, closed voting, the reveal, paced
mode, or "everyone to lesson N".
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from classroom import rules
from classroom.rules import LearnerView
from engine.errors import EngineError
from ui import landing
from ui.classroom import COOKIE_PREFIX, client, refusal, store
from ui.errors import error_text, shown
from ui.i18n import t
from ui.lessons.catalog import LESSON_IDS
from ui.url.pages import LESSONS_PAGE as P
from ui.widgets.lessons import COMMITTED_HERE, JUST_COMMITTED, committed_here

POLL_S = 1.5  # a reveal or a move reaches every learner within this and one rerun
SETTLE_MS = 400  # without Web Locks, a new token is read back this long after its write
TOKENS = "_cl_tokens"  # {code: learner token} of this session
FAILED = "_cl_failed"  # (the code as given, its refusal): not tried again
MOMENTARY = ("classroom.busy",)  # refusals not remembered: the next run asks again
ENDED = "classroom.ended"  # the refusal of a class its instructor ended
SEEN = "_cl_seen"  # what the last full run drew of the class (compared by the poll)
MOVES = "_cl_moves"  # {class: its move count this learner has followed}
LINKS_CHECKED = "_cl_links_checked"  # classes whose link answers of every lesson were checked
VOTES_SHOWN = "_cl_votes_shown"  # (class, lesson) whose own vote this session has looked up


@dataclass(frozen=True)
class Member:
    """This browser in a class, and the class's state for the lesson being shown."""

    code: str
    token: str
    view: LearnerView


def _leave() -> None:
    """Out of the class; joining it again in this tab is a join like the first (answers
    made meanwhile, alone, are asked again, and every lesson's are checked)."""
    code = rules.normalize_code(st.session_state.get("ls_class", "")) or ""
    st.session_state.get(TOKENS, {}).pop(code, None)
    st.session_state.get(LINKS_CHECKED, set()).discard(code)
    st.session_state["ls_class"] = ""


def _leave_button(text: str = "classroom.leave") -> None:
    st.button(t(text), key="cl_leave", icon=":material/logout:", on_click=_leave)


# The browser's learner token for a class, kept in the class's cookie for the class's
# lifetime.  Before the page joins (``known`` empty) the browser reads the cookie, or makes
# the token (128 random bits, URL-safe, as ``rules.secret_shaped`` takes) and writes it, and
# reports it; one page at a time where the browser has Web Locks (HTTPS and localhost).
# Without them (a class served over plain http on the room's network) two pages opened at
# once can both find no cookie and both write one: each then waits ``SETTLE_MS`` and reads
# the cookie again, which holds the later write for both.  Under the lock the cookie is read
# and written through the Cookie Store API where there is one (HTTPS and localhost, as Web
# Locks): its write resolves once the browser has stored the cookie, whereas
# ``document.cookie``'s reaches the browser's cookie store after the script goes on, so the
# lock's next page could read the cookie before it holds the first page's token.  Once
# joined, the cookie holds the page's token.
_TOKEN_JS = r"""
export default function ({ data, setStateValue }) {
  const set = (token) =>
    (document.cookie = `${data.cookie}=${token}; path=/; max-age=${data.max_age}; SameSite=Lax`);
  const read = () => {
    const pair = document.cookie.split("; ").find((c) => c.startsWith(data.cookie + "="));
    return shaped(pair ? pair.slice(data.cookie.length + 1) : "");
  };
  const made = () => {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    const text = btoa(String.fromCharCode(...bytes));
    return text.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };
  const shaped = (token) => (/^[A-Za-z0-9_-]{22,64}$/.test(token) ? token : "");
  const stored = async () => {  // the cookie, read after every earlier write has landed
    if (!window.cookieStore) return read();
    const cookie = await cookieStore.get(data.cookie);
    return shaped(cookie ? cookie.value : "");
  };
  const store = async (token) => {  // resolves once the browser holds the cookie
    if (!window.cookieStore) return set(token);
    await cookieStore.set({
      name: data.cookie, value: token, path: "/", sameSite: "lax",
      expires: Date.now() + data.max_age * 1000,
    });
  };
  const join = async (settle) => {
    let token = "";
    try {
      token = await stored();
      if (!token) {
        token = made();
        await store(token);
        if (settle) {  // no lock: of two pages that both wrote, the later write is both's
          await new Promise((done) => setTimeout(done, data.settle_ms));
          token = read() || token;
        }
      }
    } catch (error) {  // no cookies here (a sandboxed frame): a learner of this page alone
      token = made();
    }
    setStateValue("token", token);
  };
  if (data.known) {
    try { if (read() !== data.known) set(data.known); } catch (error) {}
  } else if (navigator.locks) {
    navigator.locks.request(data.cookie, () => join(false));
  } else {
    join(true);
  }
}
"""
_BROWSER_TOKEN = st.components.v2.component("normscope_class_token", js=_TOKEN_JS)
BROWSER = "_cl_browser_"  # + the class code: the token the browser reported (its state)


def _browser_token(code: str, known: str | None) -> str | None:
    """This browser's learner token for the class ``code``: the cookie the page was opened
    with, else what the browser reports (None until it has: its report reruns the page);
    only a token as the browser makes it (``rules.secret_shaped``).
    ``known``: the token this session joined with, which the cookie is to hold."""
    reported = _BROWSER_TOKEN(
        key=BROWSER + code,
        data={
            "cookie": COOKIE_PREFIX + code,
            "max_age": rules.CLASS_LIFETIME_S,
            "known": known,
            "settle_ms": SETTLE_MS,
        },
        on_token_change=lambda: None,
    )
    return _opened_with(code) or rules.secret_shaped(reported.get("token"))


def _opened_with(code: str) -> str | None:
    """The learner token in the class's cookie when the page was opened: this browser had
    joined the class before (the cookie holds the token from its first join)."""
    return rules.secret_shaped(st.context.cookies.get(COOKIE_PREFIX + code))


def _refused(typed: str, error: EngineError, member: bool = True) -> None:
    """Say why this browser is not (or no longer) in the class, with a way out of it; an
    ended class is no error of the learner's: their answers stay, the lessons go on (said to
    a ``member``, a session that was in the class, or in words that fit anyone: a browser
    whose join is refused may have been a member, or only have made its cookie just before).
    The refusal is remembered for the session unless it is a momentary one (a busy
    database)."""
    if error.key not in MOMENTARY:
        st.session_state[FAILED] = (typed, error, member)
    if error.key == ENDED:
        said = "classroom.ended_learner" if member else "classroom.ended_newcomer"
        st.info(t(said, **error.params), icon=":material/event_busy:")
    elif error.key == "classroom.no_class" and member and _was_member(typed):
        # its time ran out and it is gone: not "check the code with your instructor"
        st.info(t("classroom.expired_learner", **shown(error.params)), icon=":material/event_busy:")
    else:
        st.error(error_text(error), icon=":material/group_off:")
    _leave_button("classroom.go_on")  # never joined, or its class is gone: nothing to leave


def _was_member(typed: str) -> bool:
    """Whether this session joined the class ``typed`` names."""
    return (rules.normalize_code(typed) or "") in st.session_state.get(TOKENS, {})


def _join(typed: str) -> tuple[str, str] | None:
    """(code, token) of this browser in the class ``typed``, joining it if needed, with the
    token the browser made (``_browser_token``); until the browser has reported it, the page
    says it is joining and stops there (nothing of a lesson shows outside its class)."""
    code = rules.normalize_code(typed) or ""
    token = st.session_state.setdefault(TOKENS, {}).get(code)
    browsers = _browser_token(code, token) if code else None  # every run: a steady place
    if token is not None:
        return code, token
    if code and browsers is None:
        st.caption(t("classroom.joining"))
        st.stop()
    token, error = refusal(lambda: store().join(typed, client(), browsers))
    if error is not None:  # its cookie proves nothing: the browser writes it before joining
        _refused(typed, error, member=False)
        return None
    st.session_state[TOKENS][code] = token
    # answers committed before joining (alone, or in a class left since) are not this class's
    # predictions, some made with the answer shown: asked again, as a link's are
    st.session_state.pop(COMMITTED_HERE, None)
    st.session_state.pop(JUST_COMMITTED, None)
    return code, token


def _signature(view: LearnerView) -> tuple:
    return (view.lesson, view.state, view.paced, view.moves, view.revealed)


@st.fragment(run_every=POLL_S)
def _poll(code: str, token: str) -> None:
    """Reruns the page when the class changed what this learner sees, or ended."""
    lesson_id = st.session_state.get("ls_lesson", P["ls_lesson"].default)
    view, error = refusal(lambda: store().learner_view(code, token, lesson_id))
    ended = error is not None and error.key == ENDED
    if ended or (view is not None and _signature(view) != st.session_state.get(SEEN)):
        st.rerun()


def linked() -> bool:
    """Whether this session came with a class's join link (``ls_class``), joined or not: its
    page keeps a class's layout while a join is refused for a moment, or after the class
    ended."""
    return bool(st.session_state.get("ls_class"))


def membership() -> Member | None:
    """This browser's class (joined on the first run with ``ls_class``), or None.

    Draws the class's banner or why the code was refused; follows "everyone to lesson N"
    by moving ``ls_lesson`` before the lesson picker draws.  Call before the picker.
    """
    typed = st.session_state.get("ls_class", "")
    if not typed:
        return None
    failed = st.session_state.get(FAILED)
    if failed is not None and failed[0] == typed:
        _refused(*failed)
        return None
    joined = _join(typed)
    if joined is None:
        return None
    code, token = joined
    lesson_id = st.session_state.get("ls_lesson", P["ls_lesson"].default)
    view, error = refusal(lambda: store().learner_view(code, token, lesson_id))
    followed = st.session_state.setdefault(MOVES, {})  # per class: a second one counts anew
    if view is not None and view.class_lesson and view.moves != followed.get(code):
        followed[code] = view.moves
        if view.class_lesson != lesson_id:
            st.session_state["ls_lesson"] = view.class_lesson
            landing.moved()  # the lesson the class moved to opens at its title
            number = LESSON_IDS.index(view.class_lesson) + 1
            st.toast(t("classroom.moved", number=number), icon=":material/groups:")
            moved_to = view.class_lesson
            view, error = refusal(lambda: store().learner_view(code, token, moved_to))
    if view is None:  # the class ended or expired since this browser joined
        _refused(typed, error)
        return None
    st.session_state[SEEN] = _signature(view)
    dropped = _ask_unclicked_again(view)
    _show_own_vote(code, view)
    if code not in st.session_state.setdefault(LINKS_CHECKED, set()):  # once: other lessons
        st.session_state[LINKS_CHECKED].add(code)
        for lesson_id in sorted(
            {a.rpartition(".")[0] for a in committed_answers()} - {view.lesson}
        ):
            other, _ = refusal(store().learner_view, code, token, lesson_id)
            if other is not None:
                dropped += _ask_unclicked_again(other)
    with st.container(key="cl_banner", horizontal=True, vertical_alignment="center"):
        how = "paced" if view.paced else "self_paced"
        st.caption(t(f"classroom.in_class_{how}", code=rules.shown_code(code)))
        _leave_button()  # the votes stay counted; this browser goes on without the class
    if dropped:  # as a link's dropped setting is said everywhere else
        key = "classroom.link_answer_dropped" + ("_one" if dropped == 1 else "")
        st.info(t(key, count=dropped), icon=":material/link_off:")
    _poll(code, token)
    return Member(code, token, view)


def committed_answers() -> list[str]:
    """The page's committed answers (``ls_answers``), as ``"<lesson>.<option>"``."""
    return list(st.session_state.get("ls_answers", P["ls_answers"].default))


def _ask_unclicked_again(view: LearnerView) -> int:
    """A learner's address holds their committed answer, so a classmate's shared link brings
    one: an answer for the lesson shown that no click in this session made and that would be
    counted as a new vote (voting open, the answer not yet shown with a vote, none of this
    learner's votes) is dropped and asked for.  A reload of the learner's own address keeps
    it (it is their vote), as it keeps one that voting closed on or practice made.  Returns
    how many answers it dropped (0 or 1)."""
    committed = committed_answers()
    mine = [a for a in committed if a.rpartition(".")[0] == view.lesson]
    if not mine or committed_here(view.lesson):
        return 0
    if view.state.voting_open and not view.final and mine[0].rpartition(".")[2] not in view.votes:
        drop_answer(view.lesson)
        return 1
    return 0


def drop_answer(lesson_id: str) -> None:
    """Take the page's committed answer to ``lesson_id`` back, so it is asked again."""
    kept = [a for a in committed_answers() if a.rpartition(".")[0] != lesson_id]
    st.session_state["ls_answers"] = kept
    st.session_state[f"ls_pick_{lesson_id}"] = None  # not popped: the browser keeps a tick


def _show_own_vote(code: str, view: LearnerView) -> None:
    """A learner back through the join link (a reload, a QR code scanned again: the same
    browser, so the same learner) saw the lesson unanswered, "Commit" offered, while the class
    counted their vote: on a session's first view of a lesson, the vote of its current round
    is its committed answer.  Once only, so "Answer again" still clears it."""
    seen = st.session_state.setdefault(VOTES_SHOWN, set())
    if (code, view.lesson) in seen:
        return
    seen.add((code, view.lesson))
    vote = view.votes[-1] if view.votes else None
    committed = committed_answers()
    if vote is None or any(a.rpartition(".")[0] == view.lesson for a in committed):
        return
    st.session_state["ls_answers"] = [*committed, f"{view.lesson}.{vote}"]
    st.session_state[f"ls_pick_{view.lesson}"] = vote
