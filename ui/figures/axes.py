"""Axes page heatmap: the ``B·T × d`` tensor, input and normalized, with the cells that share
the clicked cell's statistic lit (the ``[B, T, d]`` box is ``ui.figures.axes_box``).

Rows of the heatmap are ``(sample b, position t)`` flattened as ``b·T + t``; columns are the
channels.  Above ``MAX_DRAWN_CELLS`` cells the heatmap is *summarised*: each drawn brick is
the mean of a block of cells (``drawn_grid``), and a click lands on the block's centre cell.

References:
- Wu, He 2018, "Group Normalization", arXiv:1803.08494 (Figure 2: the sets drawn here)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from engine.axes.limits import MAX_DRAWN_CELLS
from engine.axes.sharing import AxesStatistics, CellSelection
from ui.figures.style import panel_title
from ui.formatting import format_number
from ui.i18n import translate

COLORSCALE = "RdBu_r"  # diverging, 0 = white: a PAD row of zeros reads as blank
OUTLINE_COLOR = "#111111"  # the shared set's outline on the heatmap
CLICKED_COLOR = "#f2a900"  # the clicked cell (the app's highlight amber, see depth_wiring)
PAD_FILL = "rgba(96, 96, 96, 0.42)"
DIM_MAX = 0.62  # white veil over cells that do not share the statistic
HALF_DIM = 0.3  # veil over cells normalized with it but not pooled into it (PAD under mask)
COLOR_PERCENTILE = 95.0  # of |value|; times COLOR_HEADROOM is the colour scale's half-width
COLOR_HEADROOM = 1.25
MAX_DRAWN_COLUMNS = 64  # a summarised heatmap keeps at most this many channel blocks
CLICK_MARKER_PX = 6  # hit area of a click-layer marker; the nearest marker wins anyway
MAX_LABELLED_SAMPLES = 16  # more sequences than this: label every k-th


WORDS = ("input", "output", "channel", "rows", "sequence", "position", "pad", "block")
Words = Mapping[str, str]  # axes.heatmap.<word> in one language


@dataclass(frozen=True)
class DrawnGrid:
    """Which cells each drawn brick covers: blocks starting at ``row_starts`` x ``col_starts``."""

    rows: int  # B·T
    cols: int  # d
    row_starts: np.ndarray  # [R] int
    col_starts: np.ndarray  # [C] int

    @property
    def cell_by_cell(self) -> bool:
        return len(self.row_starts) == self.rows and len(self.col_starts) == self.cols

    @property
    def block(self) -> tuple[int, int]:
        """(rows, channels) per brick (the last brick of an axis may be smaller)."""
        row = int(self.row_starts[1]) if len(self.row_starts) > 1 else self.rows
        col = int(self.col_starts[1]) if len(self.col_starts) > 1 else self.cols
        return row, col

    @property
    def last_block(self) -> tuple[int, int]:
        """(rows, channels) of the last brick of each axis: fewer where the axis does not
        divide into whole bricks (d = 1,000 in bricks of 16 channels ends in one of 8)."""
        return self.rows - int(self.row_starts[-1]), self.cols - int(self.col_starts[-1])

    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        """Brick centres in cell units: (x over channels, y over rows)."""
        x = (self.col_starts + np.append(self.col_starts[1:], self.cols) - 1) / 2  # [C]
        y = (self.row_starts + np.append(self.row_starts[1:], self.rows) - 1) / 2  # [R]
        return x, y


def drawn_grid(batch: int, tokens: int, d: int, max_cells: int = MAX_DRAWN_CELLS) -> DrawnGrid:
    """One brick per cell when ``B·T·d <= max_cells``; else blocks of cells.

    Channels are grouped first (to at most ``MAX_DRAWN_COLUMNS`` blocks), then rows; a row
    block is a divisor of T or a whole number of sequences, so no brick mixes two sequences'
    positions unless it covers both whole.
    """
    rows = batch * tokens
    if rows * d <= max_cells:
        return DrawnGrid(rows, d, np.arange(rows), np.arange(d))
    col_block = math.ceil(d / MAX_DRAWN_COLUMNS)
    n_cols = math.ceil(d / col_block)
    row_block = math.ceil(rows / max(1, max_cells // n_cols))
    if row_block <= tokens:
        row_block = min(k for k in range(row_block, tokens + 1) if tokens % k == 0)
    else:
        row_block = tokens * math.ceil(row_block / tokens)
    return DrawnGrid(rows, d, np.arange(0, rows, row_block), np.arange(0, d, col_block))


def block_mean(values: np.ndarray, grid: DrawnGrid) -> np.ndarray:
    """``[B·T, d]`` values averaged over each brick: ``[R, C]``."""
    values = np.asarray(values, dtype=np.float64)
    if grid.cell_by_cell:
        return values
    sums = np.add.reduceat(np.add.reduceat(values, grid.row_starts, 0), grid.col_starts, 1)
    row_sizes = np.diff(np.append(grid.row_starts, grid.rows))  # [R]
    col_sizes = np.diff(np.append(grid.col_starts, grid.cols))  # [C]
    return sums / (row_sizes[:, None] * col_sizes[None, :])


def cell_at(x: float, y: float, shape: tuple[int, int, int]) -> tuple[int, int, int]:
    """The cell ``(b, t, c)`` under a click at heatmap coordinates ``(x, y)`` (cell units)."""
    batch, tokens, d = shape
    row = min(max(int(round(float(y))), 0), batch * tokens - 1)
    channel = min(max(int(round(float(x))), 0), d - 1)
    return row // tokens, row % tokens, channel


def bounding_box(mask2d: np.ndarray) -> tuple[int, int, int, int] | None:
    """(row0, row1, col0, col1), inclusive, of the True cells of a ``[rows, cols]`` mask."""
    rows = np.flatnonzero(mask2d.any(axis=1))
    cols = np.flatnonzero(mask2d.any(axis=0))
    if not len(rows):
        return None
    return int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1])


def _rect(row0, row1, col0, col1, **style) -> dict:
    return dict(type="rect", x0=col0 - 0.5, x1=col1 + 0.5, y0=row0 - 0.5, y1=row1 + 0.5, **style)


def _row_ticks(real: np.ndarray, words: Words) -> tuple[list[float], list[str]]:
    """A tick at the middle of each sequence's real rows ("seq b") and of its PAD rows."""
    batch, tokens = real.shape
    every = math.ceil(batch / MAX_LABELLED_SAMPLES)
    values, texts = [], []
    for b in range(0, batch, every):
        length = int(real[b].sum())
        values.append(b * tokens + (length - 1) / 2)
        texts.append(f"{words['sequence']} {b}")
        if length < tokens and every == 1:
            values.append(b * tokens + (length + tokens - 1) / 2)
            texts.append(words["pad"])
    return values, texts


def _veil(selection: CellSelection, grid: DrawnGrid, rows: int, d: int) -> np.ndarray:
    """``[R, C]`` opacity of the white veil: 0 over pooled cells, HALF_DIM over cells only
    normalized with the statistic, DIM_MAX over the rest (blocks: their cells' mean)."""
    pooled = selection.pooled.reshape(rows, d).astype(np.float64)
    shared = selection.shared.reshape(rows, d).astype(np.float64)
    veil = DIM_MAX * (1.0 - shared) + HALF_DIM * (shared - pooled)  # [B·T, d]
    return block_mean(veil, grid)


def _symmetric_range(values: np.ndarray) -> float:
    """The colour scale's half-width: a little above the 95th percentile of |value|, so that
    a few large cells (an outlier channel, a shifted token) saturate instead of washing every
    other cell out; the hover shows their values."""
    finite = np.abs(values[np.isfinite(values)])
    if not finite.size:
        return 1.0
    limit = COLOR_HEADROOM * float(np.percentile(finite, COLOR_PERCENTILE))
    return limit if limit > 0 else (float(finite.max()) or 1.0)


def cells_figure(stats: AxesStatistics, selection: CellSelection, lang: str) -> go.Figure:
    """Input and normalized tensor side by side, ``B·T`` rows by ``d`` channels.

    The cells sharing the clicked cell's statistic keep their colour and are outlined; the
    others are veiled.  PAD rows are greyed and labelled on the row axis.  The layout is
    written as one dict (two x axes sharing one y axis): plotly's ``make_subplots`` and
    ``add_shape`` parse their arguments one by one, a cost paid on every click.
    """
    words = {word: translate(f"axes.heatmap.{word}", lang) for word in WORDS}
    batch, tokens, d = stats.x.shape
    rows = batch * tokens
    grid = drawn_grid(batch, tokens, d)
    x_centres, y_centres = (c.astype(np.float32) for c in grid.centres())
    pad_rows = ~stats.real.reshape(rows)  # [B·T]
    veil = _veil(selection, grid, rows, d).astype(np.float32)  # [R, C]
    drawn = [block_mean(v.reshape(rows, d), grid) for v in (stats.x, stats.y)]  # [R, C] each
    traces = []
    for column, values in enumerate(drawn, 1):
        axes = dict(xaxis="x" if column == 1 else "x2", yaxis="y")
        traces.append(
            go.Heatmap(
                z=values.astype(np.float32),
                x=x_centres,
                y=y_centres,
                coloraxis="coloraxis" if column == 1 else "coloraxis2",
                # on the input, the click layer carries the hover
                hoverinfo="skip" if column == 1 else None,
                hovertemplate=f"{words['channel']} %{{x}}<br>y = %{{z:.4g}}<extra></extra>",
                name=words["input"] if column == 1 else words["output"],
                **axes,
            )
        )
        traces.append(
            go.Heatmap(
                z=veil,
                x=x_centres,
                y=y_centres,
                zmin=0.0,
                zmax=1.0,
                colorscale=[[0.0, "rgba(255,255,255,0)"], [1.0, "rgba(255,255,255,1)"]],
                showscale=False,
                hoverinfo="skip",
                **axes,
            )
        )
    traces.append(_click_layer(grid, drawn, pad_rows, tokens, words))
    shapes = _shapes(stats, selection, "x", rows, d) + _shapes(stats, selection, "x2", rows, d)
    return go.Figure(data=traces, layout=_cells_layout(stats, words, len(y_centres), shapes))


def bar_ticks(limit: float, clipped: bool = False) -> dict:
    """A colour bar's ticks: 0 and ± the half-width rounded down to 2 significant digits;
    ``clipped`` (larger values take the end colours) writes the ends "≤ −170", "≥ 170".

    Plotly's automatic ticks (at most 3, at multiples of 1, 2 or 5) leave only "0" on a bar
    of ±3.6 or ±178 (the SmolLM2 example), so a reader could not tell what a colour means;
    and a bar ending at 170 beside a caption naming 26,464 did not say it was cut there.
    """
    digits = 1 - math.floor(math.log10(limit))
    tick = math.floor(limit * 10**digits) / 10**digits
    values = [-tick, 0.0, tick]
    text = [format_number(v) for v in values]
    if clipped:
        text = [f"≤ {text[0]}", text[1], f"≥ {text[2]}"]
    return dict(tickmode="array", tickvals=values, ticktext=text)


def _clipped(values: np.ndarray, limit: float) -> bool:
    finite = np.abs(values[np.isfinite(values)])
    return bool(finite.size) and float(finite.max()) > limit


PANEL_GAP = 0.04  # between the input and the normalized panel, in paper units


def _cells_layout(stats: AxesStatistics, words: Words, drawn_rows: int, shapes):
    ticks, tick_text = _row_ticks(stats.real, words)
    limit_x, limit_y = _symmetric_range(stats.x), _symmetric_range(stats.y)
    height = int(min(max(182 + 6 * drawn_rows, 412), 592))  # margins: 168 px
    # The colour bars sit at the figure's bottom edge (container units), not a fixed distance
    # under the plot: presentation mode's larger x title would otherwise run into them.  Three
    # ticks fit a bar 60 px long (a phone) without plotly turning them on their side.
    bar = dict(
        orientation="h",
        thickness=10,
        yref="container",
        y=4 / height,
        yanchor="bottom",
        len=0.4,
        ypad=0,
        tickangle=0,
    )
    half = (1 - PANEL_GAP) / 2
    x_axis = dict(title=dict(text=words["channel"]), showgrid=False, zeroline=False, anchor="y")
    titles = [
        panel_title(text, x, 1.0, size=15)
        for text, x in (
            (words["input"], half / 2),
            # two lines: one line does not fit half a phone's width
            (
                f"{words['output']}<br><span style='font-size:0.75em'>(γ = 1, β = 0)</span>",
                1 - half / 2,
            ),
        )
    ]
    return dict(
        xaxis=dict(domain=[0, half], **x_axis),
        xaxis2=dict(domain=[1 - half, 1], **x_axis),
        yaxis=dict(
            autorange="reversed",
            tickvals=ticks,
            ticktext=tick_text,
            showgrid=False,
            zeroline=False,
            title=dict(text=words["rows"]),
        ),
        coloraxis=dict(
            colorscale=COLORSCALE,
            cmin=-limit_x,
            cmax=limit_x,
            colorbar={**bar, **bar_ticks(limit_x, _clipped(stats.x, limit_x)), "x": half / 2},
        ),
        coloraxis2=dict(
            colorscale=COLORSCALE,
            cmin=-limit_y,
            cmax=limit_y,
            colorbar={**bar, **bar_ticks(limit_y, _clipped(stats.y, limit_y)), "x": 1 - half / 2},
        ),
        annotations=titles,
        shapes=shapes,
        height=height,
        margin=dict(l=10, r=10, t=56, b=112),
        dragmode=False,
        clickmode="event+select",
        showlegend=False,
    )


def _click_layer(grid: DrawnGrid, drawn, pad_rows, tokens: int, words: Words):
    """Invisible square markers on the input heatmap's bricks: plotly heatmaps cannot be
    selected, so a click selects the marker under it (Streamlit returns its x and y).

    Streamlit remounts the chart whenever its figure changes (every click), so plotly draws
    it afresh each time; ``maxdisplayed=1`` keeps plotly from creating one SVG node per
    marker while hover and click still find every point (benchmarks/RESULTS.md, "Axes page":
    the first draw with every marker drawn, with one, with none)."""
    x_centres, y_centres = grid.centres()
    x, y = np.meshgrid(x_centres, y_centres)  # [R, C] each
    values = np.stack([drawn[0], drawn[1]], axis=-1).reshape(-1, 2)  # [R·C, 2]: x, y
    if grid.cell_by_cell:
        rows = np.rint(y).astype(np.int32).reshape(-1)  # [R·C]
        # sequence, position, x, y of each cell; PAD named in the text (empty elsewhere)
        custom = np.column_stack([rows // tokens, rows % tokens, values]).astype(np.float32)
        where = f"{words['sequence']} %{{customdata[0]}} · {words['position']} %{{customdata[1]}}"
        text = np.where(pad_rows[rows], f" · {words['pad']}", "").tolist()
        first = 2
    else:
        row_block, col_block = grid.block
        custom, text, first = values.astype(np.float32), None, 0
        where = f"{words['block']} %{{y}} ({row_block}×{col_block})"
    invisible = dict(color="rgba(0,0,0,0)", size=1)
    return go.Scatter(
        x=x.reshape(-1).astype(np.float32),
        y=y.reshape(-1).astype(np.float32),
        xaxis="x",
        yaxis="y",
        mode="markers",
        marker=dict(symbol="square", color="rgba(0,0,0,0)", size=CLICK_MARKER_PX, maxdisplayed=1),
        selected=dict(marker=invisible),
        unselected=dict(marker=invisible),
        customdata=custom,
        text=text,
        hovertemplate=(
            f"{where}{'%{text}' if text is not None else ''} · {words['channel']} %{{x}}"
            f"<br>x = %{{customdata[{first}]:.4g}} → y = %{{customdata[{first + 1}]:.4g}}"
            "<extra></extra>"
        ),
        showlegend=False,
        name="cells",
    )


def _shapes(stats, selection, x_axis: str, rows: int, d: int) -> list[dict]:
    """PAD rows, sequence separators, the shared set's outline and the clicked cell."""
    batch, tokens = stats.real.shape
    place = dict(xref=x_axis, yref="y")
    shapes = []
    for b in range(batch):
        length = int(stats.real[b].sum())
        if length < tokens:
            pad = _rect(b * tokens + length, (b + 1) * tokens - 1, 0, d - 1)
            shapes.append(dict(**pad, fillcolor=PAD_FILL, line=dict(width=0), **place))
        if b and batch <= 2 * MAX_LABELLED_SAMPLES:
            separator = b * tokens - 0.5
            line = dict(color="#9a9a9a", width=1)
            shapes.append(
                dict(type="line", x0=-0.5, x1=d - 0.5, y0=separator, y1=separator, line=line)
                | place
            )
    box = bounding_box(selection.shared.reshape(rows, d))
    if box is not None:
        shapes.append(dict(**_rect(*box), line=dict(color=OUTLINE_COLOR, width=2.5), **place))
    b, t, c = selection.cell
    clicked = _rect(b * tokens + t, b * tokens + t, c, c)
    shapes.append(dict(**clicked, line=dict(color=CLICKED_COLOR, width=3), **place))
    return shapes
