"""Where real activations land: a dump's norm inputs and outputs, measured like the cloud.

For every norm pair a dump holds (``engine.dumps``: the input and output of a norm module,
row for row, and its weight), the three measures of ``high_dimension.py`` are taken over
every token:

- the input x: ||x||, <x, 1> (= d mu) — a real residual stream is far from the random cloud:
  one token can be hundreds of times longer than the others (massive activations);
- the output as the model stored it, y = gamma * RMSNorm(x): the learned gamma stretches the
  sqrt(d) sphere into an ellipsoid, so ||y|| is no longer sqrt(d);
- RMSNorm(x) and LayerNorm(x) recomputed here with gamma = 1 at the dump's eps
  (``engine.normalize``): the sphere again, ||y|| = sqrt(d) up to eps, and <y, 1> = 0 for
  LayerNorm only.

``recomputed_max_abs_difference`` compares the dump's own output with the dump's norm kind
recomputed here with the dump's weight: the dump stores float16, so the two agree to a
float16 rounding of the output, no better.

The shipped example (``EXAMPLE_DUMP``, see engine/dumps/examples/README.md) is SmolLM2-135M-
Instruct on four prompts, its weights dequantized from the Q4_1 GGUF file by transformers.

References:
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Sun, Chen, Kolter, Liu 2024, "Massive Activations in Large Language Models",
  arXiv:2402.17762
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from engine.config import NormSpec
from engine.dumps.dump import open_dump
from engine.dumps.example import EXAMPLE_DUMP
from engine.dumps.formats import open_reader
from engine.dumps.layout import NormPair, Piece
from engine.geometry.arrays import readonly
from engine.geometry.high_dimension import Measures, measured
from engine.norms.dispatch import normalize
from engine.norms.kinds import ROW_KINDS
from engine.threads import torch_threads


@dataclass(frozen=True)
class PairMeasures:
    """One norm of a dump: its tokens' inputs and outputs, measured."""

    label: str  # the norm module's name, e.g. "model.layers.12.input_layernorm"
    rows: int  # tokens measured (every token of the dump)
    d: int
    sqrt_d: float
    eps: float  # the dump's norm eps, used to recompute
    inputs: Measures  # ||x||, <x, 1>, cos(x, x) = 1
    stored: Measures  # the output the model wrote (its gamma applied)
    recomputed: dict[str, Measures]  # "layernorm", "rmsnorm": gamma = 1, this eps
    weight: np.ndarray  # [d] the norm's gamma (ones when the dump holds none)
    recomputed_max_abs_difference: float  # |dump's kind recomputed with gamma - stored y|
    stored_max_abs: float  # max |stored y|, for scale


@dataclass(frozen=True)
class RealActivations:
    """Every norm pair of one dump, measured."""

    model: str  # the dump's "model" metadata ("" when absent)
    storage_dtype: str  # how the dump stores activations
    tokens: int  # B * T
    pairs: tuple[PairMeasures, ...]


def _read_rows(pieces: tuple[Piece, ...]) -> torch.Tensor:
    """Every row of ``pieces``, in order, as float64 ``[N, d]`` (one reader per file)."""
    readers = {}
    blocks = []
    for piece in pieces:
        file = piece.entry.file
        if file not in readers:
            readers[file] = open_reader(file)
        start = piece.row_start
        blocks.append(readers[file].rows(piece.entry, start, start + piece.rows).double())
    return torch.cat(blocks)  # [N, d]


def _pair_measures(pair: NormPair, kind: str, eps: float) -> PairMeasures:
    x64 = _read_rows(pair.inputs)  # [N, d] float16 stored, exact in float64
    y64 = _read_rows(pair.outputs)  # [N, d]
    d = x64.shape[-1]
    if pair.weight is not None:
        weight = _read_rows((Piece(pair.weight, 0, 1),))[0]  # [d]
    else:
        weight = torch.ones(d, dtype=torch.float64)  # [d]
    x = x64.float()  # [N, d] the model computed in float32
    recomputed = {
        name: measured(x64, normalize(x, NormSpec(kind=name, eps=eps)).y) for name in ROW_KINDS
    }
    again = normalize(x, NormSpec(kind=kind, eps=eps), weight=weight.float()).y  # [N, d]
    return PairMeasures(
        label=pair.label,
        rows=x64.shape[0],
        d=d,
        sqrt_d=math.sqrt(d),
        eps=eps,
        inputs=measured(x64, x64),
        stored=measured(x64, y64),
        recomputed=recomputed,
        weight=readonly(weight),
        recomputed_max_abs_difference=float((again.double() - y64).abs().max()),
        stored_max_abs=float(y64.abs().max()),
    )


def real_activations(source: str | Path = EXAMPLE_DUMP, threads: int | None = 1) -> RealActivations:
    """Every norm pair of the dump at ``source`` measured (default: the shipped SmolLM2
    example).  The dump's ``norm_kind`` and ``norm_eps`` metadata say which norm to
    recompute (RMSNorm, eps = 1e-5 when absent)."""
    dump = open_dump(source)
    metadata = dump.metadata
    kind = metadata.get("norm_kind") or "rmsnorm"
    kind = kind if kind in ROW_KINDS else "rmsnorm"
    eps = float(metadata.get("norm_eps") or 1e-5)
    layout = dump.layout
    with torch_threads(threads):
        pairs = tuple(_pair_measures(pair, kind, eps) for pair in layout.norm_pairs)
    return RealActivations(
        model=metadata.get("model", ""),
        storage_dtype=metadata.get("storage_dtype", layout.dtype),
        tokens=layout.batch * layout.tokens,
        pairs=pairs,
    )
