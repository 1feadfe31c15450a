"""Inputs that show where each precision path breaks.

Each preset is data the page can show as it is: the row (a short pattern tiled to width d,
with a few entries overwritten), the epsilon and the storage dtype.  What every path does to
each preset (the outcome and the first failure ``engine.norms.precision.precision_story``
finds) is written out in tests/norms/preset_expectations.py and checked by
tests/norms/test_precision.py, so a page that describes a preset describes what the engine
computes.

- ``textbook_4096x100``: the textbook's 4096 entries of 100.  Sum x^2 = 4.1e7 = 625 x 65504,
  yet PyTorch's half ops and fused ops are fine (float32 accumulation); only a sum *stored*
  in half overflows.  For LayerNorm it is Sum x = 409600 that overflows (mu = inf, NaN).
- ``massive_activation``: one entry of 1000 in a row of +-1 (a massive activation, Sun et al.
  2024, arXiv:2402.17762).  1000^2 overflows wherever the square is stored in half,
  including the plain ``x.pow(2)`` RMSNorm; LayerNorm's ``x.var`` in half survives.
- ``ones_4096``: 4096 ones.  Only a running half sum breaks: it stalls at 2048, a finite
  but wrong mean square, and RMSNorm's outputs are 1.414, not 1 (~41 % off).
- ``plus_minus_300``: [-300, 300, -300, 300].  Mean 0, deviations 300: squared deviations
  (and sigma^2 = 90000) overflow, var = inf, and LayerNorm's outputs are silently 0.
- ``zero_variance``: [5, 5, 5, 5] with eps = 0: sigma^2 = 0, rstd = 1/sqrt(0) = inf,
  0 * inf = NaN in every path and every precision.  RMSNorm is unaffected (mean square 25).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import EngineError


@dataclass(frozen=True)
class PrecisionPreset:
    """One input row and the settings it is shown with."""

    name: str  # stable id (URL value)
    pattern: tuple[float, ...]  # tiled to width d
    d: int
    kind: str  # the kind the preset is best shown with
    overrides: tuple[tuple[int, float], ...] = ()  # (index, value) written over the pattern
    eps: float = 1e-5
    dtype: str = "float16"

    def rows(self) -> tuple[tuple[float, ...], ...]:
        """The preset as one row of d numbers."""
        row = [self.pattern[i % len(self.pattern)] for i in range(self.d)]
        for index, value in self.overrides:
            row[index] = value
        return (tuple(row),)


PRESETS = (
    PrecisionPreset("textbook_4096x100", pattern=(100.0,), d=4096, kind="rmsnorm"),
    PrecisionPreset(
        "massive_activation", pattern=(1.0, -1.0), d=4096, kind="rmsnorm", overrides=((0, 1000.0),)
    ),
    PrecisionPreset("ones_4096", pattern=(1.0,), d=4096, kind="rmsnorm"),
    PrecisionPreset("plus_minus_300", pattern=(-300.0, 300.0), d=4, kind="layernorm"),
    PrecisionPreset("zero_variance", pattern=(5.0,), d=4, kind="layernorm", eps=0.0),
)

PRESET_NAMES = tuple(preset.name for preset in PRESETS)


def preset(name: str) -> PrecisionPreset:
    """The preset called ``name`` (one of PRESET_NAMES)."""
    for candidate in PRESETS:
        if candidate.name == name:
            return candidate
    raise EngineError(
        "precision.unknown_preset",
        {"name": name, "allowed": ", ".join(PRESET_NAMES)},
    )


def preset_rows(name: str) -> tuple[tuple[float, ...], ...]:
    """The rows of the preset called ``name`` (what a page shows for it)."""
    return preset(name).rows()
