"""What every precision path is expected to do on each preset of
engine/norms/precision_presets.py: the outcome and the first failure
``engine.norms.precision.precision_story`` should find.  Written out by hand from the
arithmetic in the presets' docstring; test_precision.py runs every preset against them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Expected:
    """What one path does on one preset: outcome, and the first failure (if any)."""

    outcome: str  # engine.norms.precision.OUTCOMES
    failure: str | None = None  # engine.norms.precision.FAILURES
    quantity: str | None = None
    index: int | None = None  # entry or summation step, 0-based


OK = Expected("ok")
ALL_OK = {
    "upcast": OK,
    "torch_half": OK,
    "fused_half": OK,
    "sum_then_divide_half": OK,
    "naive_running_half": OK,
}

# preset name -> kind -> path -> expectation
EXPECTED: dict[str, dict[str, dict[str, Expected]]] = {
    "textbook_4096x100": {
        "rmsnorm": {
            **ALL_OK,
            "sum_then_divide_half": Expected("silent_zero", "overflow", "sum_of_squares"),
            # 10000 * 7 = 70000 > 65504: the 7th partial sum is inf
            "naive_running_half": Expected("silent_zero", "overflow", "sum_of_squares", 6),
        },
        "layernorm": {
            **ALL_OK,  # constant row: exact output 0; F.layer_norm leaves ~0.001
            "sum_then_divide_half": Expected("nonfinite", "overflow", "sum"),
            "naive_running_half": Expected("nonfinite", "overflow", "sum", 678),
        },
    },
    "massive_activation": {
        "rmsnorm": {
            **ALL_OK,
            "torch_half": Expected("silent_zero", "overflow", "square", 0),
            "sum_then_divide_half": Expected("silent_zero", "overflow", "square", 0),
            "naive_running_half": Expected("silent_zero", "overflow", "square", 0),
        },
        "layernorm": {
            **ALL_OK,
            "sum_then_divide_half": Expected("silent_zero", "overflow", "squared_deviation", 0),
            "naive_running_half": Expected("silent_zero", "overflow", "squared_deviation", 0),
        },
    },
    "ones_4096": {
        "rmsnorm": {
            **ALL_OK,
            "naive_running_half": Expected("wrong", "stall", "sum_of_squares", 2048),
        },
        "layernorm": {**ALL_OK, "naive_running_half": Expected("wrong", "stall", "sum", 2048)},
    },
    "plus_minus_300": {
        "rmsnorm": {
            **ALL_OK,
            "torch_half": Expected("silent_zero", "overflow", "square", 0),
            "sum_then_divide_half": Expected("silent_zero", "overflow", "square", 0),
            "naive_running_half": Expected("silent_zero", "overflow", "square", 0),
        },
        "layernorm": {
            **ALL_OK,
            # x.var accumulates in float32: sigma^2 = 90000 itself rounds to inf in half
            "torch_half": Expected("silent_zero", "overflow", "variance"),
            "sum_then_divide_half": Expected("silent_zero", "overflow", "squared_deviation", 0),
            "naive_running_half": Expected("silent_zero", "overflow", "squared_deviation", 0),
        },
    },
    "zero_variance": {
        "rmsnorm": ALL_OK,
        "layernorm": {path: Expected("nonfinite", "zero_variance", "variance") for path in ALL_OK},
    },
}
