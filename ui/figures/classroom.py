"""Class mode's pictures: the room's answers to one question (both rounds side by side) and
the join link as a QR code."""

from __future__ import annotations

import io
import math
import re
import unicodedata

import plotly.graph_objects as go
import segno

from classroom.rules import Room
from ui.figures.style import RIGHT_COLORS
from ui.formatting import plot_text
from ui.i18n import translate

# columns per line of an answer's label beside its bars (a Chinese character takes two)
LABEL_COLUMNS = 34
# presenting: the fewest whose longest label takes at most 2 lines, so that the chart and the
# question above it fit a 1,280 × 720 screen (3 lines of 24 columns in 24 px type ran the
# last answer 170 px below it); 44 columns of the page's type leave the bars 280 px there
PROJECTED_COLUMNS = (32, 36, 40, 44)
LABEL_LINES = 4  # lines at most: the longest answer fits (the room reads it whole)
ROUND_COLOURS = ("#9aa5b1", "#1f77b4")  # round 1 greyed once round 2 is the one voting
PROJECTED_FONT = 20  # px: an answer's label and its count, presenting (the page's own type)
FONT = 14  # px, not presenting: plotly's own 12 px grey labels were hard to read on a phone
TEXT = "#31333f"  # the page's text colour
# A line breaks after a word and its spaces (ASCII ones: a no-break space holds "Pre ≈ 48"
# together), or after a wide character (Chinese has no spaces) and the closing punctuation
# after it ("，", "；": never at a line's start, after a word either); never inside a short
# bracketed list ("[−1, 1]", with the word it follows: "x=[1, 2]"), nor at a no-break space
# (the tick after the last Chinese character, "翻一倍 ✓", was left alone on a line).
_WIDE = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
_CLOSING = "，。；：、！？）」』"
_PIECES = re.compile(
    rf"[^ \t{_WIDE}\[]*\[[^\]]{{0,30}}\][^ \t{_WIDE}]*[{_CLOSING}]*[ \t]*"
    rf"|[{_WIDE}][{_CLOSING}]*(?:\u00a0[^ \t{_WIDE}]*)?[ \t]*|[^ \t{_WIDE}]+[{_CLOSING}]*[ \t]*"
)


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _wrapped(text: str, columns: int, most: int = LABEL_LINES) -> list[str]:
    """``text`` in lines of at most ``columns`` columns (a word longer than that alone on
    its line), ``most`` of them, the last ending in " …" where some is left out."""
    lines: list[str] = []
    for piece in _PIECES.findall(text):
        if lines and _columns(lines[-1] + piece.rstrip(" \t")) <= columns:
            lines[-1] += piece
        else:
            lines.append(piece)
    lines = [line.rstrip(" \t") for line in lines]
    if len(lines) > most:
        lines = [*lines[: most - 1], lines[most - 1] + " …"]
    return lines


# the spaces around an operator ("x + y + z = 0", "σ² = ∞"): a formula is not broken there
_OPERATOR_SPACE = re.compile(r" (?=[+−=≈×<>≤≥] )|(?<= [+−=≈×<>≤≥]) ")


def _balanced(text: str, columns: int) -> list[str]:
    """``_wrapped`` into as few lines as at ``columns``, each as long as the others: the
    narrowest width that needs no more lines (a Chinese answer at full width left its last
    character alone on the second line, "…保持稳 / 定"); a formula's operators stay with
    their operands."""
    text = _OPERATOR_SPACE.sub("\u00a0", text)
    lines = _wrapped(text, columns, most=len(text))
    shortest = math.ceil(_columns(text) / len(lines))
    for width in range(shortest, columns):
        narrower = _wrapped(text, width, most=len(text))
        if len(narrower) == len(lines):
            return narrower
    return lines


MARK = "\u00a0✓"  # the right answer's tick, held to its last word by a no-break space


def _label(option: str, text: str, right: bool, columns: int) -> tuple[str, int]:
    """The label of one answer's bars, and its number of lines, balanced (``_balanced``):
    the right answer's tick is wrapped with it (it ran two columns past the width when added
    after the wrap)."""
    lines = _balanced(f"({option}) {text}{MARK if right else ''}", columns)
    if len(lines) > LABEL_LINES:
        lines = [*lines[: LABEL_LINES - 1], lines[LABEL_LINES - 1] + " …"]
    label = "<br>".join(plot_text(line) for line in lines)
    return (f"<b>{label}</b>" if right else label), len(lines)


def answers_chart(
    room: Room, options: dict[str, str], answer: str, lang: str, projected: bool = False
) -> go.Figure:
    """Horizontal bars, one group per option (``options``: option -> its text), one bar per
    round; the right ``answer`` is marked only once the lesson is revealed: its label
    ticked, its bars in a colour of their own with a dark outline (seen from the back of a
    room, and without colour).  Each bar's count is written beside it, so the chart has no
    count axis.  ``projected``: the answers and counts in ``PROJECTED_FONT``, what the room
    reads (a projector's 16 px tick labels were a grey blur); else in ``FONT``; dark."""
    right = [room.state.revealed and o == answer for o in options]
    columns = LABEL_COLUMNS
    if projected:  # narrow enough for wide bars, wide enough for a 720 px screen's height
        # the answer counted with its tick: the reveal changes no line's width or the height
        texts = [f"({o}) {text}{MARK if o == answer else ''}" for o, text in options.items()]
        fits = [c for c in PROJECTED_COLUMNS if max(len(_balanced(x, c)) for x in texts) <= 2]
        columns = (fits or PROJECTED_COLUMNS[-1:])[0]
    pairs = zip(options.items(), right, strict=True)
    labels, lines = zip(*(_label(o, text, r, columns) for (o, text), r in pairs), strict=True)
    # each answer's band: its lines (of the label's type) and room for its bars around them
    line, band = (24, 16) if projected else (18, 38)
    font = dict(size=PROJECTED_FONT if projected else FONT, color=TEXT)
    figure = go.Figure()
    rounds = len(room.counts)
    for index, counts in enumerate(room.counts):
        votes = [counts.get(option, 0) for option in options]
        shade = min(index, len(ROUND_COLOURS) - 1) if rounds > 1 else -1  # a 3rd: the 2nd's
        figure.add_bar(
            y=list(labels),
            x=votes,
            orientation="h",
            name=translate("classroom.round", lang, number=index + 1),
            marker_color=[RIGHT_COLORS[shade] if r else ROUND_COLOURS[shade] for r in right],
            # no outline on an empty bar: it would draw a stray line at 0
            marker_line_width=[3 if r and n else 0 for r, n in zip(right, votes, strict=True)],
            marker_line_color="#1a1a1a",
            text=votes,
            textposition="outside",
            textfont=font,
            cliponaxis=False,
        )
    most = max((n for counts in room.counts for n in counts.values()), default=0)
    top = 40 if rounds > 1 else 10  # the rounds' legend above the bars
    figure.update_layout(
        barmode="group",
        height=top + 4 + len(lines) * (band + line * max(*lines, 2)),  # the bands are equal
        margin=dict(l=10, r=40, t=top, b=4),
        legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom", traceorder="normal", font=font),
        showlegend=rounds > 1,
        xaxis=dict(visible=False, range=[0, max(most, 4) * 1.15]),
        yaxis=dict(
            autorange="reversed",
            automargin=True,
            tickfont=font,
        ),
    )
    return figure


def qr_png(address: str) -> bytes:
    """The QR code of ``address`` as PNG bytes (medium error correction, a quiet zone of 2)."""
    buffer = io.BytesIO()
    segno.make(address, error="m").save(buffer, kind="png", scale=10, border=2)
    return buffer.getvalue()
