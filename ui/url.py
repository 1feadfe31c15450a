"""The URL contract: every page's query parameters, how a link is read, and the address bar
as the page's state.

A share link is a public API: workshops are prepared days ahead from links, so each page's
parameters are listed here with their meaning, and ``tests/ui/test_url.py`` pins them.
Values are stable ids (``rmsnorm``, ``attention``), never display names, so a link made in
one language opens the same view in the other.  Links written before this contract (which
carried display names such as ``vl_norm=RMSNorm`` or ``dp_sublayer=类注意力混合器``, and the
Depth page's ``tl_*`` keys) still open their view.

``app.py`` calls, around every page run: ``seed`` (URL -> widget state, before the widgets
exist; each widget's ``key`` is its parameter's ``key``), ``show_notices`` (what the URL
asked for that was refused), the page, then ``publish`` (widget state -> URL, stable ids,
defaults omitted) and ``share_box``.  The URL is untrusted input: a value out of range,
unknown or malformed is refused with a message naming the parameter and what is accepted;
a list keeps its known items; nothing is clamped or dropped silently.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from classroom import rules as class_rules
from engine.axes import limits as axes_limits
from engine.axes.small_batch import DEFAULT_BATCH_SIZES, DEFAULT_DRAWS
from engine.axes.train_eval import DEFAULT_MOMENTUM, DEFAULT_SHIFT, DEFAULT_STEPS
from engine.config import (
    EXPERIMENTS,
    GEOMETRY_AXES,
    GEOMETRY_MAX_D,
    GEOMETRY_SCENE_MAX_D,
    STORAGE_DTYPES,
    AxesSpec,
    DepthSpec,
    DumpSpec,
    FoldSpec,
    FreezeSpec,
    FreezeSweepSpec,
    GeometrySpec,
    HalfSpec,
    LensSpec,
    LiveSpec,
    MassiveSpec,
    NormSpec,
    SwapSpec,
    TextSpec,
    TrainSpec,
)
from engine.config.depth import INIT_STDS, MAX_LAYERS, MAX_TOKENS
from engine.config.fields import MAX_SEED, Accepts, accepts, annotations
from engine.models import catalog
from engine.norms.kinds import PER_TOKEN_KINDS, ROW_KINDS
from engine.norms.precision_presets import PRESET_NAMES
from engine.norms.random_inputs import DISTRIBUTIONS
from engine.perf.timing import PASSES
from ui.errors import shown
from ui.formatting import literal, number_text
from ui.i18n import LANGUAGES, language_from_locale, t
from ui.labels import every_label
from ui.lessons.catalog import ANSWER_IDS, LESSON_IDS
from ui.vector_input import MAX_ROWS, MAX_TEXT_CHARS, MAX_VECTOR_WIDTH

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
# The server answers HTTP 400 once a request's line and headers pass 128 KiB (measured: a
# query of 127,841 characters opened, 127,857 did not); keep links well under that.  No link
# this app writes is longer, so a longer one is refused whole, before any value is read.
MAX_URL_CHARS = 96_000
# Streamlit's server drops a query string of more ``key=value`` pairs than this before the
# page runs, saying nothing: only the browser still knows, so it says so
# (``show_notices``).
MAX_URL_PAIRS = 1_000


@dataclass(frozen=True)
class Param:
    """One query parameter: its key (= the widget's key), type, default and accepted values.

    kind: "choice" (one of ``choices``), "choices" (a subset, repeated keys in the URL),
    "int" / "float" (a number in [low, high]), "bool" ("true"/"false"), "text".
    ``vocabulary`` names the ``ui.labels`` vocabulary whose display names older links wrote.
    ``spec`` and ``field``: the engine spec's field the parameter was made from (``from_spec``).
    """

    key: str
    kind: str
    default: Any
    choices: tuple = ()
    low: float | None = None
    high: float | None = None
    vocabulary: str | None = None
    old_keys: tuple[str, ...] = ()
    max_chars: int = 200
    spec: type | None = None
    field: str | None = None

    @property
    def max_items(self) -> int:
        """The most items a "choices" list may name (each choice twice, in older hand-written
        links); a longer list is refused before its items are read."""
        return 2 * len(self.choices)

    def accepted(self) -> str:
        """What this parameter accepts, for messages."""
        if self.kind in ("choice", "choices"):
            return ", ".join(serialize_one(self, c) for c in self.choices)
        if self.kind in ("int", "float"):
            return f"{number_text(self.low)} … {number_text(self.high)}"
        if self.kind == "bool":
            return "true, false"
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


def _as_choice(param: Param, raw: str):
    """The choice ``raw`` names: its id, an older display name, or (numbers) its value."""
    for choice in param.choices:
        if raw == serialize_one(param, choice):
            return choice
    if param.vocabulary is not None:
        for choice in param.choices:
            if raw.casefold() in {
                name.casefold() for name in every_label(param.vocabulary, choice)
            }:
                return choice
    if param.choices and isinstance(param.choices[0], int | float):
        try:
            number = float(raw)
        except ValueError:
            return None
        for choice in param.choices:
            if number == choice:
                return choice
    return None


def _refuse(param: Param, raw: str, why: str = "not_accepted") -> Refusal:
    """What was refused, for the page's warning (the value is cut there when long)."""
    return Refusal(
        why,
        {
            "param": param.key,
            "value": raw,
            "accepted": param.accepted(),
            "limit": param.max_chars,
            "chars": len(raw),
        },
    )


def parse(param: Param, raw: list[str]) -> tuple[Any, Refusal | None]:
    """The value ``raw`` (the URL's strings for ``param``) means, or a refusal, or both: a list
    keeps its known items when some are unknown (a stale lesson answer must not wipe the
    others), and the refusal names the unknown ones."""
    if param.kind == "choices":  # the known items are kept, the unknown ones named
        items = [part for r in raw for part in r.split(",")]
        if len(items) > param.max_items:  # refused before any item is looked up
            refusal = _refuse(param, ",".join(items[: param.max_items]), "too_many_items")
            counted = {"items": f"{len(items):,}", "limit": param.max_items}
            return None, Refusal(refusal.key, {**refusal.params, **counted})
        values, unknown = [], []
        for item in items:
            choice = _as_choice(param, item.strip())
            if choice is None:
                unknown.append(item)
            elif choice not in values:
                values.append(choice)
        if not unknown:
            return values, None
        refusal = _refuse(param, ",".join(unknown), "partly_accepted" if values else "not_accepted")
        return (values or None), refusal
    text = raw[-1] if raw else ""
    if param.kind == "choice":
        choice = _as_choice(param, text)
        return (choice, None) if choice is not None else (None, _refuse(param, text))
    if param.kind == "bool":
        if text.lower() in ("true", "false"):
            return text.lower() == "true", None
        return None, _refuse(param, text)
    if param.kind == "text":
        if len(text) > param.max_chars:
            return None, _refuse(param, text, "too_long")
        return text, None
    try:
        number = float(text.strip())
    except ValueError:
        return None, _refuse(param, text)
    if not math.isfinite(number) or not (param.low <= number <= param.high):
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


def _pairs(page: PageParams | None, values, lang: str | None, present: str) -> dict:
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


def _encoded(pairs: dict[str, list[str]]) -> str:
    return urlencode([(key, value) for key, values in pairs.items() for value in values])


def query_string(
    page: PageParams, values: dict[str, Any], lang: str | None = None, present: str = "off"
) -> str:
    """The query a page's current ``values`` make (defaults omitted), e.g. for a lesson link;
    ``lang`` and ``present`` (when not "off") are the app-wide parameters."""
    return _encoded(_pairs(page, values, lang, present))


LANGUAGE = Param(LANGUAGE_PARAM, "choice", "en", tuple(LANGUAGES))
PRESENT = Param(PRESENT_PARAM, "choice", "off", PRESENT_MODES)
AT = Param(AT_PARAM, "choice", "top", ("top", *sorted({p for v in LANDINGS.values() for p in v})))


# --- the pages' parameters --------------------------------------------------------------------
#
# A parameter made with ``from_spec`` names an engine spec's field: its kind, default, range
# and menu are that field's metadata (``engine/config/fields.py``), so the page offers what
# the engine accepts.  A page may offer less (a narrower range or menu) or a second parameter
# on the same field with its own default; ``tests/ui/test_url.py`` checks each against its
# field.  The others (sections, clicked cells, views, typed text) are the page's own.

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
    less than the field accepts; ``url``: ``vocabulary`` and ``old_keys``.
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
    low = rule.low if low is None else low
    high = rule.high if high is None else high
    return Param(key, kind.__name__, value, low=low, high=high, **bound)


# app.py's default page: served at the app's root address, not at /vector_lab
DEFAULT_PAGE = "vector_lab"
TIMING_ROWS = (256, 1024, 4096)
TIMING_WIDTHS = (256, 512, 1024, 2048, 4096, 8192)
TIMING_DTYPES = ("float32", "bfloat16", "float16")

VECTOR_LAB = PageParams(
    "vector_lab",
    "vl",
    (
        # "preset": a row of engine/norms/precision_presets.py named by its id (vl_preset), so
        # a link to a 4,096-wide preset stays short; a link that types its numbers still works
        Param("vl_source", "choice", "text", ("text", "random", "preset"), vocabulary="source"),
        Param("vl_text", "text", "1, 2, 3, 4", max_chars=MAX_TEXT_CHARS),
        Param("vl_preset", "choice", PRESET_NAMES[0], PRESET_NAMES),
        Param("vl_d", "int", 8, low=1, high=MAX_VECTOR_WIDTH),
        Param("vl_rows", "int", 1, low=1, high=MAX_ROWS),
        Param("vl_dist", "choice", "normal", DISTRIBUTIONS, vocabulary="distribution"),
        Param("vl_seed", "int", 0, low=0, high=MAX_SEED),
        Param("vl_shift", "float", 0.0, low=-1e6, high=1e6),
        Param("vl_scale", "float", 1.0, low=0.0, high=1e6),
        Param("vl_dtype", "choice", "float32", STORAGE_DTYPES),
        from_spec("vl_compute", NormSpec, "compute_dtype"),
        from_spec("vl_norm", NormSpec, "kind", vocabulary="norm"),
        Param("vl_eps", "text", "1e-5", max_chars=40),  # typed: ui.vector_input.parse_eps
        from_spec("vl_offset", NormSpec, "offset"),
        Param("vl_gamma", "text", "1", max_chars=MAX_TEXT_CHARS // 4),
        Param("vl_beta", "text", "0", max_chars=MAX_TEXT_CHARS // 4),
        from_spec("vl_groups", NormSpec, "groups", default=2, high=MAX_VECTOR_WIDTH),
        from_spec("vl_alpha", NormSpec, "alpha"),
        Param("vl_row", "int", 1, low=1, high=MAX_ROWS),
    ),
)

# the stack simulated layer by layer | the L-sweep | wiring diagrams | the training lab
DEPTH_SECTIONS = ("stack", "sweep", "wiring", "training")
_RUN = {"vocabulary": "placement"}
DEPTH = PageParams(
    "depth",
    "dp",
    (
        Param("dp_section", "choice", "stack", DEPTH_SECTIONS),
        from_spec(
            "dp_placements",
            DepthSpec,
            "placement",
            many=True,
            default=["post", "pre"],
            vocabulary="placement",
        ),
        from_spec("dp_layers", DepthSpec, "layers", high=MAX_LAYERS),
        from_spec("dp_d", DepthSpec, "d"),
        from_spec("dp_tokens", DepthSpec, "tokens", high=MAX_TOKENS),
        from_spec("dp_seed", DepthSpec, "seed"),
        from_spec("dp_sublayer", DepthSpec, "sublayer", vocabulary="sublayer"),
        from_spec("dp_norm", DepthSpec, "norm", vocabulary="norm"),
        from_spec("dp_init", DepthSpec, "init_std", table=INIT_STDS, vocabulary="init"),
        from_spec("dp_activation", DepthSpec, "activation", vocabulary="activation"),
        from_spec("dp_scaling", DepthSpec, "residual_scaling"),
        from_spec("dp_final", DepthSpec, "final_norm"),
        from_spec("dp_alpha", DepthSpec, "dyt_alpha"),
        # the training lab (its keys were tl_*, tla_*, tlb_* before)
        from_spec("dp_task", TrainSpec, "task", vocabulary="task", old_keys=("tl_task",)),
        from_spec("dp_lr", TrainSpec, "lr", old_keys=("tl_lr",)),
        from_spec("dp_steps", TrainSpec, "steps", old_keys=("tl_steps",)),
        from_spec("dp_train_layers", TrainSpec, "layers", old_keys=("tl_layers",)),
        from_spec("dp_train_d", TrainSpec, "d", old_keys=("tl_d",)),
        from_spec(
            "dp_run_a", TrainSpec, "placement", default="pre", old_keys=("tla_placement",), **_RUN
        ),
        from_spec("dp_warmup_a", TrainSpec, "warmup", old_keys=("tla_warmup",)),
        from_spec("dp_run_b", TrainSpec, "placement", old_keys=("tlb_placement",), **_RUN),
        from_spec("dp_warmup_b", TrainSpec, "warmup", old_keys=("tlb_warmup",)),
    ),
)

KERNELS = PageParams(
    "kernels",
    "kn",
    (
        Param("kn_rows", "choice", 1024, TIMING_ROWS),
        Param("kn_widths", "choices", [256, 1024, 4096], TIMING_WIDTHS),
        Param("kn_dtype", "choice", "float32", TIMING_DTYPES),
        Param("kn_passes", "choices", list(PASSES), PASSES, vocabulary="pass"),
        Param("kn_tokens", "int", 4096, low=1, high=1 << 24),
        Param("kn_d", "int", 4096, low=1, high=1 << 18),
        Param("kn_rdtype", "choice", "bfloat16", TIMING_DTYPES),
    ),
)

# The model catalog.  A pasted config.json is user data: it stays in the browser session and is
# never written to the URL (``md_input=paste`` opens an empty box to paste into).
_CATALOG = catalog()
MODEL_EXAMPLES = tuple(f.id for f in _CATALOG.families if f.example is not None)
MODEL_DTYPES = ("config", "bfloat16", "float16", "float32")  # "config": its torch_dtype
MODELS = PageParams(
    "models",
    "md",
    (
        Param("md_family", "choice", "llama3", _CATALOG.ids),
        Param("md_input", "choice", "example", ("example", "paste"), vocabulary="config_input"),
        # GPT-3 175B by default: seed 000's 4,743,168 norm parameters, 0.0027 % of all
        Param("md_example", "choice", "gpt3", MODEL_EXAMPLES),
        Param("md_dtype", "choice", "config", MODEL_DTYPES),
        Param("md_tokens", "int", 1, low=1, high=1 << 24),
    ),
)

# Activation dumps.  The uploaded file is user data: it stays in the browser session and is
# never named in the URL; these are the settings of how it is read and shown, so a link
# opens the same view of whatever dump its reader uploads.  The stream override names an
# entry of the file, so it stays out of the link too.  The page opens on the built-in
# example (real SmolLM2 activations, no upload); links written before it existed carry no
# du_source and open on it too, with their settings.
DUMP_SOURCES = ("upload", "example", "live")
# The live model's given prompts (two English, two Chinese; the last three are also in the
# built-in example): results of these are shared between sessions; a prompt someone typed
# is theirs, and its results stay in their session.
LIVE_PROMPTS = (
    "The capital of France is Paris, and the capital of Japan is",
    "Normalization layers keep the residual stream of a deep Transformer from growing without "
    "bound as new layers are added on top.",
    "我喜欢周末读书和喝茶。",
    "为什么每一层都要先做归一化？",
)
DUMPS = PageParams(
    "dumps",
    "du",
    (
        Param("du_source", "choice", "example", DUMP_SOURCES, vocabulary="dump_source"),
        from_spec("du_axes", DumpSpec, "axes"),
        from_spec("du_order", DumpSpec, "layer_order", vocabulary="layer_order"),
        from_spec("du_massive_abs", DumpSpec, "massive_abs"),
        from_spec("du_massive_ratio", DumpSpec, "massive_ratio"),
        from_spec("du_outlier", DumpSpec, "outlier_ratio"),
        from_spec("du_eps", DumpSpec, "norm_eps"),
        Param("du_log", "bool", True),  # the RMS heatmap's colours on a log scale
        Param("du_batch", "int", 0, low=0, high=1 << 20),  # the sequence shown, when B > 1
        # -1: the middle layer (the dump's depth is not known before it is read)
        Param("du_token_layer", "int", -1, low=-1, high=1 << 20),
        Param("du_token", "int", 0, low=0, high=1 << 24),
        Param("du_channel_layer", "int", -1, low=-1, high=1 << 20),
        # the norm pair looked at (input vs output, DyT fit); -1: the norm that reads the
        # dump's largest entry (links before it existed meant pair 0 by leaving it out)
        Param("du_pair", "int", -1, low=-1, high=1 << 20),
        Param("du_io_token", "int", 0, low=0, high=1 << 24),  # its token (in du_batch)
        from_spec("du_prompt", LiveSpec, "prompt", default=LIVE_PROMPTS[0]),  # the live model
    ),
)

AXES_SECTIONS = ("cells", "batchnorm")  # which cells share statistics | BatchNorm's failures
AXES_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)  # the small-batch experiment's choices
_TOKENS = AxesSpec().tokens


def _range(rule: Accepts) -> dict:
    """An engine argument's range as a parameter's bounds."""
    return {"low": rule.low, "high": rule.high}


AXES = PageParams(
    "axes",
    "ax",
    (
        Param("ax_section", "choice", "cells", AXES_SECTIONS),
        # the tensor
        from_spec("ax_source", AxesSpec, "source", vocabulary="axes_source"),
        from_spec("ax_preset", AxesSpec, "preset", vocabulary="axes_preset"),
        from_spec("ax_batch", AxesSpec, "batch"),
        from_spec("ax_tokens", AxesSpec, "tokens"),
        from_spec("ax_d", AxesSpec, "d"),
        from_spec("ax_seed", AxesSpec, "seed"),
        # "16,12,8,4": one length per sequence ("512," each); empty = the engine's staircase
        Param("ax_lengths", "text", "", max_chars=4 * axes_limits.MAX_BATCH),
        from_spec("ax_pad", AxesSpec, "pad_value"),
        # the norm
        from_spec("ax_norm", AxesSpec, "kind", vocabulary="norm"),
        from_spec("ax_groups", AxesSpec, "groups"),
        from_spec("ax_eps", AxesSpec, "eps"),
        from_spec("ax_mask", AxesSpec, "mask_padding"),
        from_spec("ax_dtype", AxesSpec, "dtype"),
        # the clicked cell (b, t, c)
        Param("ax_cell_b", "int", 1, low=0, high=axes_limits.MAX_BATCH - 1),
        Param("ax_cell_t", "int", 4, low=0, high=axes_limits.MAX_TOKENS - 1),
        Param("ax_cell_c", "int", 10, low=0, high=axes_limits.MAX_CHANNELS - 1),
        # BatchNorm's failures: the arguments of engine/axes/{small_batch,train_eval,causal_leak}.py
        Param("ax_sizes", "choices", list(DEFAULT_BATCH_SIZES), AXES_BATCH_SIZES),
        Param("ax_draws", "int", DEFAULT_DRAWS, **_range(axes_limits.DRAWS)),
        Param("ax_shift", "float", DEFAULT_SHIFT, **_range(axes_limits.SHIFT)),
        Param("ax_momentum", "float", DEFAULT_MOMENTUM, **_range(axes_limits.MOMENTUM)),
        Param("ax_steps", "int", DEFAULT_STEPS, **_range(axes_limits.TRAIN_STEPS)),
        Param(
            "ax_position",
            "int",
            _TOKENS - 1,
            low=axes_limits.LEAK_POSITION_LOW,
            high=axes_limits.MAX_TOKENS - 1,
        ),
        # the example source: the point of SmolLM2's stream sliced
        from_spec("ax_layer", AxesSpec, "layer"),
    ),
)

# Lessons (ui/lessons/): where a learner is and what they answered ("<lesson>.<option>"), so a
# link resumes the course; "sheet" is the instructor's printable list of every lesson's link.
LESSON_VIEWS = ("lesson", "sheet")
LESSONS = PageParams(
    "lessons",
    "ls",
    (
        Param("ls_lesson", "choice", LESSON_IDS[0], LESSON_IDS),
        Param("ls_answers", "choices", [], ANSWER_IDS),
        Param("ls_view", "choice", "lesson", LESSON_VIEWS),
        # a class's join code: this browser's committed predictions are counted in it
        Param("ls_class", "text", "", max_chars=4 * class_rules.CODE_LENGTH),
    ),
)

# Class mode's instructor page: the class (its code and the instructor's private key, the
# "instructor link") and the lesson whose answers it shows.  The key is read from a link but
# left out of the address bar while presenting and out of every shared link (the session
# keeps it): a room that sees the projector never reads it.
SECRET_KEYS = ("cl_key",)
CLASSROOM = PageParams(
    "classroom",
    "cl",
    (
        Param("cl_code", "text", "", max_chars=4 * class_rules.CODE_LENGTH),
        Param("cl_key", "text", "", max_chars=class_rules.TOKEN_CHARS),
        Param("cl_lesson", "choice", LESSON_IDS[0], LESSON_IDS),
    ),
)

# Geometry.  The scene takes d = 1, 2 or 3; the high-dimension section its own width.  The
# sliders offer gamma and beta in [-3, 3] and the shift in [-10, 10], less than the engine takes.
GEOMETRY_SECTIONS = ("scene", "vector", "eps", "affine", "dyt", "high", "real")
GEOMETRY_SHOWN = PER_TOKEN_KINDS  # the norms the scene draws
GEOMETRY_VIEWS = ("pca", "axes", "ones")
_AFFINE = {"low": -3.0, "high": 3.0}
GEOMETRY = PageParams(
    "geometry",
    "ge",
    (
        Param("ge_section", "choice", "scene", GEOMETRY_SECTIONS),
        # the cloud of inputs
        from_spec("ge_d", GeometrySpec, "d", choices=range(1, GEOMETRY_SCENE_MAX_D + 1)),
        from_spec("ge_dist", GeometrySpec, "distribution", vocabulary="distribution"),
        from_spec("ge_count", GeometrySpec, "count"),
        from_spec("ge_spread", GeometrySpec, "spread"),
        from_spec("ge_shift", GeometrySpec, "shift", low=-10.0, high=10.0),
        from_spec("ge_seed", GeometrySpec, "seed"),
        from_spec("ge_eps", GeometrySpec, "eps"),
        # what the scene draws
        Param("ge_show", "choices", list(ROW_KINDS), GEOMETRY_SHOWN, vocabulary="norm"),
        Param("ge_inputs", "bool", True),
        Param("ge_lines", "bool", True),
        # one vector step by step ("1, 2, 6": mu = 3, off the all-ones axis)
        Param("ge_vector", "text", "1, 2, 6", max_chars=MAX_TEXT_CHARS),
        # gamma and beta per axis (the ellipsoid), DyT's alpha
        *(
            from_spec(f"ge_{name}_{axis}", GeometrySpec, f"{name}_{axis}", **_AFFINE)
            for name in ("gamma", "beta")
            for axis in GEOMETRY_AXES
        ),
        from_spec("ge_alpha", GeometrySpec, "dyt_alpha"),
        # high dimension
        from_spec("ge_wide_d", GeometrySpec, "d", default=768),
        Param("ge_view", "choice", "pca", GEOMETRY_VIEWS),
        Param("ge_axis_a", "int", 0, low=0, high=GEOMETRY_MAX_D - 1),
        Param("ge_axis_b", "int", 1, low=0, high=GEOMETRY_MAX_D - 1),
        # real activations: which norm pair of the shipped dump (in the dump's order)
        Param("ge_pair", "int", 0, low=0, high=1 << 10),
    ),
)

# Experiments on a real model.  A spec's blocks are a tuple the model's depth bounds; the page
# offers one block or every block (EVERY_BLOCK), checked against the model when it runs.
EVERY_BLOCK = -1
_BLOCK = {"low": EVERY_BLOCK, "high": 10**4}
EXPERIMENTS_PAGE = PageParams(
    "experiments",
    "ex",
    (
        Param("ex_experiment", "choice", EXPERIMENTS[0], EXPERIMENTS),
        # a model the operator's folders hold (engine.dumps.local_files' id); "": the built-in
        Param("ex_model", "text", "", max_chars=300),
        from_spec("ex_text", TextSpec, "text"),
        from_spec("ex_prompt", TextSpec, "prompt"),
        from_spec("ex_tokens", TextSpec, "max_tokens"),
        from_spec("ex_setting", MassiveSpec, "setting"),
        from_spec("ex_window", MassiveSpec, "window"),
        Param("ex_swap_block", "int", EVERY_BLOCK, **_BLOCK),  # SwapSpec.layers
        from_spec("ex_swap_final", SwapSpec, "final"),
        Param("ex_freeze_block", "int", EVERY_BLOCK, **_BLOCK),  # FreezeSpec.layers
        from_spec("ex_freeze_final", FreezeSpec, "final"),
        from_spec("ex_exempt", FreezeSpec, "exempt"),
        from_spec("ex_sweep_exempt", FreezeSweepSpec, "exempt"),
        from_spec("ex_fold_final", FoldSpec, "final"),
        from_spec("ex_top_k", LensSpec, "top_k"),
        from_spec("ex_upcast", HalfSpec, "upcast"),
    ),
)

PAGES = {
    p.page: p
    for p in (
        LESSONS,
        CLASSROOM,
        VECTOR_LAB,
        AXES,
        GEOMETRY,
        DEPTH,
        KERNELS,
        MODELS,
        DUMPS,
        EXPERIMENTS_PAGE,
    )
}
PREFIXES = {p.prefix for p in PAGES.values()} | {"tl", "tla", "tlb"}  # with the old Depth ones


_NOTICES = "_url_notices"  # (page, refusals) of the page being shown
_FIRST_RUN = "_url_first_run"  # (page, whether its link reached the page empty)
_PUBLISHED = "_url_published"  # (page, text parameters left out) the last whole run wrote
SHARE_KEY = "share_open"  # the sidebar's share box: open or not
_LAST_PAGE = "_url_last_page"  # the page of the previous run: a new one is a link followed
LANDING = "_url_landing"  # the place this page's link asked for, until ui.landing scrolls there
NAMED_UNKNOWN = 8  # unknown parameters a notice names (the rest are counted)
# Kept in the address bar by Streamlit whatever the page writes there (``st.query_params``
# hides them, ``from_dict`` keeps them): they count towards the length of the link it writes.
_STREAMLIT_KEEPS = ("embed", "embed_options")


def _query_string() -> str:
    """The query string as the browser sent it (Streamlit has no public accessor for the
    raw text; ``st.query_params`` holds it parsed)."""
    ctx = get_script_run_ctx()
    return getattr(ctx, "query_string", "") or ""


def _link_refused() -> bool:
    return link_refusal(_query_string()) is not None


def initial_language() -> str:
    """The URL's ``lang`` if valid, else the browser's locale, else English."""
    raw = [] if _link_refused() else st.query_params.get_all(LANGUAGE_PARAM)
    value = parse(LANGUAGE, raw)[0] if raw else None
    return value if value is not None else language_from_locale(st.context.locale)


def initial_present() -> str:
    """The URL's presentation mode if valid (a projector link), else "off"."""
    raw = [] if _link_refused() else st.query_params.get_all(PRESENT_PARAM)
    value, refusal = parse(PRESENT, raw) if raw else (PRESENT.default, None)
    return PRESENT.default if refusal is not None else value


def _landing(page: str, raw: list[str]) -> str | None:
    """The place ``raw`` (the link's ``at`` values) names on ``page``, or None."""
    value = parse(AT, raw)[0] if raw else None
    return value if value in LANDINGS.get(page, ()) else None


def seed(page: PageParams | None) -> None:
    """Copy the URL's values for ``page`` into widget state; remember what was refused.

    A widget that already exists in this session holds the live value, so only parameters
    whose widget has no state yet are read (a fresh link, a page opened from a lesson).
    A link too long is refused whole, before any value is read.
    """
    name = page.page if page is not None else ""
    if _FIRST_RUN not in st.session_state:  # the session's first page, and whether its link
        #   reached the page empty (as Streamlit passes on a link of too many pairs)
        st.session_state[_FIRST_RUN] = (name, not st.query_params)
    whole = link_refusal(_query_string())
    if whole is not None:
        st.session_state[_NOTICES] = (name, (whole,))
        return
    url = st.query_params
    if st.session_state.get(_LAST_PAGE) != name:  # arrived: where does the link land?
        st.session_state[_LAST_PAGE] = name
        st.session_state[LANDING] = _landing(name, url.get_all(AT_PARAM))
    present = list(url.keys())
    refusals: list[Refusal] = []
    for app_wide in (LANGUAGE, PRESENT, AT):
        raw = url.get_all(app_wide.key)
        refusal = parse(app_wide, raw)[1] if raw else None
        if refusal is not None:
            refusals.append(refusal)
    known = {LANGUAGE_PARAM, PRESENT_PARAM, AT_PARAM}
    if page is not None:
        for param in page.params:
            known.update((param.key, *param.old_keys))
            key = next((k for k in (param.key, *param.old_keys) if k in present), None)
            if key is None or param.key in st.session_state:
                continue
            value, refusal = parse(param, url.get_all(key))
            if refusal is not None:
                refusals.append(refusal)
            if value is not None:  # a list's known items, even beside a refusal
                st.session_state[param.key] = value
    own = page.prefix if page is not None else None
    unknown = [
        key
        for key in present
        if key not in known and (key.split("_")[0] not in PREFIXES or key.split("_")[0] == own)
    ]  # skipped: another page's parameters
    if len(unknown) == 1:
        refusals.append(Refusal("unknown_param", {"param": unknown[0][:40]}))
    elif unknown:
        names = ", ".join(literal(key, 40) for key in unknown[:NAMED_UNKNOWN])
        more = len(unknown) - NAMED_UNKNOWN
        key = "unknown_params_more" if more > 0 else "unknown_params"
        refusals.append(Refusal(key, {"count": len(unknown), "names": names, "more": more}))
    previous = st.session_state.get(_NOTICES)
    if refusals or previous is None or previous[0] != name:
        st.session_state[_NOTICES] = (name, tuple(refusals))


# Streamlit's server drops a query of more than MAX_URL_PAIRS pairs before the page runs, and
# the address bar is rewritten after it: only the document's own navigation entry still holds
# the link that was opened.  The notice is ours, shown by the browser when that link held
# too many pairs (counted as Streamlit counts them).
_DROPPED_LINK = """<div id="ns-dropped-link" class="ns-link-notice" hidden>{message}</div>
<script>
(() => {{
  const entry = performance.getEntriesByType("navigation")[0];
  const query = new URL(entry ? entry.name : window.location.href).search.slice(1);
  const pairs = query ? query.split("&").length : 0;
  const notice = document.getElementById("ns-dropped-link");
  if (notice && pairs > {limit}) {{
    notice.querySelector("[data-pairs]").textContent = pairs.toLocaleString("en");
    notice.hidden = false;
  }}
}})();
</script>"""


def _dropped_link_notice() -> None:
    """The browser's notice for a link Streamlit dropped for its number of pairs."""
    slot = "\x00"  # where the browser writes the link's number of pairs
    text = t("share.too_many_pairs", pairs=slot, limit=f"{MAX_URL_PAIRS:,}")
    message = html.escape(text).replace(slot, "<span data-pairs></span>")
    st.html(
        _DROPPED_LINK.format(message=message, limit=MAX_URL_PAIRS), unsafe_allow_javascript=True
    )


def show_notices() -> None:
    """Warn about every URL value that was refused, naming it and what is accepted; on the
    first page of a session whose link reached it empty, let the browser say whether
    Streamlit dropped it for its number of pairs."""
    name, refusals = st.session_state.get(_NOTICES, ("", ()))
    for refusal in refusals:
        message = t(f"share.{refusal.key}", **shown(refusal.params))
        st.warning(message, icon=":material/link_off:")
    if st.session_state.get(_FIRST_RUN) == (name, True):
        _dropped_link_notice()


def _kept_by_streamlit() -> int:
    """The characters of the link that Streamlit keeps whatever the page writes (``embed``,
    ``embed_options``), with their "&"."""
    query = _query_string()
    if "embed" not in query.lower():
        return 0
    kept = [(k, v) for k, v in parse_qsl(query) if k.lower() in _STREAMLIT_KEEPS]
    return len(urlencode(kept)) + 1 if kept else 0


def _wanted(
    page: PageParams | None, lang: str, present: str = "off"
) -> tuple[dict[str, list[str]], tuple[str, ...]]:
    """The query this page's state makes, and the text parameters left out for length."""
    wanted = _pairs(page, st.session_state, lang, present)
    if present != "off":  # a projected address bar never shows a secret
        for key in SECRET_KEYS:
            wanted.pop(key, None)
    if page is None:
        return wanted, ()
    left_out = []
    texts = sorted(
        (k for k in wanted if page.by_key.get(k) is not None and page[k].kind == "text"),
        key=lambda k: -len(wanted[k][0]),
    )
    extra = _kept_by_streamlit()
    for key in texts:  # a link past the limit would be refused: leave the longest text out
        if len(_encoded(wanted)) + extra <= MAX_URL_CHARS:
            break
        del wanted[key]
        left_out.append(key)
    return wanted, tuple(left_out)


def describes(page: PageParams | None, current: dict, wanted: dict) -> bool:
    """Whether the address's ``current`` query already states the state ``wanted`` states:
    the same pairs, or the same values with defaults written out (as a lesson's link writes
    them), each as this app writes it (an older spelling is rewritten).

    Each rewrite of the address is a new entry in the browser's history (Streamlit pushes
    one when a run changes the query), so an address that already says the right thing is
    left alone: Back after following a link returns in one press."""
    for key in current.keys() | wanted.keys():
        if current.get(key) == wanted.get(key):
            continue
        param = page.by_key.get(key) if page is not None else None
        if param is None:
            return False
        have = parse(param, current[key]) if key in current else (param.default, None)
        want = parse(param, wanted[key]) if key in wanted else (param.default, None)
        if have[1] is not None or want[1] is not None or have[0] != want[0]:
            return False
        if key in current and current[key] != serialize(param, have[0]):
            return False
    return True


def _write(page: PageParams | None, wanted: dict[str, list[str]]) -> bool:
    """Put ``wanted`` in the address bar unless it already says it (``describes``); True if
    it changed."""
    url = st.query_params
    current = {key: url.get_all(key) for key in url.keys()}
    if page is not None and _landing(page.page, current.get(AT_PARAM, [])) is not None:
        wanted[AT_PARAM] = current[AT_PARAM]  # where the link landed, kept while on its page
    if describes(page, current, wanted):
        return False
    url.from_dict(wanted)
    return True


def publish(page: PageParams | None, lang: str, present: str = "off") -> tuple[str, ...]:
    """Write the page's state to the URL, unless it already says it (``describes``); return
    the keys left out because of length."""
    wanted, left_out = _wanted(page, lang, present)
    _write(page, wanted)
    st.session_state[_PUBLISHED] = (page.page if page is not None else None, left_out)
    return left_out


def republish(lang: str, present: str = "off") -> bool:
    """After a page section reran alone (``ui/sections.py``): write the state of the page
    the last whole run published to the URL.  True when the sidebar's share box, drawn by
    that run, no longer tells the truth (it is open, or its notes of parameters left out for
    length changed) and the whole page must run again to redraw it."""
    name, shown = st.session_state.get(_PUBLISHED, (None, ()))
    page = PAGES.get(name)
    wanted, left_out = _wanted(page, lang, present)
    changed = _write(page, wanted)
    return changed and (bool(st.session_state.get(SHARE_KEY)) or left_out != shown)


def share_link(page: PageParams | None, lang: str, present: str = "off") -> str:
    """The address an instructor copies: this page with its settings (and presentation mode,
    so a link prepared for the projector opens presenting)."""
    wanted, _ = _wanted(page, lang, present)
    for key in SECRET_KEYS:  # a shared link never carries a secret
        wanted.pop(key, None)
    query = _encoded(wanted)
    base = st.context.url or ""
    return f"{base}?{query}" if query else base


def share_box(
    page: PageParams | None, lang: str, left_out: tuple[str, ...], present: str = "off"
) -> None:
    """A sidebar expander with the current page's link, ready to copy."""
    # Filled only once opened (a rerun), unless it has a note to give: its code block would
    # make a first view fetch and run the browser's syntax highlighter (1.5 MB of
    # JavaScript) for a closed box.
    box = st.sidebar.expander(
        t("app.share"), icon=":material/link:", key=SHARE_KEY, on_change="rerun"
    )
    if not box.open and not left_out:
        return
    with box:
        st.caption(t("app.share_help"))
        st.code(share_link(page, lang, present), language=None, wrap_lines=True)
        for key in left_out:
            st.caption(t("share.left_out", param=key, limit=f"{MAX_URL_CHARS:,}"))
