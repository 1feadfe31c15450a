"""Presentation mode and the app's own stylesheet.

``present`` is an app-wide URL parameter like ``lang`` (``ui/url/``): "off"; "on" (text
for the back of a room, larger chart fonts, no sidebar, toolbar or download menus; a small
"Exit" button top right); "results" (also the page's inputs hidden, so a projected page
shows only what is being taught).  Pages mark their inputs with ``controls(name)``; navigation
(a page's section switch, the lesson picker with Previous / Next) is never inside one, so an
instructor changes section or lesson without leaving presentation.

The styles are our own static CSS files in ``ui/styles/`` (never user text), and a rule that
writes words of ours where Streamlit writes English (``page_words``); ``apply`` injects them
on every run.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ui.echoes import echoed
from ui.formatting import markdown_escaped
from ui.i18n import t
from ui.url.codec import PRESENT

STATE_KEY = "present"  # the session's mode (not a widget key: it outlives page switches)
_STYLES = Path(__file__).parent / "styles"
CHART_FONT = 18  # px, presenting: plotly's default 12 px is unreadable from the back
CHART_TITLE = 24
CHART_TICKS = 16  # px: set on every axis, which the theme's template otherwise keeps at 12


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


def _set(value: str | None) -> None:
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
            on_click=_set,
            args=(PRESENT.default,),
        )


def _chosen() -> None:
    # a class page's timer can echo the choice of before the exit button: shown again, not taken
    _set(mode() if echoed() else st.session_state["present_select"])


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


# The page's type while presenting grows with the screen past 1,280 × 720 (present.css: 20 px
# there, 30 px at 1,920 × 1,080); a chart's text, set in pixels here, grows with it, as the
# browser reports its type.  The reporter runs in the page (no frame), measures the root
# element's font size (present.css's own result, whatever its rule), and reports only a
# change from what the server knows, so a screen of 20 px type costs no second run.
TYPE_PX = 20  # px: the type the charts' sizes here are made for (a 1,280 × 720 projector's)
MAX_TYPE_SCALE = 4  # a larger report (a browser zoomed far out: 90-120 px) is taken as this
_TYPE_JS = r"""
export default function ({ data, setStateValue }) {
  // Streamlit calls this again whenever ``data`` changes without running the cleanup it
  // returned before: the previous listener is removed here, or each call would leave one
  // on the window, reporting (and rerunning the page) long after presenting ended.
  if (window.__normscopeTypeOff) window.__normscopeTypeOff();
  let known = data.known;
  const report = () => {
    const px = parseFloat(getComputedStyle(document.documentElement).fontSize);
    if (Number.isFinite(px) && Math.abs(px - known) >= 0.5) {
      known = px;
      setStateValue("type_px", px);
    }
  };
  let timer = null;
  const resized = () => { clearTimeout(timer); timer = setTimeout(report, 300); };
  const off = () => {
    clearTimeout(timer);
    window.removeEventListener("resize", resized);
    if (window.__normscopeTypeOff === off) window.__normscopeTypeOff = null;
  };
  window.__normscopeTypeOff = off;
  requestAnimationFrame(report);  // once the stylesheet of this run holds
  window.addEventListener("resize", resized);
  return off;
}
"""
_TYPE_REPORTER = st.components.v2.component("normscope_present_type", js=_TYPE_JS)
TYPE_KEY = "_present_type_px"  # the page's type the browser last reported (px), bounded
_REPORTED_KEY = "_present_type_reported"  # that report as sent: the reporter's "known"


def measure_type() -> None:
    """While presenting, keep the page's type as the browser reports it (``type_scale``);
    drawn in the sidebar, which presenting hides: it takes no room on the page."""
    if not presenting():
        return
    known = st.session_state.get(_REPORTED_KEY, TYPE_PX)  # unbounded: else reported again
    reported = _TYPE_REPORTER(
        key="present_type", data={"known": known}, on_type_px_change=lambda: None
    )
    raw = reported.get("type_px")
    px = reported_type(raw)
    if px is not None:
        st.session_state[TYPE_KEY], st.session_state[_REPORTED_KEY] = px, float(raw)


def reported_type(px) -> float | None:
    """The browser's report of its type, which any page could forge: a finite number of
    pixels, taken within [``TYPE_PX``, ``MAX_TYPE_SCALE`` × it]; anything else, None."""
    if isinstance(px, bool) or not isinstance(px, int | float) or not math.isfinite(px):
        return None
    return min(max(float(px), TYPE_PX), MAX_TYPE_SCALE * TYPE_PX)


def type_scale() -> float:
    """How much larger the presenting page's type is than at 1,280 × 720 (1 until reported)."""
    return st.session_state.get(TYPE_KEY, TYPE_PX) / TYPE_PX


def for_screen(figure: go.Figure) -> go.Figure:
    """The figure as this session shows it: larger text while presenting (a copy), grown
    with the page's type on a larger screen."""
    return for_projector(figure, type_scale()) if presenting() else figure


def for_projector(figure: go.Figure, scale: float = 1.0) -> go.Figure:
    """A copy of ``figure`` readable from the back of a room: larger text, tick labels and
    legend on every axis (subplots and 3-D scenes too; a 2-D axis's tick labels that a
    figure already sets larger stay so); an annotation with a size of its own is at least the
    chart's text (a label of 13 px read as a footnote beside the projector's type).  Every
    legend below a plot is at the figure's edge already (``ui.figures.style.legend_below``),
    clear of the larger text.  ``scale``: the page's type over ``TYPE_PX`` on a screen
    larger than 1,280 × 720; every size in pixels grows by it, as the page's text does
    (``_zoomed``), so the chart keeps its share of the screen."""
    shown = go.Figure(figure)

    def px(size: float) -> int:
        return round(size * scale)

    shown.update_layout(
        font=dict(size=px(CHART_FONT)),
        title_font=dict(size=px(CHART_TITLE)),
        legend_font=dict(size=px(CHART_FONT)),
    )
    for axis in (*shown.select_xaxes(), *shown.select_yaxes()):  # a larger one is kept
        axis.tickfont.size = px(max(axis.tickfont.size or 0, CHART_TICKS))
    for note in shown.layout.annotations:  # a subplot's title: make_subplots writes 16 px
        subplot = _subplot_title(note)
        smallest = CHART_FONT + 2 if subplot else CHART_FONT
        if note.font.size is not None or subplot:  # a size of its own (the Axes box's: 13 px)
            note.font.size = px(max(note.font.size or 0, smallest))
    _room_for_the_legend(shown)
    for axis in ("xaxis", "yaxis", "zaxis"):
        shown.update_scenes({f"{axis}_tickfont_size": px(CHART_TICKS)})
        shown.for_each_scene(lambda scene, axis=axis: _every_other_tick(scene[axis]))
    if scale != 1:
        _zoomed(shown, scale)
    return shown


def _three_d(figure: go.Figure) -> bool:
    return any(trace.type in ("scatter3d", "mesh3d", "surface") for trace in figure.data)


def _zoomed(figure: go.Figure, scale: float) -> None:
    """What a figure draws in pixels, grown by ``scale`` as its text was: its height (a 3-D
    scene's too: its legend's rows in the larger type left the scene a third of its size),
    the margins it sets (a title's room), an annotation's offset from its point, a legend
    title's and a trace's own text size and a marker's size (one given for all its points;
    lines, colour bars and arrows keep theirs)."""
    layout = figure.layout
    if layout.height is not None:
        layout.height = round(layout.height * scale)
    for side in "lrtb":
        if layout.margin[side] is not None:
            layout.margin[side] = round(layout.margin[side] * scale)
    for note in layout.annotations:
        for shift in ("xshift", "yshift"):
            if note[shift]:
                note[shift] = note[shift] * scale
    if layout.legend.title.font.size is not None:
        layout.legend.title.font.size = round(layout.legend.title.font.size * scale)
    for trace in figure.data:
        marker = getattr(trace, "marker", None)  # a heatmap has none, a bar's has no size
        if marker is not None and "size" in marker and isinstance(marker.size, int | float):
            marker.size = marker.size * scale
        text = getattr(trace, "textfont", None)  # a bar's count written on it (a class's)
        if text is not None and isinstance(text.size, int | float):
            text.size = round(text.size * scale)


def _subplot_title(note) -> bool:
    """Whether an annotation is a subplot's title as ``make_subplots`` places it: centred on
    the paper above its plot, no arrow (the experiments' two panels kept 16 px titles)."""
    return (note.xref, note.yref, note.xanchor, note.yanchor, note.showarrow) == (
        "paper",
        "paper",
        "center",
        "bottom",
        False,
    )


def _room_for_the_legend(figure: go.Figure) -> None:
    """A legend below the plot takes its height from the figure's: in the projector's type its
    entries wrap to a row each on a 1,024 px screen, and Depth's first chart kept a 149 px plot
    of its 420 px.  Each entry past the second gets a row's height (CHART_FONT's line) more."""
    legend, height = figure.layout.legend, figure.layout.height
    if height is None or legend.yref != "container" or figure.layout.showlegend is False:
        return
    if _three_d(figure):
        return  # a 3-D scene is as wide as its column: a taller figure only adds empty bands
    entries = [trace for trace in figure.data if trace.showlegend is not False and trace.name]
    figure.update_layout(height=height + max(len(entries) - 2, 0) * round(1.5 * CHART_FONT))


def _every_other_tick(axis) -> None:
    """A 3-D axis's ticks thinned to every other one, 0 kept, where it has more than three:
    at the projector's size five labels (−2 to 2) on a receding axis ran into each other."""
    values, labels = list(axis.tickvals or ()), list(axis.ticktext or ())
    if len(values) > 3:
        middle = min(range(len(values)), key=lambda i: abs(values[i]))
        kept = [i for i in range(len(values)) if (i - middle) % 2 == 0]
        axis.tickvals = [values[i] for i in kept]
        if len(labels) == len(values):  # each label stays with its value
            axis.ticktext = [labels[i] for i in kept]
