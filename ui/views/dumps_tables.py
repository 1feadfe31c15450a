"""The Activation dumps page's tables: the engine's own (``engine.dumps.tables``), headers
translated, numbers written as the page's sentences write them."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import presenting
from ui.formatting import column_format
from ui.i18n import t
from ui.text import dumps as text
from ui.text import dumps_notes as notes

TABLE_ROWS = 12  # rows visible before a table scrolls
# Headers too long for a table of many columns at 1280 px: a short one, the full as tooltip
SHORT_HEADERS = frozenset({"outliers", "affine_removed"})
# Columns that name a place, written as a reader types it (channel 1415, as the sentences
# above the tables write it); every other whole-number column counts, grouped (16,384)
INDEX_COLUMNS = frozenset(
    {"layer", "batch", "token", "channel", "first_layer_flagged", "layer_of_max"}
)
# A Styler writes about 10 µs a cell, and a table is drawn again with its section (the outlier
# channels' with every layer picked): past this many cells (0.1 s) a table keeps printf's
# formats.  The example's largest drawn table has 1,400 cells.
STYLED_CELLS = 10_000


def engine_table(
    frame: pd.DataFrame, key: str, digits: int = 6, approximate: frozenset = frozenset()
) -> None:
    """An engine table with its headers translated (the ids stay in the downloads); a
    column in ``SHORT_HEADERS`` shows its short header, the full one as its tooltip.

    Its numbers are written as the page's sentences write them (``text.cell_writer``:
    grouped, the true minus), through a pandas Styler: Streamlit shows a Styler's text and
    keeps the numbers under it, so a column still sorts by value and the table's own CSV
    download holds the numbers.  A NumberColumn's printf format cannot write "−" and
    groups only fixed-point numbers; it is kept for a table past ``STYLED_CELLS``.

    A column in ``approximate`` (read off bfloat16's grid: ``notes.median_approximate``) is
    written to 3 significant digits, marked "≈" (past ``STYLED_CELLS``: in its header)."""
    short = not presenting.as_html(len(frame))  # HTML shows no tooltip: the full header
    headers = {
        c: t(f"dumps.col_short.{c}" if short and c in SHORT_HEADERS else f"dumps.col.{c}")
        for c in frame.columns
    }
    styled = frame.size <= STYLED_CELLS
    for c in approximate & set(frame.columns) if not styled else ():
        headers[c] = t("dumps.approximate_header", header=headers[c])
    helps = {c: t(f"dumps.col.{c}") if c in SHORT_HEADERS else None for c in frame.columns}
    config = {headers[c]: st.column_config.Column(help=helps[c]) for c in frame.columns}
    numbers = [c for c in frame.columns if frame[c].dtype.kind in "iuf"]
    shown = frame.rename(columns=headers)
    for c in [c for c in frame.columns if frame[c].dtype.kind == "b"]:  # not True / False
        shown[headers[c]] = [t("dumps.yes") if v else t("dumps.no") for v in frame[c]]
    for c in [c for c in numbers if c in INDEX_COLUMNS and frame[c].isna().any()]:
        write = text.cell_writer(frame[c].to_numpy(), digits, place=True)  # the final norm's
        shown[headers[c]] = [write(v) for v in frame[c]]  # "—": Streamlit draws NaN "None"
        numbers.remove(c)
    if not styled:  # printf formats (set with a Styler, they would win)
        for c in numbers:
            shown_digits = notes.APPROXIMATE_DIGITS if c in approximate else digits
            writing = _printf(frame[c], shown_digits, c in INDEX_COLUMNS)
            config[headers[c]] = st.column_config.NumberColumn(format=writing, help=helps[c])
        numbers = []
    writers = {
        headers[c]: notes.approximate
        if c in approximate
        else text.cell_writer(frame[c].to_numpy(), digits, c in INDEX_COLUMNS)
        for c in numbers
    }
    presenting.table(shown, TABLE_ROWS, False, writers, column_config=config, key=key)


def _printf(column: pd.Series, digits: int, place: bool) -> str:
    """A column's printf format, for a table too large for a Styler (its minus "-")."""
    if place:
        return "%d"
    return "%,d" if column.dtype.kind in "iu" else column_format(column.to_numpy(float), digits)
