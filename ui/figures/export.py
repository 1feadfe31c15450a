"""A chart as files: its data as a table (CSV) and, where a Chromium is at hand, PNG/SVG.

``figure_table`` reads the numbers back out of a figure's traces, so the CSV holds exactly what
is drawn (one row per point: trace, x, y and z where the trace has one), whatever built it; a
trace drawn away from its values (points past an axis' end, drawn at it) carries them in
``meta={"values": {"x": ..., "y": ...}}``, and the table holds those.

``figure_image`` renders a figure with kaleido (plotly's static export), which drives a local
headless Chromium: the first image of a process waits for the browser to start, later ones
reuse kaleido's persistent server.  Exports run
one at a time (a lock), so a room of thirty clicking "SVG" queues instead of starting thirty
browsers.  Without kaleido or a Chromium, ``image_export_available()`` is False and pages
offer the CSV and the modebar's PNG only.  Nothing here downloads a browser.
"""

from __future__ import annotations

import functools
import importlib.util
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
    array = np.asarray(values, dtype=object if _has_text(values) else float)
    return array if array.size else None


def _has_text(values) -> bool:
    try:
        np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return True
    return False


def _grid_rows(name: str, trace, z: np.ndarray) -> pd.DataFrame:
    """A heatmap's (or surface's) matrix as rows (trace, x, y, z); axes default to indices."""
    rows, cols = z.shape
    x = _column(getattr(trace, "x", None))
    y = _column(getattr(trace, "y", None))
    x = x if x is not None and x.ndim == 1 and len(x) == cols else np.arange(cols)
    y = y if y is not None and y.ndim == 1 and len(y) == rows else np.arange(rows)
    xx, yy = np.meshgrid(x, y)  # [rows, cols] each
    return pd.DataFrame({"trace": name, "x": xx.ravel(), "y": yy.ravel(), "z": z.ravel()})


def _trace_rows(index: int, trace) -> pd.DataFrame | None:
    name = trace.name if getattr(trace, "name", None) else f"{trace.type} {index + 1}"
    # a bound expression and e-notation (ui/i18n.py), typed as read
    name = name.replace("\u00a0", " ").replace("\u2011", "-")
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
    if "y" not in present and "x" in present and trace.type in ("bar", "histogram", "box"):
        present["y"] = np.full(length, np.nan)
    columns = {axis: present[axis] for axis in _AXES if axis in present}
    if any(len(v) != length for v in columns.values()):
        return None  # a shape this table cannot line up (e.g. a mesh's faces)
    return pd.DataFrame({"trace": [name] * length, **columns})


def figure_table(figure: go.Figure) -> pd.DataFrame:
    """Every trace's points, one row each: ``trace``, ``x``, ``y`` (and ``z``)."""
    parts = [
        rows for i, trace in enumerate(figure.data) if (rows := _trace_rows(i, trace)) is not None
    ]
    if not parts:
        return pd.DataFrame(columns=["trace", "x", "y"])
    return pd.concat(parts, ignore_index=True)


def figure_csv(figure: go.Figure) -> str:
    """``figure_table`` as CSV text (full precision, no index)."""
    return figure_table(figure).to_csv(index=False)


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
