"""The scenarios of ``bench_sessions.py``: for each, the pages its sessions open (by their
address) and the widgets each page's users change, with how a new value is picked each time
(another option, another whole number, a toggle, a vector no session typed before).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.streamlit_session import Widget


def other_option(widget: Widget, current, rng: random.Random, _count: int):
    """Another option of a selectbox, radio or segmented control than the current one."""
    current = current[0] if isinstance(current, list) and current else current
    value = rng.choice([o for o in widget.options if o != current])
    return [value] if widget.kind == "button_group" else value


def other_number(widget: Widget, current, rng: random.Random, _count: int) -> float:
    """Another whole number within the number input's range (at most 32 values)."""
    e = widget.element
    low = int(e.min) if e.has_min else 0
    high = min(int(e.max) if e.has_max else low + 31, low + 31)
    return float(rng.choice([v for v in range(low, high + 1) if v != current]))


def toggle(_widget: Widget, current, _rng: random.Random, _count: int) -> bool:
    return not current


def layers(_widget: Widget, current, rng: random.Random, _count: int) -> float:
    return float(rng.choice([v for v in (6, 12, 24, 48) if v != current]))


def new_vector(_widget: Widget, _current, rng: random.Random, count: int) -> str:
    """A vector no session typed before: every change computes (no cache hit)."""
    base = 100.0 * rng.randrange(1, 10_000) + count
    return f"{base:g}, {base + 1:g}, {base + 3:g}, {base + 7:g}"


@dataclass(frozen=True)
class Change:
    key: str  # the widget's key (or the start of it: "ls_pick_" + the lesson's id)
    choose: Callable  # (widget, current value, rng, count) → the new value


SCENARIOS: dict[str, dict[str, tuple[Change, ...]]] = {  # page address → its changes
    "class": {
        "lessons": (Change("ls_choose", other_option), Change("ls_pick_", other_option)),
        "": (Change("vl_text", new_vector), Change("vl_norm", other_option)),
        "axes": (
            Change("ax_cell_t", other_number),
            Change("ax_cell_c", other_number),
            Change("ax_norm", other_option),
        ),
        "dumps": (  # the report's first section: the residual stream
            Change("du_batch", other_number),
            Change("du_log", toggle),
        ),
        "depth": (
            Change("dp_norm", other_option),
            Change("dp_layers", layers),
            Change("dp_final", toggle),
        ),
    },
    "vector-text": {"": (Change("vl_text", new_vector),)},
}
# Pages are named by their address: the Vector Lab is the default page, at "/" (its own name
# there is answered with page_not_found, in a browser too).
LABELS = {"": "vector_lab"}
