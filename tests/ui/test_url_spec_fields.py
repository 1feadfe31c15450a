"""ui.url: each page parameter made from an engine spec's field, against that field: the
field's default (or the page's own, said here), and only values the field accepts, its range
or menu or a narrower one said here.  No page parameter restates a spec field by hand."""

from __future__ import annotations

import dataclasses

import pytest

from engine.config import (
    COMPARED_RUNS,
    GEOMETRY_WIDE_OPENING_D,
    GROUPNORM_OPENING_GROUPS,
    LIVE_PROMPTS,
    TIMING_PASSES,
    TIMING_WIDTHS,
    LiveSpec,
    TimingSpec,
)
from engine.config.depth import COMPARED_PLACEMENTS, INIT_STDS
from engine.config.fields import accepts
from engine.errors import EngineError
from ui.url.codec import Param
from ui.url.pages import KERNELS, PAGES

# A page's parameter whose default is not its field's: the engine's table for what the page
# opens on (a second parameter on the same field, or a field without a default).
PAGE_DEFAULTS = {
    "vl_groups": GROUPNORM_OPENING_GROUPS,  # GroupNorm with one group would be LayerNorm
    "dp_placements": list(COMPARED_PLACEMENTS),  # the stack compares placements: a spec each
    "dp_run_a": COMPARED_RUNS[0],  # the training lab's two runs: Pre-LN against Post-LN
    "dp_run_b": COMPARED_RUNS[1],
    "ge_wide_d": GEOMETRY_WIDE_OPENING_D,  # the high-dimension section's (the scene's is ge_d)
    "du_prompt": LIVE_PROMPTS[0],  # the field is required: it has no default
}
# Parameters offering less than their field accepts: a smaller range or menu.
NARROWER = {
    "vl_groups",  # up to the widest vector the Vector Lab takes
    "dp_layers",  # up to MAX_LAYERS, the simulator's limit
    "dp_tokens",  # up to MAX_DEPTH_TOKENS, likewise
    "ge_d",  # the scene draws d = 1, 2, 3
}
# Typed text the page reads into a field itself: the link carries what was typed.
TYPED = {"vl_eps", "ax_lengths"}
# A tuple field's subset: the menu is the engine's table, the default the field's.
LISTED = {"kn_widths": TIMING_WIDTHS, "kn_passes": TIMING_PASSES}
BOUND = [p for page in PAGES.values() for p in page.params if p.spec is not None]


def _field_value(param: Param, value):
    """What the spec is given for a link's ``value``."""
    return INIT_STDS[value] if param.key == "dp_init" else value


def _field_accepts(param: Param, value) -> bool:
    required = {"prompt": "a prompt"} if param.spec is LiveSpec else {}
    try:
        param.spec(**{**required, param.field: _field_value(param, value)})
    except EngineError:
        return False
    return True


def _link_values(param: Param) -> list:
    """Every value the link accepts, at its ends: each choice, both bounds, the longest text."""
    if param.kind in ("choice", "choices"):
        return list(param.choices)
    if param.kind in ("int", "float"):
        return [param.low, param.high]
    if param.kind == "bool":
        return [True, False]
    return ["x" * param.max_chars]


@pytest.mark.parametrize("param", BOUND, ids=[p.key for p in BOUND])
def test_every_page_parameter_matches_its_spec_field(param):
    """A parameter made from an engine spec's field has the field's default and offers only
    what the field accepts: its range or menu is the field's, or a narrower one said above."""
    field = next(f for f in dataclasses.fields(param.spec) if f.name == param.field)
    if param.key in PAGE_DEFAULTS:
        assert param.default == PAGE_DEFAULTS[param.key]
    else:
        assert _field_value(param, param.default) == field.default
    for value in _link_values(param):
        assert _field_accepts(param, value), (param.key, value)
    rule = accepts(param.spec).get(param.field)
    if param.kind in ("int", "float"):  # a slider narrower than the field says so itself
        same = (param.low, param.high) == (rule.offered_range or (rule.low, rule.high))
    elif param.kind in ("choice", "choices") and param.key != "dp_init":
        same = param.choices == (rule.offered or rule.choices)
    elif param.kind == "text":
        same = param.max_chars == rule.high
    else:
        same = True
    assert same != (param.key in NARROWER), param.key


def test_no_page_parameter_restates_a_spec_field_by_hand():
    """A page's own parameter never stands for a field of a spec the page builds (it would
    carry its own default and range), except text typed for the page to read."""
    for page in PAGES.values():
        fields = {f.name for p in page.params if p.spec for f in dataclasses.fields(p.spec)}
        own = {p.key for p in page.params if p.spec is None}
        shadows = {key for key in own if key.removeprefix(page.prefix + "_") in fields}
        assert shadows <= TYPED | LISTED.keys(), shadows


@pytest.mark.parametrize("key", LISTED)
def test_a_tuple_fields_parameter_offers_the_engines_table_with_the_fields_default(key):
    param = KERNELS[key]
    assert param.choices == LISTED[key]
    assert tuple(param.default) == getattr(TimingSpec, key.removeprefix("kn_"))
