"""Read catalog.toml into frozen ``Family`` rows.

The file is ours and reviewed, never user input: the dataclasses of ``families.py`` are its
schema (a misspelt or unknown field is a ``TypeError`` when the file is first read), and
tests/models/test_model_catalog.py walks every family for the rules a type cannot hold: a
known placement and norm kind, branch norms named where the placement puts them, a source per
family and a translation per source.  A fact the file leaves out is ``None`` (unknown).
"""

from __future__ import annotations

import functools
import json
import tomllib
from pathlib import Path

from engine.models.families import BranchModules, Catalog, Example, ExtraNorm, Family, Stack

CATALOG_PATH = Path(__file__).with_name("catalog.toml")


def _stack(table: dict) -> Stack:
    table = dict(table)
    order = table.pop("branches", ["attention", "mlp"])
    branches = tuple(BranchModules(branch, **table.pop(branch, {})) for branch in order)
    final_norm = table.pop("final_norm", None)
    return Stack(
        branches=branches,
        layers_path=table.pop("layers", None),
        extra=tuple(ExtraNorm(**extra) for extra in table.pop("extra", ())),
        final_norm=True if table.get("final") is not None else final_norm,
        **table,
    )


def family_from_row(family_id: str, table: dict) -> Family:
    """One ``[families.<id>]`` table of the file as a ``Family``."""
    table = dict(table)
    example = table.pop("example", None)
    if example is not None:
        example = dict(example)
        example.setdefault("label_zh", example["label"])  # a model's name reads the same
        example = Example(config_json=json.dumps(example.pop("config"), sort_keys=True), **example)
    return Family(
        id=family_id,
        model_types=tuple(table.pop("model_types")),
        stacks=tuple(_stack(stack) for stack in table.pop("stacks")),
        source=tuple(table.pop("source")),
        source_zh=tuple(table.pop("source_zh")),
        config_defaults=tuple(sorted(table.pop("config_defaults", {}).items())),
        example=example,
        **table,
    )


@functools.cache
def catalog() -> Catalog:
    """The shipped catalog, read once per process."""
    with CATALOG_PATH.open("rb") as handle:
        families = tomllib.load(handle)["families"]
    return Catalog(tuple(family_from_row(i, table) for i, table in families.items()))
