"""Presentation mode and the app's own stylesheet.

``present`` is an app-wide URL parameter like ``lang`` (``ui/url/``): "off"; "on" (text
for the back of a room, larger chart fonts (``ui/projected.py``), no sidebar, toolbar or
download menus; a small "Exit" button top right); "results" (also the page's inputs hidden,
so a projected page shows only what is being taught).  Pages mark their inputs with
``controls(name)``; navigation (a page's section switch, the lesson picker with Previous /
Next, a class's buttons that move it through a question and to a lesson) is never inside
one, so an instructor changes section or lesson, or reveals an answer, without leaving
presentation.

The styles are our own static CSS files in ``ui/styles/`` (never user text), and a rule that
writes words of ours where Streamlit writes English (``page_words``); ``apply`` injects them
on every run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import streamlit as st

from ui.echoes import echoed
from ui.formatting import markdown_escaped
from ui.i18n import t
from ui.url.codec import PRESENT

STATE_KEY = "present"  # the session's mode (not a widget key: it outlives page switches)
_STYLES = Path(__file__).parent / "styles"


def mode() -> str:
    """The session's presentation mode: one of ``ui.url.codec.PRESENT_MODES``."""
    value = st.session_state.get(STATE_KEY, PRESENT.default)
    return value if value in PRESENT.choices else PRESENT.default


def presenting() -> bool:
    return mode() != "off"


def stylesheet(present: str) -> str:
    """Our static CSS for a presentation mode: base, plus present.css and results.css."""
    names = ["base.css"]
    if present != PRESENT.default:
        names.append("present.css")
    if present == "results":
        names.append("results.css")
    return "\n".join((_STYLES / name).read_text(encoding="utf-8") for name in names)


# Where Streamlit writes English whatever the page's language, the locale's words are drawn
# instead, each in the size of the text it covers (in rem: it grows with presentation mode's
# type): (selector, locale key, size).  A text box's instruction is the first item of its line;
# a character counter may follow it.
_INSTRUCTION = '[data-testid="InputInstructions"] > span:first-child'
STREAMLIT_WORDS = (
    (
        '[data-testid="stFileUploaderDropzone"] [data-testid="stBaseButton-secondary"] p',
        "app.upload_button",
        "0.875rem",
    ),
    (f'[data-testid="stTextInput"] {_INSTRUCTION}', "app.enter_to_apply", "0.75rem"),
    (f'[data-testid="stNumberInput"] {_INSTRUCTION}', "app.enter_to_apply", "0.75rem"),
    (f'[data-testid="stTextArea"] {_INSTRUCTION}', "app.ctrl_enter_to_apply", "0.75rem"),
)


def css_string(text: str) -> str:
    """``text`` as the inside of a double-quoted CSS string: a quote, a backslash, a line
    break (which ends a CSS string, dropping the rule) and "<" ">" (which would end the
    <style> element it is sent in) as CSS escapes, "\\3c " for "<"."""
    return "".join(
        f"\\{ord(c):x} " if c in '"\\<>' or ord(c) < 0x20 or ord(c) == 0x7F else c for c in text
    )


def page_words() -> str:
    """CSS that hides Streamlit's English words and draws the page's language's in their place.
    The words are our locale text, escaped as CSS strings (``css_string``)."""
    rules = []
    for selector, key, size in STREAMLIT_WORDS:
        word = css_string(t(key))
        rules.append(f"{selector} {{ font-size: 0; }}")
        rules.append(f'{selector}::after {{ content: "{word}"; font-size: {size}; }}')
    return "\n".join(rules)


def apply() -> None:
    """Inject this run's stylesheet: one <style> element (the browser kept only the first two
    of three separate ones), sent where it takes no space on the page."""
    dark = ":root { --ns-page-background: #0e1117; }" if _dark() else ""  # Streamlit's own
    st.html(f"<style>\n{stylesheet(mode())}\n{page_words()}\n{dark}\n</style>")


def _dark() -> bool:
    """Whether the reader's browser shows Streamlit's dark theme (its settings menu)."""
    return st.context.theme.type == "dark"


def set_mode(value: str | None) -> None:
    """Present as ``value`` ("off", "on" or "results"; anything else: "off")."""
    value = value if value in PRESENT.choices else PRESENT.default  # None: a deselected choice
    st.session_state[STATE_KEY] = value
    st.session_state["present_select"] = value  # the sidebar's control follows the exit button


def exit_button() -> None:
    """While presenting, a small fixed button that leaves presentation mode."""
    if presenting():
        st.button(
            t("app.present.exit"),
            key="present_exit",
            icon=":material/close_fullscreen:",
            on_click=set_mode,
            args=(PRESENT.default,),
        )


def _chosen() -> None:
    # a class page's timer can echo the choice of before the exit button: shown again, not taken
    set_mode(mode() if echoed() else st.session_state["present_select"])


def chooser() -> None:
    """The sidebar's presentation control (the sidebar is hidden while presenting)."""
    st.segmented_control(
        t("app.present.label"),
        PRESENT.choices,
        default=mode(),
        format_func=lambda value: t(f"app.present.{value}"),
        key="present_select",
        on_change=_chosen,
        help=t("app.present.help"),
    )


def controls(name: str, title: str | None = None):
    """A container for a page's inputs.  Presenting ("on"), a closed expander titled
    ``title`` (a locale key; none: "Settings"), so a projector's first screen holds what is
    taught (the chart, the result), not inputs; ``present=results`` hides it
    (``results.css``).  A page with two such boxes titles each by what it holds: two
    "Settings" one above the other said nothing of which was which."""
    if mode() == "on":
        settings = t(title or "app.present.settings")
        return st.expander(settings, icon=":material/tune:", key=f"controls_{name}")
    return st.container(key=f"controls_{name}")


def among_controls(title: str):
    """``@among_controls(title="<locale key>")``: a widget function whose widgets are drawn
    inside ``controls(<its name>, title)``, for inputs drawn between a page's results."""

    def wrap(function):
        @functools.wraps(function)
        def drawn(*args, **kwargs):
            with controls(function.__name__, title):
                return function(*args, **kwargs)

        return drawn

    return wrap


def navigation(name: str):
    """A container for a page's navigation (a section switch, the lesson picker): shown in
    every mode, so an instructor moves on without leaving presentation."""
    return st.container(key=f"nav_{name}")


TABLE_ROW_PX = 35  # Streamlit's data grid: a row's (and its header's) default height
HTML_ROWS = 200  # presenting, a longer table stays a data grid: 500 rows of 4 columns took
# the Vector Lab 1 s more to draw as HTML (5.4 s against 4.3 s, Chromium, 2 cores)


def as_html(rows: int) -> bool:
    """Whether ``table`` writes a table of ``rows`` rows as HTML (presenting, not too long)."""
    return presenting() and rows <= HTML_ROWS


def table(
    frame: pd.DataFrame,
    rows: int,
    index: bool = True,
    writers: dict[str, Callable] | None = None,
    **grid,
) -> None:
    """A table the page sizes to its rows, a header and at most ``rows`` of them, then a
    scroll.  Presenting, it is written as HTML (``st.table``), whose text grows with the
    page's type: Streamlit's data grid draws its text at 14 px whatever the page's type (its
    sizes are counted from a fixed 16 px rem), unreadable across a room; present.css gives
    it a scroll past a screen's rows, under a header that stays.  ``index``: whether the
    frame's index is shown; ``writers``: a column's cells as text (a Styler's formats: the
    grid keeps the numbers under them); ``grid``: the data grid's other arguments (a
    column's tooltip, a key), which HTML has no use for."""
    if not as_html(len(frame)):
        shown = frame.style.format(writers, subset=list(writers)) if writers else frame
        height = 3 + TABLE_ROW_PX * (1 + min(max(len(frame), 1), rows))
        st.dataframe(shown, width="stretch", height=height, hide_index=not index, **grid)
        return
    # st.table reads every cell, header and index label as Markdown: a dump's names ("[x](…)",
    # "$a$") are written as they are, as the grid drew them; a yes/no in words, not "True"
    # (a caller's ``writers`` write numbers: their texts hold no Markdown)
    writers = dict(writers or {})
    for c, dtype in frame.dtypes.items():
        if c not in writers and dtype.kind in "Ob":
            writers[c] = _mark if dtype.kind == "b" else markdown_escaped
    written = frame.rename(columns=markdown_escaped)
    if frame.index.dtype.kind == "O":
        written = written.rename(index=markdown_escaped)
    if frame.index.name is not None:
        written = written.rename_axis(markdown_escaped(frame.index.name))
    renamed = dict(zip(frame.columns, written.columns, strict=True))  # a label as written
    named = {renamed[c]: _blank_if_missing(writer) for c, writer in writers.items()}
    styler = written.style.format(named, subset=list(named)) if named else written.style
    st.table(styler, hide_index=not index)


def _blank_if_missing(writer: Callable) -> Callable:
    """``writer`` for a cell that may be missing (NaN, None, NA): empty, as the grid draws it."""
    return lambda value: "" if value is None or value is pd.NA or value != value else writer(value)


def _mark(value: bool) -> str:
    """A yes/no cell in the page's words (the data grid draws a ticked box or not)."""
    return t("app.yes" if value else "app.no")
