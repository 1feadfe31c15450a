"""What the training lab accepts: a live run on a shared CPU must stay small.

``TRAIN_RANGES`` gives each size field's inclusive (min, max); the Depth page's widgets read
their bounds from here, and ``check_limits`` refuses anything outside with an ``EngineError``.
"""

from __future__ import annotations

from engine.config import TrainSpec
from engine.errors import EngineError

TRAIN_RANGES = {
    "layers": (1, 8),
    "d": (8, 256),
    "steps": (1, 1000),
    "batch": (1, 256),
    "length": (1, 32),
}
TRAIN_WIDTHS = (64, 96, 128)  # the widths the page offers; 4 heads divide each
LEARNING_RATES = (3e-4, 1e-3, 2e-3, 3e-3, 5e-3, 1e-2)  # the learning rates the page offers


def check_limits(spec: TrainSpec) -> None:
    """Raise ``EngineError`` naming the field and its range when ``spec`` is out of range."""
    for name, (low, high) in TRAIN_RANGES.items():
        value = getattr(spec, name)
        if not low <= value <= high:
            raise EngineError(
                "training.out_of_range",
                {"name": name, "value": value, "low": low, "high": high},
            )
