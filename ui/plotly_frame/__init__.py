"""A plotly chart updated in place across reruns (``Plotly.react``), never remounted.

``st.plotly_chart`` gives its element an id that hashes the figure, so every changed figure
mounts a new chart: ``Plotly.newPlot`` and, for a 3-D scene, a new WebGL context — seconds
in a software renderer (``benchmarks/bench_geometry_page.py``) — and the camera a reader
had turned is reset.  A custom component keyed by ``key`` keeps one frame instead: each
rerun sends the figure and ``index.html`` calls ``Plotly.react`` on the same graph, which
keeps the WebGL context and, through ``layout.uirevision``, the camera.

plotly.js is the copy inside the plotly Python package (no network).  Streamlit serves a
component's files only from inside its folder and refuses symlinks that leave it, so the
page and a copy of ``plotly.min.js`` are written once per process into a temporary folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from pathlib import Path

import plotly
import plotly.graph_objects as go
import streamlit.components.v1 as components

from ui.projected import for_screen

_PAGE = Path(__file__).with_name("index.html")
_PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def _copy(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` atomically (another server process may do the same)."""
    if target.exists() and target.read_bytes() == source.read_bytes():
        return
    handle, temporary = tempfile.mkstemp(dir=target.parent)
    os.close(handle)
    shutil.copyfile(source, temporary)
    os.chmod(temporary, 0o644)
    os.replace(temporary, target)


@functools.cache
def _component():
    folder = Path(tempfile.gettempdir()) / f"normscope-plotly-frame-{plotly.__version__}"
    folder.mkdir(exist_ok=True)
    _copy(_PAGE, folder / "index.html")
    _copy(_PLOTLY_JS, folder / "plotly.min.js")
    return components.declare_component("normscope_plotly_frame", path=str(folder))


def plotly_frame(figure: go.Figure, key: str) -> None:
    """Draw ``figure`` under ``key``; later reruns with the same key update it in place.
    Presenting, its text is larger, as every other chart's (``for_screen``): the 3-D
    scene's legend and ticks stayed at 12 px."""
    figure = for_screen(figure)
    height = int(figure.layout.height or 450)
    _component()(spec=figure.to_json(), height=height, key=key, default=None)
