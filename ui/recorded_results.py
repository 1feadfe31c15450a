"""Reading ``benchmarks/RESULTS.md``: the recorded figures the Kernels page shows.

``parse_results_markdown`` turns the Markdown tables of that file into rows (dicts), tagged
with the headings they sit under.  Pure: no Streamlit import.
"""

from __future__ import annotations

import re
from pathlib import Path

RESULTS_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "RESULTS.md"

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_EMPTY = {"", "-", "—", "–", "n/a", "N/A"}


def _cell(text: str):
    """A table cell as a number when it is one (``1,234``, ``85 %``, ``1.3x`` too)."""
    text = text.strip().strip("`*").strip()
    if text in _EMPTY:
        return None
    number = text.replace(",", "").replace("\u202f", "").rstrip("%x× ").strip()
    if _NUMBER.match(number):
        return float(number)
    return text


def _split_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def _is_separator(cells: list[str]) -> bool:
    return bool(cells) and all(re.fullmatch(r":?-{1,}:?", c.replace(" ", "")) for c in cells)


def parse_results_markdown(text: str) -> list[dict]:
    """Every row of every Markdown table in ``text`` as a dict keyed by its header.

    Numbers become floats (thousands separators, a trailing ``%`` or ``x`` dropped); empty
    cells and dashes become None.  Each row also gets ``section``: the headings above its
    table joined with " / " (e.g. ``"Kernels / NVIDIA H200 · 2026-11-29"``), and ``table``:
    the table's index in the document.  A table with a header but no rows yields nothing.
    """
    rows: list[dict] = []
    headings: list[tuple[int, str]] = []
    header: list[str] | None = None
    table_index = -1
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        heading = re.match(r"^(#{1,6})\s+(.*?)\s*#*$", stripped)
        if heading:
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2))]
            header = None
            continue
        if not stripped.startswith("|"):
            header = None
            continue
        cells = _split_row(stripped)
        if header is None:
            following = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if following.startswith("|") and _is_separator(_split_row(following)):
                header = cells
                table_index += 1
            continue
        if _is_separator(cells):
            continue
        row = {name: _cell(cells[j]) if j < len(cells) else None for j, name in enumerate(header)}
        row["section"] = " / ".join(h[1] for h in headings)
        row["table"] = table_index
        rows.append(row)
    return rows


def read_results(path: str | Path = RESULTS_PATH) -> list[dict]:
    """``parse_results_markdown`` of ``benchmarks/RESULTS.md`` ([] when it is missing)."""
    path = Path(path)
    if not path.is_file():
        return []
    return parse_results_markdown(path.read_text(encoding="utf-8"))
