"""Inputs that show where each precision path breaks, with what each path is expected to do.

Each preset is data the page can show as it is: the row (a short pattern tiled to width d,
with a few entries overwritten), the epsilon, the storage dtype, and for every (kind, path)
the outcome and the first failure ``engine.norms.precision.precision_story`` finds.
tests/norms/test_precision.py runs every preset and checks every expectation, so a page that
quotes them quotes what the engine computes.

- ``textbook_4096x100``: the textbook's 4096 entries of 100.  Sum x^2 = 4.1e7 = 625 x 65504,
  yet PyTorch's half ops and fused ops are fine (float32 accumulation); only a sum *stored*
  in half overflows.  For LayerNorm it is Sum x = 409600 that overflows (mu = inf, NaN).
- ``massive_activation``: one entry of 1000 in a row of +-1 (a massive activation, Sun et al.
  2024, arXiv:2402.17762).  1000^2 overflows wherever the square is stored in half,
  including the plain ``x.pow(2)`` RMSNorm; LayerNorm's ``x.var`` in half survives.
- ``ones_4096``: 4096 ones.  Only a running half sum breaks: it stalls at 2048.
- ``plus_minus_300``: [-300, 300, -300, 300].  Mean 0, deviations 300: squared deviations
  (and sigma^2 = 90000) overflow, var = inf, and LayerNorm's outputs are silently 0.
- ``zero_variance``: [5, 5, 5, 5] with eps = 0: sigma^2 = 0, rstd = 1/sqrt(0) = inf,
  0 * inf = NaN in every path and every precision.  RMSNorm is unaffected (mean square 25).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import EngineError


@dataclass(frozen=True)
class Expected:
    """What one path does on one preset: outcome, and the first failure (if any)."""

    outcome: str  # engine.norms.precision.OUTCOMES
    failure: str | None = None  # engine.norms.precision.FAILURES
    quantity: str | None = None
    index: int | None = None  # entry or summation step, 0-based


OK = Expected("ok")


@dataclass(frozen=True)
class PrecisionPreset:
    """One input row and what every path does to it."""

    name: str  # stable id (URL value)
    pattern: tuple[float, ...]  # tiled to width d
    d: int
    overrides: tuple[tuple[int, float], ...]  # (index, value) written over the pattern
    eps: float
    dtype: str
    kind: str  # the kind the preset is best shown with
    expected: tuple[tuple[str, str, Expected], ...]  # (kind, path, expectation)

    def rows(self) -> tuple[tuple[float, ...], ...]:
        """The preset as one row of d numbers."""
        row = [self.pattern[i % len(self.pattern)] for i in range(self.d)]
        for index, value in self.overrides:
            row[index] = value
        return (tuple(row),)

    def expectation(self, kind: str, path: str) -> Expected:
        """The expected result of ``path`` for ``kind`` on this preset."""
        return next(e for k, p, e in self.expected if (k, p) == (kind, path))


def _table(rmsnorm: dict, layernorm: dict) -> tuple[tuple[str, str, Expected], ...]:
    return tuple(
        (kind, path, expectation)
        for kind, by_path in (("rmsnorm", rmsnorm), ("layernorm", layernorm))
        for path, expectation in by_path.items()
    )


_ALL_OK = {
    "upcast": OK,
    "torch_half": OK,
    "fused_half": OK,
    "sum_then_divide_half": OK,
    "naive_running_half": OK,
}

PRESETS = (
    PrecisionPreset(
        name="textbook_4096x100",
        pattern=(100.0,),
        d=4096,
        overrides=(),
        eps=1e-5,
        dtype="float16",
        kind="rmsnorm",
        expected=_table(
            rmsnorm={
                **_ALL_OK,
                "sum_then_divide_half": Expected("silent_zero", "overflow", "sum_of_squares"),
                # 10000 * 7 = 70000 > 65504: the 7th partial sum is inf
                "naive_running_half": Expected("silent_zero", "overflow", "sum_of_squares", 6),
            },
            layernorm={
                **_ALL_OK,  # constant row: exact output 0; F.layer_norm leaves ~0.001
                "sum_then_divide_half": Expected("nonfinite", "overflow", "sum"),
                "naive_running_half": Expected("nonfinite", "overflow", "sum", 678),
            },
        ),
    ),
    PrecisionPreset(
        name="massive_activation",
        pattern=(1.0, -1.0),
        d=4096,
        overrides=((0, 1000.0),),
        eps=1e-5,
        dtype="float16",
        kind="rmsnorm",
        expected=_table(
            rmsnorm={
                **_ALL_OK,
                "torch_half": Expected("silent_zero", "overflow", "square", 0),
                "sum_then_divide_half": Expected("silent_zero", "overflow", "square", 0),
                "naive_running_half": Expected("silent_zero", "overflow", "square", 0),
            },
            layernorm={
                **_ALL_OK,
                "sum_then_divide_half": Expected("silent_zero", "overflow", "squared_deviation", 0),
                "naive_running_half": Expected("silent_zero", "overflow", "squared_deviation", 0),
            },
        ),
    ),
    PrecisionPreset(
        name="ones_4096",
        pattern=(1.0,),
        d=4096,
        overrides=(),
        eps=1e-5,
        dtype="float16",
        kind="rmsnorm",
        expected=_table(
            rmsnorm={
                **_ALL_OK,
                "naive_running_half": Expected("wrong", "stall", "sum_of_squares", 2048),
            },
            layernorm={**_ALL_OK, "naive_running_half": Expected("wrong", "stall", "sum", 2048)},
        ),
    ),
    PrecisionPreset(
        name="plus_minus_300",
        pattern=(-300.0, 300.0),
        d=4,
        overrides=(),
        eps=1e-5,
        dtype="float16",
        kind="layernorm",
        expected=_table(
            rmsnorm={
                **_ALL_OK,
                "torch_half": Expected("silent_zero", "overflow", "square", 0),
                "sum_then_divide_half": Expected("silent_zero", "overflow", "square", 0),
                "naive_running_half": Expected("silent_zero", "overflow", "square", 0),
            },
            layernorm={
                **_ALL_OK,
                # x.var accumulates in float32: sigma^2 = 90000 itself rounds to inf in half
                "torch_half": Expected("silent_zero", "overflow", "variance"),
                "sum_then_divide_half": Expected("silent_zero", "overflow", "squared_deviation", 0),
                "naive_running_half": Expected("silent_zero", "overflow", "squared_deviation", 0),
            },
        ),
    ),
    PrecisionPreset(
        name="zero_variance",
        pattern=(5.0,),
        d=4,
        overrides=(),
        eps=0.0,
        dtype="float16",
        kind="layernorm",
        expected=_table(
            rmsnorm=_ALL_OK,
            layernorm={
                path: Expected("nonfinite", "zero_variance", "variance") for path in _ALL_OK
            },
        ),
    ),
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
