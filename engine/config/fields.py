"""What each field of a spec accepts, written once as field metadata, and the one check of it.

``param(default, low=, high=, choices=, offered=, offered_range=, positive=)`` is a
``dataclasses.field`` whose metadata (an ``Accepts``) says which values the field takes.  A
spec's ``__post_init__`` (``Checked``'s, or its own) calls ``check_fields(self)``, which refuses
the first field outside its ``Accepts`` with an ``EngineError``; pages read the same metadata
(``accepts(Spec)``) for their ranges, defaults and menus, so no range is written twice.

Whether a field holds a whole number, a number or a text is its annotation (``int``,
``float``, ``str``); ``| None`` accepts None.  A whole number is stored as an ``int`` and a
number as a ``float`` (a numpy integer becomes an ``int``); a text's ``high`` is its most
characters.  ``offered`` is only what a page lists in its menu (the field may accept more),
``offered_range`` the (low, high) a page's slider spans where it is narrower than what the
field accepts; ``choices`` is what the field accepts at all.  ``ui/url/`` makes the pages' URL
parameters from this metadata, so a page offers what its spec accepts, with the spec's default.

The range messages with both bounds are ``axes.out_of_range`` and ``axes.real_out_of_range``
(``locales/*/errors.toml``), shared with the Axes experiments' own arguments.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import types
import typing
from dataclasses import dataclass

from engine.errors import EngineError

_KEY = "accepts"  # the metadata entry param() writes
MAX_SEED = 2**31 - 1  # every seed field's largest value


@dataclass(frozen=True)
class Accepts:
    """The values one field accepts: bounds (inclusive), or a tuple of choices."""

    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    offered: tuple | None = None  # the page's menu, when it lists fewer than it accepts
    offered_range: tuple[float, float] | None = None  # the page's slider, when narrower
    positive: bool = False  # > 0 (and low = 0 for the range message)


def param(
    default=dataclasses.MISSING,
    *,
    low=None,
    high=None,
    choices=None,
    offered=None,
    offered_range: tuple[float, float] | None = None,
    positive: bool = False,
):
    """A spec field with ``default`` (none: the field is required) and what it accepts."""
    if high is not None and low is None and not positive:
        raise TypeError("param(): a high bound needs a low one (or positive=True)")
    rule = Accepts(
        low=low,
        high=high,
        choices=None if choices is None else tuple(choices),
        offered=None if offered is None else tuple(offered),
        offered_range=offered_range,
        positive=positive,
    )
    return dataclasses.field(default=default, metadata={_KEY: rule})


def accepts(spec) -> dict[str, Accepts]:
    """What each ``param`` field of ``spec`` (a spec class or instance) accepts, by name."""
    return {f.name: f.metadata[_KEY] for f in dataclasses.fields(spec) if _KEY in f.metadata}


@functools.cache
def annotations(cls: type) -> dict[str, tuple[type | None, bool]]:
    """Per field: ``int``, ``float``, ``str``, ``bool`` or None (another type), and whether
    None is accepted."""
    kinds = {}
    for name, hint in typing.get_type_hints(cls).items():
        union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
        members = typing.get_args(hint) if union else (hint,)
        kind = next((m for m in (bool, int, float, str) if m in members), None)
        kinds[name] = (kind, type(None) in members)
    return kinds


def check_fields(spec) -> None:
    """Refuse the first ``param`` field of ``spec`` outside what it accepts; store numbers
    as ``int`` / ``float``.  Rules between fields (groups divide d) stay in the spec."""
    kinds = annotations(type(spec))
    for name, rule in accepts(spec).items():
        value = getattr(spec, name)
        kind, optional = kinds[name]
        if value is None and optional:
            continue
        if rule.choices is not None:
            if value not in rule.choices:
                allowed = ", ".join(map(str, rule.choices))
                raise EngineError(
                    "config.unknown_value", {"name": name, "value": str(value), "allowed": allowed}
                )
        elif kind is bool and not isinstance(value, bool):
            params = {"name": name, "value": str(value), "allowed": "True, False"}
            raise EngineError("config.unknown_value", params)
        elif kind is str:
            _check_text(name, value, rule)
        elif kind in (int, float):
            object.__setattr__(spec, name, checked(name, value, kind is int, rule))


class Checked:
    """A spec whose ``__post_init__`` is ``check_fields`` alone (a spec with rules between
    its fields writes its own and calls ``check_fields`` there)."""

    def __post_init__(self) -> None:
        check_fields(self)


def _check_text(name: str, value, rule: Accepts) -> None:
    """A text of at least ``rule.low`` characters besides spaces, at most ``rule.high``."""
    if not isinstance(value, str):
        raise EngineError("config.not_a_text", {"name": name, "value": str(value)[:40]})
    if rule.low is not None and len(value.strip()) < rule.low:
        raise EngineError("config.empty", {"name": name})
    if rule.high is not None and len(value) > rule.high:
        params = {"name": name, "chars": f"{len(value):,}", "limit": f"{rule.high:,}"}
        raise EngineError("config.too_long", params)


def checked(name: str, value, whole: bool, rule: Accepts):
    """``value`` as an ``int`` (``whole``) or a ``float`` when ``rule`` accepts it; else the
    refusal naming ``name``.  Also for a function's own arguments (``engine/axes/limits.py``)."""
    kind = numbers.Integral if whole else numbers.Real
    typed = isinstance(value, kind) and not isinstance(value, bool)
    low = 0 if rule.low is None else rule.low
    if rule.high is not None and (not typed or not low <= value <= rule.high):
        key = "axes.out_of_range" if whole else "axes.real_out_of_range"
        params = {"name": name, "value": str(value), "low": low, "high": rule.high}
        raise EngineError(key, params)
    if not typed:
        key = "config.not_whole" if whole else "config.not_a_number"
        raise EngineError(key, {"name": name, "value": str(value)})
    if rule.positive and not value > 0:
        raise EngineError("config.not_positive", {"name": name, "value": value})
    if rule.low is not None and not value >= rule.low:  # also refuses NaN
        raise EngineError(
            "config.below_minimum", {"name": name, "value": value, "minimum": rule.low}
        )
    return int(value) if whole else float(value)
