"""Every chart a page draws goes through ``show_chart``: one place for how charts behave.

plotly's modebar camera saves the chart as a PNG from the browser (twice the screen's pixels,
sharp on a slide), named after the chart.  Under each chart a small "Download" menu offers the
chart as SVG and PNG (rendered on the server by kaleido, where a Chromium is installed) and
its data as CSV; each file is made only when its button is clicked (deferred data), so a page
with twenty charts costs nothing until someone downloads one.  Views call
``show_chart(figure, key)`` (or with a column as ``target``) instead of ``st.plotly_chart``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from ui.cache_keys import digest, function_name
from ui.figures.export import (
    IMAGE_FORMATS,
    IMAGE_MIME,
    figure_csv,
    figure_image,
    image_export_available,
)
from ui.i18n import t
from ui.projected import for_screen

FIGURES_KEPT = 96  # figures kept process-wide (a depth chart ~50 kB; a 3-D scene ~2 MB)
PNG_SCALE = 2  # the modebar's PNG: twice the drawn size, sharp on a projector or a slide
DOWNLOADS_KEY = "chart_downloads_"  # keyed containers; presentation mode hides them (CSS)


@st.cache_resource(max_entries=FIGURES_KEPT, show_spinner=False)
def _figure(name: str, key: bytes, _build: Callable[[], Any]) -> Any:
    return _build()


# A job's partial results drawn live (the training lab's loss so far): every session following
# the job draws each of them once, and none is drawn again.
@st.cache_resource(max_entries=8, show_spinner=False)
def _live_figure(name: str, key: bytes, _build: Callable[[], Any]) -> Any:
    return _build()


def built(
    builder: Callable[..., Any], *args: Any, shared: bool = True, live: bool = False, **kwargs
) -> Any:
    """``builder(*args, **kwargs)`` (a figure, or a tuple of them), built once per input and
    kept for every session: plotly's validation makes building a figure cost more than
    drawing it.  Kept only for figures of shared data: ``shared`` False (an upload's, a typed
    prompt's or a pasted config's) builds it each time.  ``live``: a partial result's, kept
    apart from the others (a run gives dozens).  A kept figure is never changed
    (``for_screen`` changes a copy)."""
    if not shared:
        return builder(*args, **kwargs)
    key = digest((args, kwargs))
    cache = _live_figure if live else _figure
    return cache(function_name(builder), key, lambda: builder(*args, **kwargs))


def chart_config(key: str, **overrides: Any) -> dict[str, Any]:
    """plotly.js config of a chart: the camera button's PNG is named after the chart."""
    config: dict[str, Any] = {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": key, "scale": PNG_SCALE},
    }
    config.update(overrides)
    return config


def _downloads(figure: go.Figure, key: str, target, table: bool) -> None:
    """A compact "Download" menu: SVG / PNG when kaleido can render here, the data as CSV."""
    with target.container(key=f"{DOWNLOADS_KEY}{key}"):
        with st.popover(t("app.chart.download"), icon=":material/download:", type="tertiary"):
            if image_export_available():
                for image_format in IMAGE_FORMATS:
                    st.download_button(
                        t(f"app.chart.{image_format}"),
                        data=lambda f=image_format: figure_image(figure, f),
                        file_name=f"{key}.{image_format}",
                        mime=IMAGE_MIME[image_format],
                        on_click="ignore",
                        key=f"{key}_{image_format}",
                        icon=":material/image:",
                    )
            else:
                st.caption(t("app.chart.no_images"))
            if table:
                headers = {name: t(f"app.chart.{name}") for name in ("trace", "panel")}
                st.download_button(
                    t("app.chart.csv"),
                    data=lambda: figure_csv(figure, headers),
                    file_name=f"{key}.csv",
                    mime="text/csv",
                    on_click="ignore",
                    key=f"{key}_csv",
                    icon=":material/table_view:",
                )


def show_chart(
    figure: go.Figure,
    key: str | None,
    target=None,
    *,
    config: dict | None = None,
    table: bool = True,
    **kwargs,
):
    """Draw ``figure`` into ``target`` (``st`` or a column); returns plotly_chart's result.

    ``key`` names the chart (its widget key and its files; None leaves the menu out: a chart
    redrawn live many times a second); ``config`` adds plotly.js options (e.g.
    ``displayModeBar``); ``table`` False leaves the CSV out (a diagram has no data).  Other
    keyword arguments go to ``st.plotly_chart``.
    """
    target = st if target is None else target
    kwargs.setdefault("width", "stretch")
    name = key or "chart"
    shown = for_screen(figure)  # larger fonts while presenting
    event = target.plotly_chart(
        shown, key=key, config=chart_config(name, **(config or {})), **kwargs
    )
    if key is not None:
        _downloads(shown, key, target, table)
    return event


def _hidden(part: str) -> str:
    """A rule that hides the keyed container ``part`` and the wrapper Streamlit puts it in
    (an empty wrapper still took the column's gap between elements)."""
    return (
        f".st-key-{part}, [data-testid='stLayoutWrapper']:has(> .st-key-{part})"
        " { display: none; }"
    )


def fitting_css(box: str, widths: Sequence[int]) -> str:
    """The stylesheet that shows, inside the container ``box``, the first of its parts
    ``{box}_0``, ``{box}_1``, ... whose least legible width (``widths``, px, widest first)
    fits the container, and hides the rest: the browser chooses, through CSS container
    queries, since the server does not know the column's width.  The last part keeps its
    width on a narrower column and scrolls sideways in its own box, and the part
    ``{box}_hint`` (saying so) shows only then."""
    last = len(widths) - 1
    rules = [f".st-key-{box} {{ container: {box} / inline-size; }}"]
    for index, width in enumerate(widths):
        if index < last:  # too narrow for this one
            rules.append(
                f"@container {box} (width < {int(width)}px) {{ {_hidden(f'{box}_{index}')} }}"
            )
        if index:  # wide enough for the one before
            rules.append(
                f"@container {box} (width >= {int(widths[index - 1])}px)"
                f" {{ {_hidden(f'{box}_{index}')} }}"
            )
    rules += [
        f".st-key-{box}_{last} {{ overflow-x: auto; }}",
        f".st-key-{box}_{last} .stElementContainer:has(.stPlotlyChart)"
        f" {{ min-width: {int(widths[last])}px; }}",
        f"@container {box} (width >= {int(widths[last])}px) {{ {_hidden(f'{box}_hint')} }}",
    ]
    return "\n".join(rules)


def show_fitting_chart(variants: Sequence[tuple[go.Figure, int]], key: str, **kwargs) -> None:
    """``show_chart`` for a diagram drawn in several layouts (a figure and the least width,
    px, at which its labels stay inside their boxes; widest first): the first that fits the
    column shows (``fitting_css``).  The last (the narrowest) keeps its width on a still
    narrower column and scrolls sideways in its own box, under a line that says so: a cut
    diagram gave no sign that the rest was there.  The minimum is set on the chart's element
    container, the width Streamlit measures and gives plotly (a minimum on the chart alone
    would widen its box, not its drawing)."""
    box = f"fit_{key}"
    kept = variants[:1]  # a layout no narrower than the one before it would never show
    for variant in variants[1:]:
        if variant[1] < kept[-1][1]:
            kept.append(variant)
    variants = kept
    st.html(f"<style>{fitting_css(box, [width for _, width in variants])}</style>")
    with st.container(key=box):
        st.container(key=f"{box}_hint").caption(t("app.chart.scroll_hint"))
        for index, (figure, _) in enumerate(variants):
            with st.container(key=f"{box}_{index}"):
                show_chart(figure, key if index == 0 else f"{key}_{index}", **kwargs)


@contextmanager
def sideways(key: str, width: int, hint: str) -> Iterator[None]:
    """A part at least ``width`` px wide (a table whose columns are sized to their text): on a
    narrower column it scrolls sideways in its own box under the line ``hint``, which shows
    only then (``fitting_css``): a table cut at the column's edge gave no sign of the rest."""
    box = f"fit_{key}"
    st.html(f"<style>{fitting_css(box, [width])}</style>")
    with st.container(key=box):
        st.container(key=f"{box}_hint").caption(hint)
        with st.container(key=f"{box}_0"):
            yield
