"""A chart as files: its data as a table (CSV) and, where a Chromium is at hand, PNG/SVG.

``labelled_table`` reads the numbers back out of a figure's traces, so the CSV holds exactly
what is drawn (one row per point: trace, x, y and z where the trace has one), whatever built
it; a trace drawn away from its values (points past an axis' end, drawn at it) carries them
in ``meta={"values": {"x": ..., "y": ...}}``, and the table holds those.  It names
its columns as the chart does: each value column by its axis' title (units included), a
panel's values apart from another panel's (its own column where its axis' title differs, and
a column naming the panel where the figure has several), and a trace with no name by its
panel or axis title rather than plotly's "bar 1".

``figure_image`` renders a figure with kaleido (plotly's static export), which drives a local
headless Chromium: the first image of a process waits for the browser to start, later ones
reuse kaleido's persistent server.  Exports run one at a time (a lock), so a room of thirty
clicking "SVG" queues instead of starting thirty browsers.  Without kaleido or a Chromium,
``image_export_available()`` is False and pages offer the CSV and the modebar's PNG only.
Nothing here downloads a browser.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import threading
import warnings

import numpy as np
import pandas as pd
import plotly.graph_objects as go

IMAGE_FORMATS = ("svg", "png")
IMAGE_MIME = {"svg": "image/svg+xml", "png": "image/png"}
_AXES = ("x", "y", "z")
_EXPORT_LOCK = threading.Lock()
_server_started = False


def _column(values) -> np.ndarray | None:
    if values is None:
        return None
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):  # text: a category axis, a trace's labels
        array = np.asarray(values, dtype=object)
    return array if array.size else None


def _grid_rows(name: str, trace, z: np.ndarray) -> pd.DataFrame:
    """A heatmap's (or surface's) matrix as rows (trace, x, y, z); axes default to indices."""
    rows, cols = z.shape
    x = _column(getattr(trace, "x", None))
    y = _column(getattr(trace, "y", None))
    x = x if x is not None and x.ndim == 1 and len(x) == cols else np.arange(cols)
    y = y if y is not None and y.ndim == 1 and len(y) == rows else np.arange(rows)
    xx, yy = np.meshgrid(x, y)  # [rows, cols] each
    return pd.DataFrame({"trace": name, "x": xx.ravel(), "y": yy.ravel(), "z": z.ravel()})


def _trace_rows(index: int, trace, fallback: str = "") -> pd.DataFrame | None:
    name = trace.name if getattr(trace, "name", None) else fallback or f"{trace.type} {index + 1}"
    name = name.translate(_TYPED)
    values = {axis: _column(getattr(trace, axis, None)) for axis in _AXES if hasattr(trace, axis)}
    meta = getattr(trace, "meta", None)
    if isinstance(meta, dict) and isinstance(meta.get("values"), dict):
        values |= {axis: _column(v) for axis, v in meta["values"].items() if axis in _AXES}
    z = values.get("z")
    if z is not None and z.ndim == 2:
        return _grid_rows(name, trace, z)
    present = {axis: v.ravel() for axis, v in values.items() if v is not None}
    if not present:
        return None
    length = max(len(v) for v in present.values())
    if "x" not in present and "y" in present:
        present["x"] = np.arange(length)  # plotly draws y against its index
    columns = {axis: present[axis] for axis in _AXES if axis in present}
    if any(len(v) != length for v in columns.values()):
        return None  # a shape this table cannot line up (e.g. a mesh's faces)
    return pd.DataFrame({"trace": [name] * length, **columns})


def _script(match: re.Match) -> str:
    mark, inner = "_" if match[1].lower() == "sub" else "^", match[2]
    return f"{mark}{inner}" if len(inner) == 1 else f"{mark}({inner})"


# a bound expression's spaces and e-notation's hyphen (ui/i18n.py), as one would type them
_TYPED = str.maketrans({"\u00a0": " ", "\u2011": "-"})


def _plain(text) -> str:
    """A title as text: plotly's HTML tags undone (``<br>`` a space, ``x<sub>l</sub>`` as
    ``x_l``, ``<sup>`` as ``^``) and bound spaces and hyphens as typed."""
    text = re.sub(r"<br\s*/?>", " ", str(text or ""), flags=re.IGNORECASE)
    text = re.sub(r"<(sub|sup)>(.*?)</\1>", _script, text, flags=re.IGNORECASE)
    text = re.sub(r"<[^>]+>", "", text).translate(_TYPED)
    return " ".join(text.split())


def _axis(layout, ref: str):
    """The layout's axis object of a trace's axis reference ("x", "y2")."""
    return layout[f"{ref[0]}axis{ref[1:]}"]


def _axis_title(layout, ref: str) -> str:
    """An axis' title, or the title of the axis it is shared with (a shared x axis of stacked
    panels is titled once, under the bottom one)."""
    axis = _axis(layout, ref)
    own = _plain(axis.title.text)
    if own or not axis.matches:
        return own
    return _plain(_axis(layout, axis.matches).title.text)


def _panel_title(layout, xref: str, yref: str) -> str:
    """The title make_subplots put over the panel of axes (xref, yref): an annotation at the
    middle of the x domain, just over the top of the y domain; "" where none is."""
    x0, x1 = _axis(layout, xref).domain or (0, 1)
    top = (_axis(layout, yref).domain or (0, 1))[1]
    for note in layout.annotations:
        if note.xref == "paper" and note.yref == "paper" and note.text:
            if abs(note.x - (x0 + x1) / 2) < 1e-6 and top - 1e-6 <= note.y <= top + 0.05:
                return _plain(note.text)
    return ""


def _labels(figure: go.Figure, trace) -> tuple[dict[str, str], str, str]:
    """({axis: its column's name}, the trace's panel, the panel's own title) as the chart
    titles them."""
    layout = figure.layout
    if trace.type in ("scatter3d", "surface", "mesh3d", "cone", "streamtube", "isosurface"):
        scene = layout[getattr(trace, "scene", None) or "scene"]
        return {a: _plain(scene[f"{a}axis"].title.text) or a for a in _AXES}, "", ""
    xref = getattr(trace, "xaxis", None) or "x"
    yref = getattr(trace, "yaxis", None) or "y"
    colorbar = getattr(trace, "colorbar", None)
    z = _plain(colorbar.title.text) if colorbar is not None else ""
    if not z and getattr(trace, "coloraxis", None):
        z = _plain(layout[trace.coloraxis].colorbar.title.text)
    labels = {"x": _axis_title(layout, xref) or "x", "y": _axis_title(layout, yref) or "y"}
    titled = _panel_title(layout, xref, yref)
    panel = titled or (labels["y"] if labels["y"] != "y" else f"{xref}/{yref}")
    return labels | {"z": z or "z"}, panel, titled


def _unnamed(figure: go.Figure) -> dict[int, str]:
    """A name for each trace plotly would call "bar 1": its panel's title, the chart's, or
    its y axis' (numbered where several such traces would share one)."""
    title = _plain(figure.layout.title.text)
    found = {}
    for i, trace in enumerate(figure.data):
        if not getattr(trace, "name", None):
            labels, _, titled = _labels(figure, trace)
            found[i] = titled or title or (labels["y"] if labels["y"] != "y" else "")
    counts = pd.Series(list(found.values()), dtype=object).value_counts()
    return {
        i: f"{name} ({i + 1})" if name and counts[name] > 1 else name for i, name in found.items()
    }


def labelled_table(figure: go.Figure) -> pd.DataFrame:
    """Every trace's points, one row each, named as the chart names them (see the module
    docstring); a trace with no name and nothing to call it by is plotly's "bar 1"."""
    unnamed = _unnamed(figure)
    parts, panels = [], set()
    for i, trace in enumerate(figure.data):
        labels, panel, _ = _labels(figure, trace)
        rows = _trace_rows(i, trace, unnamed.get(i, ""))
        if rows is None:
            continue
        names = {axis: labels[axis] for axis in _AXES if axis in rows}
        taken = {"trace", "panel"}
        for axis, name in names.items():  # never two columns of one name
            names[axis] = f"{name} ({axis})" if name in taken else name
            taken.add(names[axis])
        parts.append(rows.rename(columns=names).assign(panel=panel))
        panels.add(panel)
    if not parts:
        return pd.DataFrame(columns=["trace", "x", "y"])
    table = pd.concat(parts, ignore_index=True)
    if len(panels) < 2:
        return table.drop(columns="panel")
    return table[["trace", "panel", *[c for c in table.columns if c not in ("trace", "panel")]]]


def figure_csv(figure: go.Figure, headers: dict[str, str] | None = None) -> str:
    """``labelled_table`` as CSV text (full precision, no index); ``headers``: the "trace"
    and "panel" columns' names in the page's language (a Chinese page's CSV said "trace")."""
    return labelled_table(figure).rename(columns=headers or {}).to_csv(index=False)


@functools.cache
def image_export_available() -> bool:
    """True when kaleido is installed and finds a local Chromium (it never downloads one)."""
    if importlib.util.find_spec("kaleido") is None:
        return False
    try:
        from choreographer.browsers.chromium import Chromium

        return Chromium.find_browser(skip_local=False) is not None
    except Exception:  # noqa: BLE001 any failure to look one up means: no export here
        return False


def figure_image(figure: go.Figure, image_format: str) -> bytes:
    """The figure as an SVG or PNG file, rendered by kaleido one export at a time."""
    if image_format not in IMAGE_FORMATS:
        raise ValueError(f"image format {image_format!r} is not one of {IMAGE_FORMATS}")
    global _server_started
    import kaleido
    from kaleido.errors import JavascriptError

    scale = 2 if image_format == "png" else 1
    with _EXPORT_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # plotly warns that kaleido's server ignores its options
        if not _server_started:
            kaleido.start_sync_server(silence_warnings=True)
            _server_started = True
        try:
            return figure.to_image(format=image_format, scale=scale)
        except JavascriptError:  # a loaded machine: kaleido's page had not loaded its script
            # yet ("kaleido_scopes is not defined", once in a suite run); it has the next time
            return figure.to_image(format=image_format, scale=scale)
