"""Refusals shared by the specs: one wording per kind of bad value."""

from __future__ import annotations

from engine.errors import EngineError


def refuse_choice(name: str, value, allowed) -> None:
    raise EngineError(
        "config.unknown_value",
        {"name": name, "value": str(value), "allowed": ", ".join(map(str, allowed))},
    )


def at_least(name: str, value, minimum) -> None:
    if not value >= minimum:  # also refuses NaN
        raise EngineError(
            "config.below_minimum",
            {"name": name, "value": value, "minimum": minimum},
        )


def above_zero(name: str, value) -> None:
    if not value > 0.0:
        raise EngineError(
            "config.not_positive",
            {"name": name, "value": value},
        )
