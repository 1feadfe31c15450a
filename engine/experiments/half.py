"""Precision: the model in float16 with its norms' upcast removed — where it first breaks.

Hugging Face's RMSNorms compute their statistic in float32 (``x.to(torch.float32)`` before
``pow(2).mean``) even in a float16 model.  Without that upcast the squares are stored in
float16, whose largest finite number is 65504: an entry with |x| >= 256 squares to inf,
the mean square is inf, rstd = 1/√inf = 0, and the token's normalised output is silently
all zeros (``engine.norms.precision``; the Vector Lab's float16 story tells it on one row).
Massive activations (thousands, Sun et al. 2024) make that certain on the first token.

The run: the model's float16 copy (``LiveModel.exclusive("float16")``) on the text, every
norm computed with its statistics in float16 (``norm_maps.half``: the ``torch_half`` path of
``engine.norms.precision_paths``) — or, with ``HalfSpec.upcast``, by the model's own code.
It reports
- every norm's failed tokens: an output row not finite, or all zeros from an input that is
  not (``silent_zero``), with the first one in forward order as a ``NormIO`` (the input row
  as float16 stored it, the output, γ, kind, ε: what the Vector Lab's float16 story needs);
- every stream point's distance to the float32 run per token,
  ‖x_16 − x_32‖ / ‖x_32‖ (inf where not finite), and the first point and token past
  ``HalfSpec.divergence``;
- the effect on perplexity, KL and top-1 against the float32 model.

Matrix products.  A float16 GEMM multiplies float16 operands, accumulates in float32 and
rounds the result to float16 (tensor cores, cuBLAS; torch's CPU kernel too).  On a CPU
without float16 arithmetic that kernel is several times slower than float32's
(benchmarks/RESULTS.md), so the run computes each ``nn.Linear`` as the float32 product of
its float16 operands, rounded to float16: the same arithmetic, summed in another order (the
two differ by one unit in the last place in a few entries per thousand; tests/experiments
compare whole passes on small models).

References:
- Micikevicius et al. 2018, "Mixed Precision Training", arXiv:1710.03740
- Sun, Chen, Kolter, Liu 2024, "Massive Activations in Large Language Models",
  arXiv:2402.17762
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import HalfSpec
from engine.dumps.architectures import module_paths
from engine.dumps.hooks import first_tensor, output_tensor, run_with_capture
from engine.dumps.live import LiveModel, NormIO
from engine.experiments import norm_maps
from engine.experiments.runs import (
    Edits,
    Effect,
    Reference,
    logits_of,
    measure,
    model_inputs,
    same_model,
)


@dataclass(frozen=True)
class HalfResult:
    spec: HalfSpec
    norms: tuple[str, ...]  # [N] every norm, in forward order
    norm_layers: tuple[int | None, ...]  # [N]
    norm_failed: np.ndarray  # [N, T] bool: output not finite, or silently all zeros
    first_failure: NormIO | None  # the first failed norm and token, as the run had them
    failure: str  # "silent_zero" | "nonfinite" | "" (none failed)
    stream_error: np.ndarray  # [L+1, T] ‖x_16 − x_32‖ / ‖x_32‖, inf where not finite
    diverges_at: tuple[int, int] | None  # (stream point, token) first past spec.divergence
    effect: Effect
    seconds: float


def accumulate_in_float32(edits: Edits, model: torch.nn.Module) -> None:
    """Every ``nn.Linear`` computes float32 products of its half operands, rounded back."""
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):

            def forward(x, module=module):
                bias = None if module.bias is None else module.bias.float()
                return torch.nn.functional.linear(x.float(), module.weight.float(), bias).to(
                    x.dtype
                )

            edits.forward(module, forward)


def _outcome(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """[rows] 0 ok, 1 silent zero, 2 not finite, for rows of a norm's input and output."""
    nonfinite = ~torch.isfinite(y).all(-1)
    silent = (y == 0).all(-1) & (x != 0).any(-1)
    return torch.where(nonfinite, 2, torch.where(silent, 1, 0))


def float16_run(
    live: LiveModel, ref: Reference, spec: HalfSpec, threads: int | None = 1
) -> HalfResult:
    """``ref``'s text through the float16 model, its norms without (or with) the upcast."""
    start = time.perf_counter()
    same_model(live, ref)
    outcomes: dict[str, torch.Tensor] = {}  # norm path → [T] 0 / 1 / 2
    first: list[tuple] = []  # (norm, token, x row, y row, outcome) of the first failure
    with live.exclusive("float16", threads) as loaded:
        model = loaded.model
        paths = module_paths(model, loaded.architecture)
        norms = norm_maps.norm_modules(model, loaded.architecture, paths)
        with Edits(model) as edits:
            for norm in norms:
                if not spec.upcast:
                    hook = norm_maps.replace_output(lambda x, norm=norm: norm_maps.half(norm, x))
                    edits.on_output(norm.path, hook)

                def watch(module, args, kwargs, output, norm=norm):
                    x, y = first_tensor(args, kwargs)[0], output_tensor(output)[0]  # [T, d']
                    found = _outcome(x, y)  # [T]
                    outcomes[norm.path] = found
                    failed = found.nonzero()
                    if failed.numel() and not first:
                        token = int(failed[0, 0])
                        first.append((norm, token, x[token], y[token], int(found[token])))

                edits.on_output(norm.path, watch)
            accumulate_in_float32(edits, model)
            output, recorded = run_with_capture(
                model, paths, (), **model_inputs(model, ref.tokens.ids)
            )
        logits = logits_of(output)
    names = [f"{block}.input" for block in paths.blocks] + [f"{paths.blocks[-1]}.output"]
    x16 = torch.stack([recorded[name][0].double() for name in names])  # [L+1, T, d]
    x32 = ref.stream.double()  # [L+1, T, d]
    error = (x16 - x32).norm(dim=-1) / x32.norm(dim=-1).clamp_min(1e-30)  # [L+1, T]
    error = torch.where(torch.isfinite(x16).all(-1), error, torch.inf)
    past = (error > spec.divergence).nonzero()  # [k, 2], in (point, token) order
    failed = np.stack([(outcomes[norm.path] > 0).numpy() for norm in norms])  # [N, T]
    first_failure, failure = None, ""
    if first:
        norm, token, x, y, code = first[0]
        failure = ("", "silent_zero", "nonfinite")[code]
        first_failure = NormIO(
            label=norm.path,
            layer=norm.layer,
            batch=0,
            token=token,
            x=x.double().numpy(),
            y=y.double().numpy(),
            weight=None if norm.gain is None else norm.gain.double().numpy(),
            bias=None if norm.bias is None else norm.bias.detach().double().numpy(),
            kind=norm.kind,
            eps=norm.eps,
        )
    return HalfResult(
        spec=spec,
        norms=paths.norms,
        norm_layers=paths.norm_layers,
        norm_failed=failed,
        first_failure=first_failure,
        failure=failure,
        stream_error=error.numpy(),
        diverges_at=(int(past[0, 0]), int(past[0, 1])) if past.numel() else None,
        effect=measure(ref, logits),
        seconds=time.perf_counter() - start,
    )
