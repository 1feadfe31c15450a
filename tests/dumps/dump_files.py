"""Writers of small example dumps, in every format and naming family the loaders accept.

The tests build their dumps at run time under ``tmp_path`` (no binary is committed).  Each
writer takes a dict {name: array [.., T, d]} and returns the path; the arrays are the
oracle the loaders' results are compared with.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file


def stream(layers=5, batch=2, tokens=7, d=16, seed=0, dtype=torch.float32) -> torch.Tensor:
    """A [L, B, T, d] residual stream that grows with depth, with a massive activation on
    token 0, channel 3 from layer 2 on (Sun et al.'s pattern)."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(layers, batch, tokens, d, generator=generator, dtype=torch.float64)
    x = x * torch.linspace(1.0, 3.0, layers, dtype=torch.float64)[:, None, None, None]
    x = x + 0.5  # a mean, so LayerNorm and RMSNorm differ
    x[2:, :, 0, 3] = 2500.0
    return x.to(dtype)


def write_safetensors(path: Path, tensors: dict[str, torch.Tensor], metadata=None) -> Path:
    save_file({k: v.clone() for k, v in tensors.items()}, str(path), metadata=metadata)
    return path


def write_npy(path: Path, array: np.ndarray) -> Path:
    np.save(path, array)
    return path


def write_npz(path: Path, arrays: dict[str, np.ndarray], compressed: bool = False) -> Path:
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    return path


def write_pt(path: Path, obj) -> Path:
    torch.save(obj, path)
    return path


def raw_safetensors(path: Path, header: dict, data: bytes = b"") -> Path:
    """A safetensors file with a hand-written header (for malformed cases)."""
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + data)
    return path


def hf_names(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """HF ``output_hidden_states`` as a dict: hidden_states.{i}, each [B, T, d]."""
    return {f"hidden_states.{i}": x[i] for i in range(x.shape[0])}


def tl_names(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """TransformerLens cache names for L-1 blocks: resid_pre of every block, resid_mid,
    the last resid_post, ln1/ln2 outputs and ln_final."""
    from torch.nn.functional import layer_norm

    blocks = x.shape[0] - 1
    names = {}
    for i in range(blocks):
        names[f"blocks.{i}.hook_resid_pre"] = x[i]
        mid = (x[i] + x[i + 1]) / 2
        names[f"blocks.{i}.hook_resid_mid"] = mid
        names[f"blocks.{i}.ln1.hook_normalized"] = layer_norm(x[i], x.shape[-1:])
        names[f"blocks.{i}.ln2.hook_normalized"] = layer_norm(mid, x.shape[-1:])
        names[f"blocks.{i}.ln1.hook_scale"] = x[i].std(-1, keepdim=True)
    names[f"blocks.{blocks - 1}.hook_resid_post"] = x[blocks]
    names["ln_final.hook_normalized"] = layer_norm(x[blocks], x.shape[-1:])
    return names


def module_names(x: torch.Tensor, weight: torch.Tensor | None = None) -> dict:
    """Hooks on HF modules: each decoder layer's output and its input_layernorm's input and
    output (RMSNorm with ``weight``), plus the weight."""
    d = x.shape[-1]
    weight = torch.ones(d, dtype=x.dtype) if weight is None else weight
    names = {}
    for i in range(x.shape[0]):
        names[f"model.layers.{i}"] = x[i]
        rms = torch.nn.functional.rms_norm(x[i], (d,), weight, eps=1e-5)
        names[f"model.layers.{i}.input_layernorm.input"] = x[i]
        names[f"model.layers.{i}.input_layernorm.output"] = rms
        names[f"model.layers.{i}.input_layernorm.weight"] = weight
    return names
