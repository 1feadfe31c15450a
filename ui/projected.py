"""Charts while presenting: text for the back of a room, grown with the page's type.

``for_screen`` is how every chart is shown (``ui.views.charts.show_chart``, the 3-D frame,
the class's counts): as built, or, while presenting (``ui.presenting``), a copy whose text,
ticks and legend are larger, and whose every pixel size grows further with the page's type on
a screen past 1,280 × 720, which the browser reports (``measure_type``).
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
import streamlit as st

from ui.presenting import presenting

CHART_FONT = 18  # px, presenting: plotly's default 12 px is unreadable from the back
CHART_TITLE = 24
CHART_TICKS = 16  # px: set on every axis, which the theme's template otherwise keeps at 12

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
