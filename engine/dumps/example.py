"""The shipped example dump: SmolLM2-135M-Instruct's residual stream on four prompts.

``EXAMPLE_DUMP`` is the file (made by ``python -m engine.dumps capture``, see
``examples/README.md``); ``example_slice`` reads a ``[B, T, d]`` slice of one point of its
stream for pages that take a tensor (the Axes page), with safetensors alone: no layout
inference, no statistics.  Its shape is ``EXAMPLE_SHAPE`` (checked against the file by
``tests/dumps/test_example_story.py``).

References:
- Sun, Chen, Kolter, Liu 2024, "Massive Activations in Large Language Models", arXiv:2402.17762
"""

from __future__ import annotations

from pathlib import Path

import torch

EXAMPLE_DUMP = Path(__file__).resolve().parent / "examples" / "smollm2_prompts.safetensors"
EXAMPLE_BLOCKS = 30  # SmolLM2-135M's decoder blocks
EXAMPLE_SHAPE = (EXAMPLE_BLOCKS + 1, 4, 24, 576)  # [L, B, T, d]: every block's input, the
#   last block's output; four prompts of 24 tokens; SmolLM2's width


def stream_entry(point: int) -> str:
    """The entry holding point ``point`` of the stream: block ``point``'s input, or (the last
    point) the last block's output."""
    if point == EXAMPLE_BLOCKS:
        return f"model.layers.{EXAMPLE_BLOCKS - 1}.output"
    return f"model.layers.{point}.input"


def example_slice(point: int, batch: int, tokens: int, channels: list[int]) -> torch.Tensor:
    """``[batch, tokens, len(channels)]`` float64: the first ``batch`` prompts' first
    ``tokens`` positions at stream point ``point``, on the given channels (as stored:
    float16 values, exactly widened).  The caller checks the ranges (``AxesSpec`` does)."""
    from safetensors import safe_open

    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        x = handle.get_slice(stream_entry(point))[:batch, :tokens]  # [B, T, 576]
    return x[:, :, channels].double()  # [B, T, d]


def largest_channels(point: int, batch: int, tokens: int, count: int) -> list[int]:
    """The ``count`` channels of largest RMS over the slice at ``point``, in channel order
    (all 576 when ``count`` = 576): where a massive activation sits, its channel is one."""
    every = list(range(EXAMPLE_SHAPE[-1]))
    x = example_slice(point, batch, tokens, every)  # [B, T, 576]
    rms = x.pow(2).mean(dim=(0, 1)).sqrt()  # [576]
    top = torch.topk(rms, count, sorted=False).indices  # [count]
    return sorted(int(c) for c in top)
