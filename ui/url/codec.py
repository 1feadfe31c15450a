"""How a link's values are read and written: one query parameter (``Param``), a page's
parameters (``PageParams``), parsing with refusals, and the query a page's values make.

Pure functions of their arguments: nothing here reads Streamlit's state
(``ui/url/address_bar.py`` does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from engine.config.fields import Accepts, accepts, annotations
from engine.errors import Listing
from ui.formatting import as_ascii, grouped, lost_to_zero, number_text, read_float
from ui.i18n import LANGUAGES
from ui.labels import every_label

LANGUAGE_PARAM = "lang"
# Presentation mode, app-wide like ``lang`` (no page prefix): "on" enlarges text and charts and
# hides the sidebar, toolbar and download menus; "results" also hides the page's controls,
# so a projected page shows only what is being taught.  ``ui/presenting.py`` applies it.
PRESENT_PARAM = "present"
PRESENT_MODES = ("off", "on", "results")
# Where a link lands on its page, app-wide too: ``at=<place>`` scrolls the page to a place it
# marks (``ui/landing.py``) when the link is opened, as a lesson's link does.  page -> places.
AT_PARAM = "at"
LANDINGS = {
    "depth": ("results",),  # the charts, under the settings
    "axes": ("batch_of_one",),  # BatchNorm's failures, experiment 4
    "kernels": ("memory",),  # the memory-bound section, under the timings
    "dumps": ("residual",),  # the residual stream's RMS, under what was read
}
# The server (scripts/serve.py's REQUEST_HEAD_BYTES) and the class's balancer answer HTTP 400
# once a request's line and headers pass 256 KiB; keep links well under that.  No link this
# app writes is longer, so a longer one is refused whole, before any value is read.
MAX_URL_CHARS = 96_000
# Streamlit's server drops a query string of more ``key=value`` pairs than this before the
# page runs, saying nothing: only the browser still knows, so it says so
# (``show_notices``).
MAX_URL_PAIRS = 1_000


MAX_LISTED_CHOICES = 24  # a refusal lists a menu this long whole (18 families), not longer


@dataclass(frozen=True)
class Param:
    """One query parameter: its key (= the widget's key), type, default and accepted values.

    kind: "choice" (one of ``choices``), "choices" (a subset, repeated keys in the URL),
    "int" / "float" (a number in [low, high]; in (low, high] when ``positive``), "bool"
    ("true"/"false"), "text".
    ``vocabulary`` names the ``ui.labels`` vocabulary whose display names older links wrote.
    ``spec`` and ``field``: the engine spec's field the parameter was made from (``from_spec``).
    """

    key: str
    kind: str
    default: Any
    choices: tuple = ()
    low: float | None = None
    high: float | None = None
    positive: bool = False  # the engine refuses 0 itself (Accepts.positive)
    vocabulary: str | None = None
    old_keys: tuple[str, ...] = ()
    max_chars: int = 200
    spec: type | None = None
    field: str | None = None

    def accepted(self) -> str:
        """What this parameter accepts, for messages."""
        if self.kind in ("choice", "choices"):  # the link's own words, as code: in any language
            shown = [f"`{serialize_one(self, c)}`" for c in self.choices]
            if len(shown) > MAX_LISTED_CHOICES:  # ls_answers: 52 ids; the pattern, the count
                shown = [*shown[:3], "…", f"{shown[-1]} ({len(shown)})"]
            return Listing(shown)  # joined with "、" on a Chinese page
        low, high = (grouped(number_text(end)) for end in (self.low, self.high))  # 16,777,216
        if self.kind in ("int", "float") and self.positive:
            return f"({low}, {high}]"
        if self.kind in ("int", "float"):
            return f"{low} … {high}"
        if self.kind == "bool":
            return Listing(("`true`", "`false`"))
        return f"≤ {self.max_chars:,}"  # a text's length; messages say "characters" themselves


@dataclass(frozen=True)
class PageParams:
    """A page's parameters; every key starts with ``prefix + "_"``."""

    page: str
    prefix: str
    params: tuple[Param, ...]
    by_key: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_key", {p.key: p for p in self.params})
        for p in self.params:
            if not p.key.startswith(self.prefix + "_"):
                raise ValueError(f"{p.key} lacks the page prefix {self.prefix}_")

    def __getitem__(self, key: str) -> Param:
        return self.by_key[key]


@dataclass(frozen=True)
class Refusal:
    """A URL value that was not accepted: ``key`` names the message (``share.<key>``)."""

    key: str
    params: dict


# --- pure parsing -----------------------------------------------------------------------------


def serialize_one(param: Param, value) -> str:
    """One value as the URL writes it."""
    if param.kind == "bool" or isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return number_text(value)
    return str(value)


def serialize(param: Param, value) -> list[str]:
    """``value`` as URL strings (one per repeated key for "choices")."""
    if param.kind == "choices":
        return [serialize_one(param, v) for v in value]
    return [serialize_one(param, value)]


def _numeric(param: Param) -> bool:
    return bool(param.choices) and isinstance(param.choices[0], int | float)


def _number(raw: str) -> float | None:
    """``raw`` as a finite number ("１e-５", "−1": typed on a Chinese keyboard), or None; 1e-400
    is no number here (float64 reads it as 0), so not the choice 0."""
    digits = as_ascii(raw)
    try:
        number = read_float(digits)
    except ValueError:
        return None
    return number if math.isfinite(number) and not lost_to_zero(digits, number) else None


def _names(param: Param) -> dict:
    """Every word a link may name a choice by, case aside: its id (a "+" typed into a link by
    hand arrives as a space: "forward+backward"), then every language's name and older names
    (ids first, each word kept by the first choice it names)."""
    names: dict = {}
    for choice in param.choices:
        written = serialize_one(param, choice).casefold()
        names.setdefault(written, choice)
        names.setdefault(written.replace("+", " "), choice)
    for choice in param.choices if param.vocabulary is not None else ():
        for name in every_label(param.vocabulary, choice):
            names.setdefault(name.casefold(), choice)
    return names


def _spelling_key(param: Param, raw: str):
    """What tells two items of a link apart: the word (case and spaces aside), or for a
    list of numbers the value ("256" and "256.0" are one width)."""
    number = _number(raw) if _numeric(param) else None
    return raw.strip().casefold() if number is None else number


def _as_choice(param: Param, raw: str, names: dict):
    """The choice ``raw`` names (``names``: ``_names(param)``): its id, an older display
    name, or (numbers) its value; case and the spaces around it aside, as for every word a
    link holds."""
    raw = raw.strip()
    if raw.casefold() in names:
        return names[raw.casefold()]
    number = _number(raw) if _numeric(param) else None
    return next((choice for choice in param.choices if choice == number), None)


def _refuse(param: Param, raw: str, why: str = "not_accepted") -> Refusal:
    """What was refused, for the page's warning (the value is cut there when long)."""
    return Refusal(
        why,
        {
            "param": param.key,
            "value": raw,
            "accepted": param.accepted(),
            "limit": f"{param.max_chars:,}" if param.max_chars else param.max_chars,
            "chars": f"{len(raw):,}",  # as the typed box's message counts: "1,999"
        },
    )


def parse(param: Param, raw: list[str]) -> tuple[Any, Refusal | None]:
    """The value ``raw`` (the URL's strings for ``param``) means, or a refusal, or both: a list
    keeps its known items when some are unknown (a stale lesson answer must not wipe the
    others), and the refusal names the unknown ones."""
    if param.kind == "choices":  # the known items are kept, the unknown ones named
        items = [part for r in raw for part in r.split(",")]
        items = [item for item in items if item.strip()] or items  # "post," is "post"
        # A repeated item counts once, before the count: "256,256,256.0" is one width however
        # long (spelled as _as_choice reads it: case and spaces aside, numbers by value); at
        # its last place, as a setting given twice is read as its last (lesson answers
        # "a,b,a" end on a)
        distinct: dict[object, str] = {}
        for item in items:
            key = _spelling_key(param, item)
            distinct.pop(key, None)
            distinct[key] = item
        items = list(distinct.values())
        names = _names(param)
        # more different items than names (numbers: values): one is unknown
        most = len(set(param.choices) if _numeric(param) else names)
        over = len(items) > most
        if over:  # only the first ``most`` are looked up, whatever the list's length
            items, counted = items[:most], {"items": f"{len(items):,}", "limit": most}
        values, unknown = [], []
        for item in items:
            choice = _as_choice(param, item, names)
            if choice is None:
                unknown.append(item)
            elif choice not in values:  # two names of one choice ("pre", "Pre-Norm", "前置")
                values.append(choice)
        if over:  # the known items among those read are kept, as for a shorter list
            why = "too_many_items_kept" if values else "too_many_items"
            refusal = _refuse(param, ",".join(items), why)
            return (values or None), Refusal(refusal.key, {**refusal.params, **counted})
        if not unknown:
            return values, None
        # ", ": "3,999" read as one number where the link held 3 and 999
        refusal = _refuse(
            param, ", ".join(unknown), "partly_accepted" if values else "not_accepted"
        )
        return (values or None), refusal
    text = raw[-1] if raw else ""
    if param.kind == "choice":
        choice = _as_choice(param, text, _names(param))
        return (choice, None) if choice is not None else (None, _refuse(param, text))
    if param.kind == "bool":
        if text.strip().lower() in ("true", "false"):
            return text.strip().lower() == "true", None
        return None, _refuse(param, text)
    if param.kind == "text":
        if len(text) > param.max_chars:  # an empty default (no class, no file): left out
            return None, _refuse(param, text, "too_long" if param.default else "too_long_unread")
        return text, None
    number = _number(text)
    if number is None or not (param.low <= number <= param.high):
        return None, _refuse(param, text)
    if param.positive and not number > 0:
        return None, _refuse(param, text)
    if param.kind == "int":
        if not number.is_integer():
            return None, _refuse(param, text)
        return int(number), None
    return number, None


def link_refusal(query: str) -> Refusal | None:
    """The whole link refused, before any of its values is read, or None: longer than any
    link this app writes.  ``query``: the raw query string, as the browser sent it."""
    if len(query) > MAX_URL_CHARS:
        return Refusal("link_too_long", {"chars": f"{len(query):,}", "limit": f"{MAX_URL_CHARS:,}"})
    return None


def query_pairs(page: PageParams | None, values, lang: str | None, present: str) -> dict:
    """The query ``values`` make for ``page`` (defaults omitted), with the app-wide
    parameters: ``{key: [value, ...]}``."""
    pairs = {} if lang is None else {LANGUAGE_PARAM: [lang]}
    if present != PRESENT.default:
        pairs[PRESENT_PARAM] = [present]
    for param in page.params if page is not None else ():
        value = values.get(param.key)
        if value is not None and value != param.default:
            pairs[param.key] = serialize(param, value)
    return pairs


def encode_pairs(pairs: dict[str, list[str]]) -> str:
    return urlencode([(key, value) for key, values in pairs.items() for value in values])


def query_string(
    page: PageParams, values: dict[str, Any], lang: str | None = None, present: str = "off"
) -> str:
    """The query a page's current ``values`` make (defaults omitted), e.g. for a lesson link;
    ``lang`` and ``present`` (when not "off") are the app-wide parameters."""
    return encode_pairs(query_pairs(page, values, lang, present))


LANGUAGE = Param(LANGUAGE_PARAM, "choice", "en", tuple(LANGUAGES))
PRESENT = Param(PRESENT_PARAM, "choice", "off", PRESENT_MODES)
AT = Param(AT_PARAM, "choice", "top", ("top", *sorted({p for v in LANDINGS.values() for p in v})))


# --- a parameter made from an engine spec's field ---------------------------------------------
#
# A parameter made with ``from_spec`` names an engine spec's field: its kind, default, range
# and menu are that field's metadata (``engine/config/fields.py``), so the page offers what
# the engine accepts.  A page may offer less (a narrower range or menu) or a second parameter
# on the same field with its own default; ``tests/ui/test_url_spec_fields.py`` checks each
# against its field.  The others (sections, clicked cells, views, typed text) are the page's.

_FIELD = object()  # from_spec's default: the field's own


def from_spec(
    key: str,
    spec: type,
    name: str,
    *,
    default=_FIELD,
    many: bool = False,
    table: dict | None = None,
    low: float | None = None,
    high: float | None = None,
    choices=None,
    **url,
) -> Param:
    """The parameter ``key`` for the field ``name`` of ``spec``.

    ``many``: a list of the field's values (one spec per item); ``table``: ids in the link for
    the values behind them (``INIT_STDS``); ``low`` / ``high`` / ``choices``: the page offers
    less than the field accepts (beside the field's own ``offered`` / ``offered_range``, which
    apply without them); ``url``: ``vocabulary`` and ``old_keys``.
    """
    rule = accepts(spec).get(name, Accepts())
    kind = annotations(spec)[name][0]
    value = spec.__dataclass_fields__[name].default if default is _FIELD else default
    bound = {"spec": spec, "field": name, **url}
    if table is not None:
        ids = {v: k for k, v in table.items()}
        return Param(key, "choice", ids[value], tuple(table), **bound)
    menu = choices or rule.offered or rule.choices
    if menu is not None:
        return Param(key, "choices" if many else "choice", value, tuple(menu), **bound)
    if kind is bool:
        return Param(key, "bool", value, **bound)
    if kind is str:
        return Param(key, "text", value, max_chars=rule.high, **bound)
    shown_low, shown_high = rule.offered_range or (rule.low, rule.high)
    low = shown_low if low is None else low
    high = shown_high if high is None else high
    return Param(key, kind.__name__, value, low=low, high=high, positive=rule.positive, **bound)
