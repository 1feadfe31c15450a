"""The catalog against Hugging Face transformers itself: every fact the file takes from a
transformers class is read back from that class (config defaults) or from a tiny model built
from it (norm modules, their class, width, ε, bias, initial weight, and what they compute
against torch's own F.layer_norm / F.rms_norm)."""

import pytest
import torch
import torch.nn.functional as F

from engine.models.calculator import norm_budget, norm_groups
from engine.models.config_json import parse_config
from engine.models.loader import catalog
from tests.models.hf_tiny import module_eps, norm_modules, tiny_config, transformers

HF_FAMILIES = [f for f in catalog().families if f.model_class is not None]
IDS = [f.id for f in HF_FAMILIES]
REQUIRED = {"gpt2", "bert", "t5", "llama2", "llama3", "mistral", "qwen2", "qwen3", "gemma2"}
REQUIRED |= {"gemma", "gemma3", "olmo2", "deepseek_v3", "smollm2"}


def test_every_family_with_a_transformers_implementation_is_checked_here():
    assert REQUIRED <= set(IDS)


def _tiny_model(family, **overrides):
    config = tiny_config(family.config_class, **overrides)
    torch.manual_seed(0)
    return config, getattr(transformers, family.model_class)(config)


def _predicted_modules(family, shape) -> set[str]:
    names = {g.module.replace("{i}", str(i)) for g in norm_groups(shape) for i in range(g.count)}
    assert None not in names, "every norm of an HF family has a module name"
    return names


@pytest.mark.parametrize("family", HF_FAMILIES, ids=IDS)
def test_eps_default_and_config_defaults_are_the_config_class_defaults(family):
    defaults = getattr(transformers, family.config_class)()
    assert getattr(defaults, family.eps_field) == family.eps_default
    for field, value in family.config_defaults:
        assert getattr(defaults, field) == value, field
    assert defaults.model_type in family.model_types


@pytest.mark.parametrize("family", HF_FAMILIES, ids=IDS)
def test_norm_modules_names_classes_and_widths_are_the_models_own(family):
    config, model = _tiny_model(family)
    actual = norm_modules(model)
    shape = parse_config(config.to_dict(), family=family.id)
    assert set(actual) == _predicted_modules(family, shape)
    assert {type(m).__name__ for m in actual.values()} == {family.norm_class}
    for group in norm_groups(shape):
        for i in range(group.count):
            module = actual[group.module.replace("{i}", str(i))]
            assert module.weight.numel() == group.width, group
    parameters = sum(p.numel() for m in actual.values() for p in m.parameters(recurse=False))
    assert norm_budget(shape).norm_parameters == parameters


@pytest.mark.parametrize("family", HF_FAMILIES, ids=IDS)
def test_the_eps_field_sets_every_norm_but_those_the_catalog_fixes(family):
    config, model = _tiny_model(family, **{family.eps_field: 3e-3})
    fixed = {e.module: e.eps for s in family.stacks for e in s.extra if e.eps is not None}
    for name, module in norm_modules(model).items():
        expected = next((eps for suffix, eps in fixed.items() if name.endswith(suffix)), 3e-3)
        assert module_eps(module) == pytest.approx(expected), name


@pytest.mark.parametrize("family", HF_FAMILIES, ids=IDS)
def test_bias_and_initial_weight(family):
    _, model = _tiny_model(family)
    start = {"ones": 1.0, "zeros": 0.0}[family.weight_init]
    for name, module in norm_modules(model).items():
        assert torch.all(module.weight == start), name
        has_bias = getattr(module, "bias", None) is not None
        assert has_bias == family.bias, name
        if has_bias:
            assert torch.all(module.bias == 0.0), name


@pytest.mark.parametrize("family", HF_FAMILIES, ids=IDS)
def test_norm_kind_and_gain_offset_against_torch_functional(family):
    _, model = _tiny_model(family, **{family.eps_field: 1e-3})
    torch.manual_seed(1)
    for name, module in norm_modules(model).items():
        width = module.weight.numel()
        with torch.no_grad():
            module.weight.copy_(torch.randn(width))
            if getattr(module, "bias", None) is not None:
                module.bias.copy_(torch.randn(width))
        x = torch.randn(3, width) * 2.0 + 0.5  # [T, w]; a mean LayerNorm would remove
        gain = family.weight_offset + module.weight.detach()
        eps = module_eps(module)
        if family.norm_kind == "layernorm":
            expected = F.layer_norm(x, (width,), gain, module.bias.detach(), eps)  # [T, w]
        else:
            expected = F.rms_norm(x, (width,), gain, eps)  # [T, w]
        torch.testing.assert_close(module(x), expected, rtol=1e-5, atol=1e-5, msg=name)


def _class_default_examples():
    for family in HF_FAMILIES:
        example = family.example
        if example is not None and example.source.startswith(f"{family.config_class}()"):
            yield pytest.param(family, id=family.id)


@pytest.mark.parametrize("family", list(_class_default_examples()))
def test_examples_said_to_be_class_defaults_are(family):
    defaults = getattr(transformers, family.config_class)()
    for field, value in family.example.config.items():
        if field == family.eps_field:
            assert value == (family.eps_released or family.eps_default)
        else:
            assert getattr(defaults, field) == value, field
