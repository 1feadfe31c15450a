"""Depth page wiring diagrams: one attention + MLP layer per placement, drawn with plotly
shapes, the identity path highlighted, each norm named as a real model's module.

Where the norms sit is read from ``engine/depth/placements.py``, the same table the simulator
runs, so a diagram cannot disagree with the simulation; what models call them is read from
the model catalog (``engine/models/catalog.toml``).

The words are ``depth.wiring_*``; only code identifiers (``ln_1``, ``model.norm``) and
symbols (α, β, 1/√l, x<sub>l</sub>) are written here.
"""

from __future__ import annotations

import plotly.graph_objects as go

from engine.depth.placements import PLACEMENTS
from engine.models.families import ModuleNames
from engine.models.loader import catalog
from ui.i18n import translate
from ui.labels import label

IDENTITY_COLOR = "#f2a900"  # the highlighted identity path
NORM_FILL, BRANCH_FILL, INK = "#fde0c5", "#d9e8f5", "#444444"
# the labels' ink: near black on the pale boxes (the theme's grey text was hard to read on
# a projector)
TEXT_INK = "#1a1a1a"
LABEL_PX = 14  # the labels' size, which presentation mode's larger chart font replaces
NAME_EM = 0.9  # a module name's size, relative to its box's label
# the stream entering and leaving the layer, its subscript in plotly's <sub> markup: a scaled
# copy of the label's own font (any size, presentation's too), where Unicode's subscript
# letters ("xₗ₊₁") come from a fallback font and render much smaller than the box labels
# (plotly would draw "x_{l+1}" literally); a little larger than the labels, so that the
# subscript (plotly draws it at about 0.7 of its text) is as large as a module name
STREAM_EM = 1.25
STREAM_IN, STREAM_OUT = (
    f"<span style='font-size:{STREAM_EM}em'>x<sub>{index}</sub></span>" for index in ("l", "l+1")
)
# a box holds its label and module name at presentation mode's 18 px too: 0.72 of 2.9 y units
# of the plot's 280 - 55 px
BOX_HALF_HEIGHT, HEIGHT = 0.36, 280
PX_PER_UNIT = 42  # the boxes are sized for LABEL_PX text at about this many px per x unit
ROW_PX = (HEIGHT - 55) / 2.9  # px per y unit: the plot's height over its y range
# a second row's stream lies this far under the first's, its branch boxes clear of the
# identity path's turn, which runs TURN_DROP under the first row's stream
ROW_DROP, TURN_DROP = 2.6, 0.65
FINAL_DROP = 1.4  # the final norm's row has no branch: it needs room for the turn only


def legible_width(figure: go.Figure) -> int:
    """The narrowest width (px) at which the diagram's labels stay inside their boxes, at
    the figure's own text size (presentation mode's is larger: so is the width)."""
    low, high = figure.layout.xaxis.range
    scale = (figure.layout.font.size or LABEL_PX) / LABEL_PX
    return int(PX_PER_UNIT * scale * (high - low)) + 20  # + the figure's margins


def _box_width(text: str, name: str | None) -> float:
    """Wide enough for the longer of the role and the (italic) module name."""
    return max(1.5, 0.152 * len(text) + 0.4, 0.135 * len(name or "") + 0.3)


def _box(figure, x0, y, text, name, fill) -> float:
    """A labelled box from x0; returns its right edge."""
    x1 = x0 + _box_width(text, name)
    figure.add_shape(
        type="rect",
        x0=x0,
        x1=x1,
        y0=y - BOX_HALF_HEIGHT,
        y1=y + BOX_HALF_HEIGHT,
        line=dict(color=INK, width=1),
        fillcolor=fill,
    )
    label = text if name is None else f"{text}<br>{_smaller(f'<i>{name}</i>')}"
    figure.add_annotation(x=(x0 + x1) / 2, y=y, text=label, showarrow=False)
    return x1


def _smaller(text: str) -> str:
    """``text`` a little smaller than the labels, whatever their size (presentation's too)."""
    return f"<span style='font-size:{NAME_EM}em'>{text}</span>"


def _arrow(figure, x0, y0, x1, y1):
    """An arrow from (x0, y0) to (x1, y1), its tail in data units too (plotly's: pixels)."""
    figure.add_annotation(
        x=x1,
        y=y1,
        ax=x0,
        ay=y0,
        axref="x",
        ayref="y",
        arrowhead=2,
        arrowwidth=1.5,
        arrowcolor=INK,
        text="",
    )


def _turn(path: list, x: float, y: float, drop: float) -> float:
    """The identity path, at ``x`` on the row whose stream is at ``y``, turns down, back
    left under that row, and down to the next row's stream ``drop`` under it; returns its y."""
    turn, below = y - TURN_DROP, y - drop
    path += [(x, y), (x, turn), (0.3, turn), (0.3, below)]
    return below


def wiring_figure(
    placement: str,
    lang: str,
    final_norm: bool = True,
    modules: ModuleNames | None = None,
    norm: str | None = None,
    attention: str | None = None,
    rows: int = 1,
) -> go.Figure:
    """One attention + MLP layer wired for ``placement``, left to right, identity path
    highlighted, each norm box named as the placement's example families name it, or as
    ``modules`` does (one catalog family's ``Family.module_names``). ``norm`` and
    ``attention`` replace the boxes' generic words (a family's own norm).  ``rows`` 2 puts
    the MLP sublayer (and the final norm) on a second row under the attention sublayer, the
    identity path turning down and back to it, and 3 the final norm on a third: about half
    the width, for a narrow column (an 800 px window showed one row only up to its second
    norm, the rest scrolled away)."""
    norm = norm or translate("depth.wiring_norm", lang)
    attention = attention or translate("depth.wiring_attention", lang)
    entry = PLACEMENTS[placement]
    before, after, on_stream = entry.norms.before, entry.norms.after, entry.norms.on_stream
    modules = catalog().placement_names(placement) if modules is None else modules
    figure = go.Figure()
    y_main, rise, gap = 0.0, 1.2, 0.45
    adds, path, widest = [], [(0.3, y_main)], 0.0
    x = 0.6
    figure.add_annotation(x=0.1, y=y_main, text=STREAM_IN, showarrow=False)
    mlp = translate("depth.wiring_mlp", lang)
    for index, (text, names) in enumerate(((attention, modules.attention), (mlp, modules.mlp))):
        if index and rows > 1:
            widest, y_main, x = max(widest, x + 0.3), _turn(path, x, y_main, ROW_DROP), 0.6
        y_branch, start = y_main + rise, x
        slots = [(norm, names[0], NORM_FILL)] * before
        if entry.scale_branch_input:
            slots.append(("× 1/√l", None, NORM_FILL))
        slots.append((text + (" (init × β)" if entry.deepnorm else ""), None, BRANCH_FILL))
        slots += [(norm, names[1], NORM_FILL)] * after
        figure.add_shape(
            type="line", x0=start, x1=start, y0=y_main, y1=y_branch, line=dict(color=INK, width=1.5)
        )
        bx = start + gap
        _arrow(figure, start, y_branch, bx, y_branch)
        for slot_text, slot_name, fill in slots:
            right = _box(figure, bx, y_branch, slot_text, slot_name, fill)
            bx = right + gap
            _arrow(figure, right, y_branch, bx, y_branch)
        add_x = bx
        figure.add_shape(
            type="line",
            x0=add_x - gap,
            x1=add_x,
            y0=y_branch,
            y1=y_branch,
            line=dict(color=INK, width=1.5),
        )
        _arrow(figure, add_x, y_branch, add_x, y_main + 0.2)
        if entry.deepnorm:  # alpha scales the identity path before the add
            _box(figure, (start + add_x) / 2 - 0.5, y_main, "× α", None, NORM_FILL)
        adds.append((add_x, y_main))
        x = add_x + 0.35
        if on_stream:
            x = _box(figure, x, y_main, norm, names[2], NORM_FILL) + 0.35
        x += 0.3
    end, stream_out = x, STREAM_OUT
    if final_norm and entry.final_norm:
        if rows > 2:  # a row of its own, with no branch above it
            widest, y_main, end = max(widest, x + 0.3), _turn(path, x, y_main, FINAL_DROP), 0.6
        right = _box(figure, end, y_main, norm, modules.final, NORM_FILL)
        figure.add_annotation(
            x=(end + right) / 2,
            y=y_main - 0.55,
            text=_smaller(translate("depth.wiring_final", lang)),
            showarrow=False,
        )
        end, stream_out = right + 0.3, translate("depth.wiring_output", lang)
    figure.add_annotation(
        x=end + 0.1,
        y=y_main,
        text=stream_out,
        xanchor="left",
        showarrow=False,
    )
    path.append((end, y_main))
    # identity path: a thick highlighted line under the boxes, as a trace for the legend
    figure.add_scatter(
        x=[px for px, _ in path],
        y=[py for _, py in path],
        mode="lines",
        name=translate("depth.wiring_identity", lang),
        hoverinfo="skip",
        line=dict(color=IDENTITY_COLOR, width=8),
    )
    figure.add_scatter(
        x=[ax for ax, _ in adds],
        y=[ay for _, ay in adds],
        mode="markers+text",
        text=["+"] * len(adds),
        textposition="middle center",
        showlegend=False,
        hoverinfo="skip",
        marker=dict(size=22, color="white", line=dict(color=INK, width=1.5)),
    )
    drop = -y_main  # the rows below the first
    placement_name = label("placement", placement, lang)  # "OLMo 2": not "OLMo 2 — OLMo 2"
    figure.update_layout(
        title=" — ".join(dict.fromkeys(filter(None, (placement_name, modules.family)))),
        height=HEIGHT + round(drop * ROW_PX),
        font=dict(size=LABEL_PX, color=TEXT_INK),
        margin=dict(l=10, r=10, t=45, b=10),
        showlegend=True,
        legend=dict(orientation="h", x=0.0, y=0.02),
        plot_bgcolor="white",
        xaxis=dict(visible=False, range=[-0.2, max(widest, end + 1.0)], fixedrange=True),
        yaxis=dict(visible=False, range=[-1.1 - drop, 1.8], fixedrange=True),
    )
    return figure
