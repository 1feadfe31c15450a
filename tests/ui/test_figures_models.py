"""A family's wiring diagram (the Depth page's ``wiring_figure`` with the family's module names)
against the model itself: every norm it draws inside a layer, and the final norm, is a norm
module of the Hugging Face model built from a tiny config; none of the layer's norms that the
placement describes is missing."""

from __future__ import annotations

import re

import pytest
import torch

from engine.models.loader import catalog
from ui.figures.depth_wiring import wiring_figure
from ui.text.models import norm_text

HF_FAMILIES = [f for f in catalog().families if f.model_class is not None]


def _drawn_names(figure) -> list[str]:
    """The module names written (in italics) inside the norm boxes."""
    return [
        name
        for annotation in figure.layout.annotations
        for name in re.findall(r"<i>(.*?)</i>", annotation.text or "")
    ]


def _norm_boxes(figure, family) -> int:
    return sum((a.text or "").startswith(norm_text(family)) for a in figure.layout.annotations)


def _wiring(family):
    """The family's diagram as the model catalog draws it: its norm named in every box."""
    return wiring_figure(
        family.placement,
        "zh",
        bool(family.final_norm),
        modules=family.module_names,
        norm=norm_text(family),
    )


@pytest.mark.parametrize("family", HF_FAMILIES, ids=[f.id for f in HF_FAMILIES])
def test_family_wiring_draws_the_models_own_norm_modules(family):
    from tests.models.hf_tiny import norm_modules, tiny_config, transformers

    torch.manual_seed(0)
    model = getattr(transformers, family.model_class)(tiny_config(family.config_class))
    norms = set(norm_modules(model))  # HF's own structure: the oracle
    stack = family.stacks[0]
    prefix = f"{stack.layers_path}.0."
    in_layer = {name.removeprefix(prefix) for name in norms if name.startswith(prefix)}
    besides_placement = {extra.module for extra in stack.extra}  # QK-norm, MLA latents
    assert len(stack.branches) == 2  # the diagram draws attention + MLP (T5: its encoder)
    in_branches = in_layer - besides_placement
    figure = _wiring(family)
    drawn = _drawn_names(figure)
    final = [stack.final] if stack.final else []
    assert sorted(drawn) == sorted(in_branches | set(final))
    assert set(final) <= norms
    assert _norm_boxes(figure, family) == len(drawn)
    assert figure.layout.title.text.endswith(family.name)


@pytest.mark.parametrize("family_id", ["gpt3", "ngpt"])
def test_families_without_module_names_draw_their_placements_norms_unnamed(family_id):
    family = catalog().family(family_id)
    figure = _wiring(family)
    assert _drawn_names(figure) == []
    norms = family.placement_entry.norms.count * 2 + int(
        bool(family.final_norm) and family.placement_entry.final_norm
    )
    assert _norm_boxes(figure, family) == norms  # GPT-3: 2 pre-norms + final; nGPT: 2 on the stream


def test_without_modules_the_placement_tables_names_are_drawn():
    figure = wiring_figure("peri", "zh")
    assert "pre_feedforward_layernorm" in _drawn_names(figure)
    assert figure.layout.title.text.endswith("Gemma 2")
