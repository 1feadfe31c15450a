"""Lessons page sections (Streamlit): a lesson in its stages, and the instructor's sheet.

A lesson is shown in order: ``setup`` (title, idea, maths, question), the learner's
prediction (a widget; ``commit_point`` says what a committed one shows: locked in, then the
verdict), then, once it is committed (in a paced class, once revealed), ``explanation`` (why,
maths, the link that opens the page already configured).  Nothing before the reveal states
the answer.  Under the last lesson's explanation, ``wrap_up`` closes the course.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui import landing, presenting
from ui.formatting import literal
from ui.i18n import t
from ui.lessons.catalog import LESSON_IDS, LESSONS, Lesson, score, unanswered
from ui.lessons.targets import TARGETS, query_text, target_query
from ui.url.pages import DEFAULT_PAGE, PAGES

PAGE_ICONS = {
    "vector_lab": ":material/calculate:",
    "axes": ":material/view_in_ar:",
    "depth": ":material/stacked_line_chart:",
    "kernels": ":material/memory:",
    "dumps": ":material/upload_file:",
    "geometry": ":material/language:",
}


def option_label(item: Lesson, option: str) -> str:
    """How an answer is named in a verdict: "(b) −1.3416"."""
    return f"({option}) {_tr(item, f'options.{option}')}"


def app_root(page_url: str, url_path: str) -> str:
    """The app's address from the current page's address and that page's ``url_path``.

    ``http://host:8501/lessons`` -> ``http://host:8501``; a server under a base path
    (``http://host/normscope/lessons``) keeps it; the default page (``http://host:8501/``)
    is the root itself.  The query and fragment are dropped.
    """
    parts = urlsplit(page_url or "")
    path = parts.path.rstrip("/")
    if url_path and path.endswith("/" + url_path):
        path = path[: -len(url_path) - 1]
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")).rstrip("/")


def page_address(root: str, url_path: str, query: str) -> str:
    """The full address of a page with a query: ``root/url_path?query``; ``url_path`` ""
    for the app's default page, which is served at the root itself."""
    address = f"{root}/{url_path}"
    return f"{address}?{query}" if query else address


def _tr(item: Lesson, part: str) -> str:
    return t(f"lessons.{item.id}.{part}", **item.texts())


def _tally(answers: dict[str, str], scored: dict[str, str]) -> tuple[int, int]:
    """(answered, right): every committed answer counts as answered; only those of
    ``scored`` (in a class, those whose answer shows to this learner) count as right."""
    return len(answers), score(scored)[1]


def progress(item: Lesson, answers: dict[str, str], scored: dict[str, str]) -> None:
    """Where the learner is, with what they answered and got right (``_tally``)."""
    number = LESSON_IDS.index(item.id) + 1
    answered, right = _tally(answers, scored)
    st.progress(
        number / len(LESSONS),
        text=t(
            "lessons.progress", number=number, total=len(LESSONS), answered=answered, right=right
        ),
    )


def setup(item: Lesson, present: str) -> DeltaGenerator:
    """The first stage: the lesson's title, the idea and maths that set up the question, and
    the question; returns where the prediction goes, under the question.  Nothing here
    states the answer.

    While presenting, the idea and maths sit beside the question rather than above it: on a
    16:9 projector (whose type grows with the screen, present.css) the options and Commit
    then fit the first screen with the maths, where stacked they fell a screen below it.
    A narrow screen stacks the two columns in the same order as without them."""
    number = LESSON_IDS.index(item.id) + 1
    st.header(f"{number}. {_tr(item, 'title')}", anchor=False)
    idea, question = st.columns(2, gap="large") if present != "off" else (st.container(),) * 2
    with idea, st.container(key="ls_idea"):  # its maths fit the column (present.css)
        st.markdown(_tr(item, "idea"))
        for block in item.maths:
            st.latex(block)
    with question, st.container(key="ls_question"):  # its heading level with the idea's text
        st.subheader(t("lessons.predict"), anchor=False)
        st.markdown(f"**{_tr(item, 'question')}**")
    return question


def commit_point(
    item: Lesson,
    chosen: str | None,
    revealed: bool,
    counted: bool,
    replaceable: bool = True,
    from_link: bool = False,
    alone: bool = True,
) -> None:
    """What a committed prediction shows under the options: once revealed, the verdict
    (``verdict``; beside the question on a projector, on the first screen, where the
    explanation under both columns was not); before that, that it is locked in and, when
    ``counted``, counted in the class, where "Answer again" replaces the vote only while
    ``replaceable`` (voting is open).  Before a commit, how the page works, for one learner
    ``alone`` at the keyboard (not while presenting: not for the room; not in a class, whose
    banner says when the answer shows)."""
    if chosen is None and alone and not presenting.presenting():
        st.caption(t("lessons.predict_help"))
    elif chosen is not None and revealed:
        verdict(item, chosen, from_link)
    elif chosen is not None:
        key = "lessons.locked"
        if counted:
            key = "lessons.locked_counted" if replaceable else "lessons.locked_counted_closed"
        st.info(t(key, option=option_label(item, chosen)), icon=":material/lock:")


def explanation(item: Lesson, lang: str, present: str) -> None:
    """The last stage, after the reveal gate and its verdict (``commit_point``): why, the
    maths, the page that shows it, and what to try there."""
    st.markdown(_tr(item, "reveal"))
    st.markdown(_tr(item, "explain"))
    for block in item.answer_maths:
        st.latex(block)
    link(item, lang, present)
    st.markdown(f"**{t('lessons.try_next')}** {_tr(item, 'next')}")


def wrap_up(
    answers: dict[str, str],
    scored: dict[str, str],
    from_link: int = 0,
    waiting: str = "lessons.wrap_waiting",
) -> None:
    """The course's end, under the last lesson's explanation: the progress bar's counts
    (``_tally``: in a class, no verdict the class still hides), how many answers wait for
    the instructor's reveal and how many of them came with the link (``from_link``), then
    what is left (the buttons to it follow: a widget's) or, with every lesson answered, a
    closing line."""
    answered, right = _tally(answers, scored)
    st.divider()
    st.subheader(t("lessons.wrap_title"), anchor=False)
    st.markdown(t("lessons.wrap_score", answered=answered, total=len(LESSONS), right=right))
    if unscored := answered - len(scored):  # ``waiting``: the words for them
        st.caption(t(waiting, count=unscored))
    if from_link:
        st.caption(
            t("lessons.wrap_from_link" + ("_one" if from_link == 1 else ""), count=from_link)
        )
    if unanswered(answers):
        st.markdown(t("lessons.wrap_unanswered"))
    else:
        st.success(t("lessons.wrap_done"), icon=":material/school:")


def verdict(item: Lesson, chosen: str, from_link: bool = False) -> None:
    """Whether the committed ``chosen`` option is the engine's answer; one that came with the
    link is not called the learner's choice, and they are told how to make their own."""
    answer = option_label(item, item.answer)
    words = "lessons.link_" if from_link else "lessons."
    if chosen == item.answer:
        st.success(t(words + "right", option=answer), icon=":material/check_circle:")
    else:
        st.error(
            t(words + "wrong", chosen=option_label(item, chosen), option=answer),
            icon=":material/cancel:",
        )
    landing.shown(f"verdict_{item.id}")  # after a Commit here, scrolled into view
    if from_link:
        st.caption(t("lessons.link_answer"))


def link(item: Lesson, lang: str, present: str) -> None:
    """The button that opens the lesson's page already configured."""
    target = TARGETS[item.id]
    st.page_link(
        f"app_pages/{target.page}.py",
        label=_tr(item, "link"),
        icon=PAGE_ICONS.get(target.page, ":material/open_in_new:"),
        query_params=target_query(target, PAGES[target.page], lang, present),
    )


def sheet(lang: str, present: str, page_url: str, hidden: dict[str, str] | None = None) -> None:
    """Every lesson's link, question and answer, in order: a page to print.  A lesson in
    ``hidden`` (a learner in a class, before the answer may show) has its question and, in
    place of its answer and link, the line of its key that says why."""
    root = app_root(page_url, "lessons")
    with st.container(key="ls_sheet"):
        st.header(t("lessons.sheet_title"), anchor=False)
        # a learner in a class: the answers it keeps back are said up front, not promised
        st.caption(t("lessons.sheet_intro_class" if hidden else "lessons.sheet_intro"))
        if present != "off":
            st.caption(t("lessons.sheet_present", mode=t(f"app.present.{present}")))
        for number, item in enumerate(LESSONS, 1):
            target = TARGETS[item.id]
            st.markdown(f"**{number}. {_tr(item, 'title')}**")
            lines = [t("lessons.sheet_question", text=_tr(item, "question"))]
            if hidden and item.id in hidden:
                lines.append(f"*{t(hidden[item.id])}*")
                st.markdown("\n\n".join(lines))
                continue
            lines.append(t("lessons.sheet_answer", text=option_label(item, item.answer)))
            query = query_text(target_query(target, PAGES[target.page], lang, present))
            path = "" if target.page == DEFAULT_PAGE else target.page
            address = page_address(root, path, query)
            lines.append(f"[{_tr(item, 'link')}]({address})  \n{literal(address)}")
            st.markdown("\n\n".join(lines))
