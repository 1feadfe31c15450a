"""What each norm of a model computes, and the replacements the experiments put in its place.

A norm module's output is replaced by a forward hook that ignores what the module returned
and computes the replacement from the module's input (``replace_output``): the module's own
code still runs, but its result is discarded.  The replacements are the formulas of
``engine/norms/reference.py`` with the module's own weight, bias, epsilon and Gemma's
``1 + weight`` offset, computed in float32 and cast back to the input's dtype as Hugging
Face's norms do:

- ``computed``: the norm of ``kind`` ("layernorm" subtracts each token's mean first,
  "rmsnorm" does not) with each token's own statistic — the swap of RMSNorm for LayerNorm;
- ``frozen``: each token's 1/RMS (1/σ for LayerNorm, which still subtracts the mean) replaced
  by one constant — the norm without its per-token scale (Heimersheim 2024);
- ``half``: the statistics in float16, as the norm's code runs with its upcast to float32
  removed (``engine/norms/precision_paths.py``, path ``torch_half``), then γ and β in float16.

References:
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Heimersheim 2024, "You can remove GPT2's LayerNorm by fine-tuning", arXiv:2409.13710
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from engine.dumps.architectures import Architecture, ModulePaths, norm_eps
from engine.dumps.hooks import first_tensor
from engine.norms import reference
from engine.norms.precision_paths import run_path

DEFAULT_EPS = 1e-5  # a norm module that names no epsilon (none of the covered architectures)


@dataclass(frozen=True)
class NormModule:
    """One norm of a model: where it is and what it multiplies and adds."""

    path: str  # e.g. "model.layers.3.input_layernorm"
    layer: int | None  # its block; None: outside the blocks (the final norm)
    kind: str  # "rmsnorm" | "layernorm" (the architecture's)
    eps: float
    offset: float  # Gemma: the output is multiplied by (1 + weight)
    weight: torch.Tensor | None  # [d'] the module's parameter (not offset + weight)
    bias: torch.Tensor | None  # [d']

    @property
    def gain(self) -> torch.Tensor | None:
        """[d'] what the normalised input is multiplied by: offset + weight."""
        return None if self.weight is None else self.weight.detach().float() + self.offset


def norm_modules(model: torch.nn.Module, arch: Architecture, paths: ModulePaths):
    """Every norm of ``paths``, in forward order, with its parameters (read, not copied)."""
    modules = dict(model.named_modules())
    found = []
    for path, layer in zip(paths.norms, paths.norm_layers):
        module = modules[path]
        weight = getattr(module, "weight", None)
        bias = getattr(module, "bias", None)
        eps = norm_eps(module)
        found.append(
            NormModule(
                path=path,
                layer=layer,
                kind=arch.norm_kind,
                eps=DEFAULT_EPS if eps is None else eps,
                offset=arch.weight_offset,
                weight=weight if isinstance(weight, torch.Tensor) else None,
                bias=bias if isinstance(bias, torch.Tensor) else None,
            )
        )
    return tuple(found)


def rstd(norm: NormModule, x: torch.Tensor) -> torch.Tensor:
    """[...] each row's 1/RMS (RMSNorm) or 1/σ (LayerNorm) as ``norm`` computes it, float32."""
    return reference.FORMULAS[norm.kind](x, norm.eps).rstd


def computed(norm: NormModule, x: torch.Tensor, kind: str) -> torch.Tensor:
    """``norm`` computed as a ``kind`` norm, with its own weight, bias and epsilon."""
    return reference.FORMULAS[kind](x, norm.eps, norm.weight, norm.bias, norm.offset).y


def frozen(norm: NormModule, x: torch.Tensor, scale) -> torch.Tensor:
    """``norm`` with every row's 1/RMS (1/σ) replaced by ``scale`` (a number, or a tensor
    that broadcasts against x: one per row); LayerNorm still centres."""
    xc = x.float()  # [..., d]
    if norm.kind == "layernorm":
        xc = xc - xc.mean(-1, keepdim=True)  # [..., d]
    return reference.affine(xc * scale, norm.weight, norm.bias, norm.offset).to(x.dtype)


def half(norm: NormModule, x: torch.Tensor) -> torch.Tensor:
    """``norm`` on a half-precision ``x`` with its statistics computed in half (no upcast):
    PyTorch's own half ops, ``precision_paths`` path ``torch_half``; then γ and β in x's
    dtype.  A token whose x² overflows (|x| >= 256 in float16) gets rstd = 0: silent zeros."""
    rows = x.reshape(-1, x.shape[-1])  # [B*T, d]
    y = run_path("torch_half", rows, norm.kind, norm.eps).y.reshape(x.shape)  # [..., d]
    if norm.weight is not None:
        y = y * (norm.weight + norm.offset).to(x.dtype)
    if norm.bias is not None:
        y = y + norm.bias.to(x.dtype)
    return y


def replace_output(compute: Callable[[torch.Tensor], torch.Tensor]):
    """A forward hook (``with_kwargs=True``) that returns ``compute(input)`` instead of what
    the module returned."""

    def hook(module, args, kwargs, output):
        return compute(first_tensor(args, kwargs))

    return hook
