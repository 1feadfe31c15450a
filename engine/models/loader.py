"""Read catalog.toml into frozen ``Family`` rows, refusing anything malformed.

Every refusal is an ``EngineError`` naming the family and the field: a value of the wrong
type, a family without a source, a placement id that ``engine/depth/placements.py`` does not
have, a norm kind that is not one of ``engine.config.NORM_KINDS`` (or nGPT's ``l2``), branch
norms that disagree with the placement, a misspelt field.  A fact the file leaves out is
``None`` (unknown).
"""

from __future__ import annotations

import functools
import json
import math
import tomllib
from pathlib import Path

from engine.config import NORM_KINDS
from engine.depth.placements import PLACEMENTS
from engine.errors import EngineError
from engine.models.families import (
    BRANCHES,
    EXTRA_ROLES,
    POSITIONS,
    WIDTHS,
    BranchModules,
    Catalog,
    Example,
    ExtraNorm,
    Family,
    Stack,
)

CATALOG_PATH = Path(__file__).with_name("catalog.toml")
SCHEMA = 1
# nGPT's x / ||x||_2: RMSNorm without a gain, divided by sqrt(d) (arXiv:2410.01131, Sec. 2)
EXTRA_KINDS = ("l2",)
CATALOG_KINDS = NORM_KINDS + EXTRA_KINDS
WEIGHT_INITS = ("ones", "zeros", "none")
TOTAL_FORMULAS = ("gpt2", "llama")
CAPTURE_HEADS = ("causal", "masked")
STACK_NAMES = ("decoder", "encoder")
LAYER_COUNTS = ("layers", "decoder_layers")

_STR = "text"
_FLOAT = "number"
_BOOL = "true or false"
_STR_LIST = "list of text"
_FAMILY_FIELDS = {
    "name": _STR,
    "model_types": _STR_LIST,
    "config_class": _STR,
    "model_class": _STR,
    "norm_kind": _STR,
    "norm_class": _STR,
    "eps_field": _STR,
    "eps_default": _FLOAT,
    "eps_released": _FLOAT,
    "eps_released_source": _STR,
    "eps_released_source_zh": _STR,
    "placement": _STR,
    "qk_norm": _BOOL,
    "bias": _BOOL,
    "weight_init": _STR,
    "weight_offset": _FLOAT,
    "total_formula": _STR,
    "qkv_bias": _BOOL,
    "embedding_norm": _STR,
    "capture": _STR,
    "config_defaults": "table",
    "source": _STR_LIST,
    "source_zh": _STR_LIST,
    "note": _STR,
    "note_zh": _STR,
    "stacks": "list of stacks",
    "example": "table",
}
_REQUIRED = ("name", "model_types", "norm_kind", "placement", "source", "source_zh", "stacks")
_STACK_FIELDS = {
    "name": _STR,
    "layers": _STR,
    "count": _STR,
    "branches": _STR_LIST,
    "final": _STR,
    "final_norm": _BOOL,
    "extra": "list of tables",
    **{branch: "table" for branch in BRANCHES},
}


def _wrong(family: str, field: str, expected: str, value) -> EngineError:
    return EngineError(
        "models.catalog_field",
        {"family": family, "field": field, "expected": expected, "value": repr(value)},
    )


def _check_type(family: str, field: str, value, expected: str) -> None:
    ok = {
        _STR: isinstance(value, str) and value.strip() != "",
        _FLOAT: isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value),
        _BOOL: isinstance(value, bool),
        _STR_LIST: isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value),
        "table": isinstance(value, dict),
        "list of stacks": isinstance(value, list) and all(isinstance(v, dict) for v in value),
        "list of tables": isinstance(value, list) and all(isinstance(v, dict) for v in value),
    }[expected]
    if not ok:
        raise _wrong(family, field, expected, value)


def _check_fields(family: str, where: str, table: dict, allowed: dict) -> None:
    for field, value in table.items():
        if field not in allowed:
            raise EngineError(
                "models.catalog_unknown_field",
                {"family": family, "field": f"{where}{field}"},
            )
        _check_type(family, f"{where}{field}", value, allowed[field])


def _one_of(family: str, field: str, value, allowed) -> None:
    if value is not None and value not in allowed:
        raise _wrong(family, field, f"one of {', '.join(allowed)}", value)


def _branch(family_id: str, where: str, branch: str, names: dict, placement: str) -> BranchModules:
    for position, name in names.items():
        if position not in POSITIONS:
            raise _wrong(family_id, f"{where}{branch}", f"positions {POSITIONS}", position)
        _check_type(family_id, f"{where}{branch}.{position}", name, _STR)
    expected = PLACEMENTS[placement].norms
    wanted = {p for p in POSITIONS if getattr(expected, p)}
    if names and set(names) != wanted:
        raise EngineError(
            "models.catalog_mismatch",
            {
                "family": family_id,
                "branch": branch,
                "named": ", ".join(sorted(names)),
                "placement": placement,
                "expected": ", ".join(sorted(wanted)) or "none",
            },
        )
    return BranchModules(branch, names.get("before"), names.get("after"), names.get("on_stream"))


def _extra(family_id: str, where: str, table: dict) -> ExtraNorm:
    fields = {"module": _STR, "width": _STR, "role": _STR, "eps": _FLOAT}
    _check_fields(family_id, where, table, fields)
    for field in ("module", "width", "role"):
        if field not in table:
            raise _missing(family_id, f"{where}{field}")
    _one_of(family_id, f"{where}width", table["width"], WIDTHS)
    _one_of(family_id, f"{where}role", table["role"], EXTRA_ROLES)
    return ExtraNorm(table["module"], table["width"], table["role"], table.get("eps"))


def _stack(family_id: str, index: int, table: dict, placement: str) -> Stack:
    where = f"stacks[{index}]."
    _check_fields(family_id, where, table, _STACK_FIELDS)
    for field in ("name", "count"):
        if field not in table:
            raise _missing(family_id, f"{where}{field}")
    _one_of(family_id, f"{where}name", table["name"], STACK_NAMES)
    _one_of(family_id, f"{where}count", table["count"], LAYER_COUNTS)
    order = table.get("branches", ["attention", "mlp"])
    for branch in order:
        _one_of(family_id, f"{where}branches", branch, BRANCHES)
    if len(set(order)) != len(order) or not order:
        raise _wrong(family_id, f"{where}branches", "distinct branch names", order)
    for branch in BRANCHES:
        if branch in table and branch not in order:
            raise _wrong(family_id, f"{where}{branch}", f"a branch of {order}", branch)
    branches = tuple(_branch(family_id, where, b, table.get(b, {}), placement) for b in order)
    extra = tuple(
        _extra(family_id, f"{where}extra[{i}].", e) for i, e in enumerate(table.get("extra", []))
    )
    named = any(b.before or b.after or b.on_stream for b in branches) or extra
    if named and "layers" not in table:
        raise _missing(family_id, f"{where}layers")
    final = table.get("final")
    final_norm = table.get("final_norm")
    if final is not None and final_norm is False:
        raise _wrong(family_id, f"{where}final_norm", "true where `final` names a norm", False)
    return Stack(
        name=table["name"],
        layers_path=table.get("layers"),
        count=table["count"],
        branches=branches,
        final=final,
        final_norm=True if final is not None else final_norm,
        extra=extra,
    )


def _missing(family: str, field: str) -> EngineError:
    return EngineError(
        "models.catalog_missing_field",
        {"family": family, "field": field},
    )


def _example(family_id: str, table: dict) -> Example:
    fields = {"label": _STR, "source": _STR, "source_zh": _STR, "config": "table"}
    _check_fields(family_id, "example.", table, fields)
    for field in fields:
        if field not in table:
            raise _missing(family_id, f"example.{field}")
    config = json.dumps(table["config"], sort_keys=True)
    return Example(table["label"], table["source"], table["source_zh"], config)


def _family(family_id: str, table: dict) -> Family:
    if not isinstance(table, dict):
        raise _wrong(family_id, "(family)", "table", table)
    _check_fields(family_id, "", table, _FAMILY_FIELDS)
    for field in _REQUIRED:
        if field not in table:
            raise _missing(family_id, field)
    if not table["source"]:
        raise _missing(family_id, "source")
    if not table["stacks"]:
        raise _missing(family_id, "stacks")
    _one_of(family_id, "norm_kind", table["norm_kind"], CATALOG_KINDS)
    _one_of(family_id, "placement", table["placement"], tuple(PLACEMENTS))
    _one_of(family_id, "weight_init", table.get("weight_init"), WEIGHT_INITS)
    _one_of(family_id, "total_formula", table.get("total_formula"), TOTAL_FORMULAS)
    _one_of(family_id, "capture", table.get("capture"), CAPTURE_HEADS)
    for field in ("eps_default", "eps_released"):
        if field in table and table[field] < 0:
            raise _wrong(family_id, field, "a number >= 0", table[field])
    if "eps_released" in table and "eps_released_source" not in table:
        raise _missing(family_id, "eps_released_source")
    if ("eps_released_source" in table) != ("eps_released_source_zh" in table):
        raise _missing(family_id, "eps_released_source_zh")
    if len(table["source_zh"]) != len(table["source"]):
        raise _wrong(family_id, "source_zh", "one translation per source", table["source_zh"])
    if ("note" in table) != ("note_zh" in table):
        raise _missing(family_id, "note_zh" if "note" in table else "note")
    if "norm_class" in table and "model_class" not in table:
        raise _missing(family_id, "model_class")
    defaults = table.get("config_defaults", {})
    for field, value in defaults.items():
        if not isinstance(value, bool | int | float | str):
            raise _wrong(family_id, f"config_defaults.{field}", "a plain value", value)
    placement = table["placement"]
    stacks = tuple(_stack(family_id, i, s, placement) for i, s in enumerate(table["stacks"]))
    qk_norm = table.get("qk_norm")
    if any(e.role == "qk_norm" for s in stacks for e in s.extra) and qk_norm is not True:
        raise _wrong(family_id, "qk_norm", "true where a stack lists a qk_norm", qk_norm)
    return Family(
        id=family_id,
        name=table["name"],
        model_types=tuple(table["model_types"]),
        config_class=table.get("config_class"),
        model_class=table.get("model_class"),
        norm_kind=table["norm_kind"],
        norm_class=table.get("norm_class"),
        eps_field=table.get("eps_field"),
        eps_default=_float_or_none(table.get("eps_default")),
        eps_released=_float_or_none(table.get("eps_released")),
        eps_released_source=table.get("eps_released_source"),
        eps_released_source_zh=table.get("eps_released_source_zh"),
        placement=table["placement"],
        qk_norm=table.get("qk_norm"),
        bias=table.get("bias"),
        weight_init=table.get("weight_init"),
        weight_offset=_float_or_none(table.get("weight_offset")),
        total_formula=table.get("total_formula"),
        qkv_bias=table.get("qkv_bias", False),
        embedding_norm=table.get("embedding_norm"),
        config_defaults=tuple(sorted(defaults.items())),
        stacks=stacks,
        source=tuple(table["source"]),
        source_zh=tuple(table["source_zh"]),
        note=table.get("note"),
        note_zh=table.get("note_zh"),
        example=_example(family_id, table["example"]) if "example" in table else None,
        capture=table.get("capture"),
    )


def _float_or_none(value) -> float | None:
    return None if value is None else float(value)


def parse_catalog(text: str) -> Catalog:
    """The catalog in TOML ``text``; raises ``EngineError`` on anything malformed."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise EngineError(
            "models.catalog_unreadable",
            {"error": str(error)},
        ) from error
    if data.get("schema") != SCHEMA:
        raise _wrong("(file)", "schema", str(SCHEMA), data.get("schema"))
    families = data.get("families")
    if not isinstance(families, dict) or not families:
        raise _missing("(file)", "families")
    return Catalog(tuple(_family(family_id, table) for family_id, table in families.items()))


def load_catalog(path: Path | str = CATALOG_PATH) -> Catalog:
    """Read and validate the catalog file at ``path``."""
    return parse_catalog(Path(path).read_text(encoding="utf-8"))


@functools.cache
def catalog() -> Catalog:
    """The shipped catalog, read once per process."""
    return load_catalog(CATALOG_PATH)
