"""The shipped SmolLM2 dump (engine/dumps/examples/) says what the pages say it says.

Its entries are read with safetensors and checked in float64 here, not through the
report, so these numbers are an independent account of the file:
- every prompt's first token: residual RMS ~5-8 at layer 11, then ~900-1,200 at layer 12
  (the input of block 12, i.e. the output of block 11): a jump of two orders of magnitude,
  the only jump larger than 10x (Sun et al. 2024's massive activations);
- the other tokens (the median of each prompt's others): RMS ~2 after the first block,
  growing gradually (no step of 2x or more) to ~25-29 at the input of the last block;
- its largest entry: ~20,000-30,000, on a first token, in channel 507; it fits float16
  (65,504) but its square overflows it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from engine.dumps.capture import capture_info
from engine.dumps.report import report
from engine.dumps.weights_origin import WeightsOrigin

EXAMPLE = (
    Path(__file__).resolve().parents[2]
    / "engine"
    / "dumps"
    / "examples"
    / "smollm2_prompts.safetensors"
)
BLOCKS = 30
JUMP_LAYER = 12  # model.layers.12.input: the output of block 11 (0-based)

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="the shipped example is missing")


@pytest.fixture(scope="module")
def stream() -> torch.Tensor:
    """[L + 1, B, T, d] float64: every block's input, then the last block's output."""
    from safetensors import safe_open

    with safe_open(EXAMPLE, framework="pt") as handle:
        names = [f"model.layers.{i}.input" for i in range(BLOCKS)]
        names.append(f"model.layers.{BLOCKS - 1}.output")
        return torch.stack([handle.get_tensor(name).double() for name in names])


def test_the_file_is_small_and_says_where_it_came_from():
    assert EXAMPLE.stat().st_size <= 5 * 10**6
    from safetensors import safe_open

    with safe_open(EXAMPLE, framework="pt") as handle:
        info = capture_info(handle.metadata())
        assert handle.get_tensor("model.layers.0.input").dtype == torch.float16
    assert info.model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert info.weights == WeightsOrigin(  # its old English sentence, read as fields
        "gguf", "SmolLM2-135M-Instruct.Q4_1.gguf", "float32", "transformers"
    )
    assert (info.compute_dtype, info.storage_dtype) == ("float32", "float16")
    assert len(info.prompts) == 4 and info.lengths == (24, 24, 24, 24)
    assert sum(any("\u4e00" <= ch <= "\u9fff" for ch in p) for p in info.prompts) == 2
    assert all(len(row) == 24 for row in info.tokens)


def test_the_first_token_jumps_by_two_orders_of_magnitude_at_layer_12(stream):
    rms = stream.pow(2).mean(-1).sqrt()  # [L + 1, B, T]
    first = rms[:, :, 0]  # [L + 1, B]
    assert torch.all((first[JUMP_LAYER - 1] > 4) & (first[JUMP_LAYER - 1] < 10))
    assert torch.all((first[JUMP_LAYER] > 800) & (first[JUMP_LAYER] < 1300))
    steps = first[1:] / first[:-1]  # [L, B]
    assert torch.all(steps[JUMP_LAYER - 1] > 100)
    big = (steps > 10).nonzero()[:, 0].unique().tolist()  # the layers (minus 1) with a jump
    assert big == [0, JUMP_LAYER - 1]  # the first block lifts the tiny embeddings; then 12


def test_ordinary_tokens_grow_gradually(stream):
    rms = stream.pow(2).mean(-1).sqrt()  # [L + 1, B, T]
    typical = rms[:, :, 1:].median(dim=-1).values  # [L + 1, B] the median of the others
    assert torch.all((typical[1] > 1.5) & (typical[1] < 3))
    assert torch.all((typical[BLOCKS - 1] > 20) & (typical[BLOCKS - 1] < 40))
    steps = typical[2:] / typical[1:-1]  # [L - 1, B]
    assert torch.all(steps < 2.0)
    assert torch.all(typical[BLOCKS - 1] / typical[1] > 10)


def test_the_largest_entry_fits_float16_but_its_square_does_not(stream):
    magnitude = stream.abs()
    largest = float(magnitude.max())
    layer, batch, token, channel = (int(i) for i in (magnitude == largest).nonzero()[0])
    assert 20_000 < largest < 30_000
    assert (token, channel) == (0, 507) and layer >= JUMP_LAYER
    stored = torch.tensor(largest, dtype=torch.float16)
    assert torch.isfinite(stored) and torch.isinf(stored * stored)


def test_the_report_reads_the_example():
    rep = report(EXAMPLE)
    assert rep.layout.stream == "model.layers.{i}.input"
    assert (len(rep.labels), rep.layout.batch, rep.layout.tokens, rep.layout.d) == (31, 4, 24, 576)
    labels = {pair.label for pair in rep.layout.norm_pairs}
    assert labels == {
        "model.layers.0.input_layernorm",
        "model.layers.0.post_attention_layernorm",
        "model.layers.12.input_layernorm",
        "model.layers.12.post_attention_layernorm",
        "model.norm",
    }
    assert json.loads(dict(rep.metadata)["lengths"]) == [24, 24, 24, 24]
