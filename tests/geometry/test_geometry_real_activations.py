"""The shipped SmolLM2 dump measured by engine.geometry.real_activations, against the file read
directly with safetensors and the norms computed by PyTorch's own F.rms_norm / F.layer_norm."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from safetensors import safe_open

from engine.geometry.real_activations import EXAMPLE_DUMP, real_activations


@pytest.fixture(scope="module")
def measured():
    return real_activations()


@pytest.fixture(scope="module")
def raw():
    """Every entry of the file as float64, and its metadata."""
    with safe_open(str(EXAMPLE_DUMP), framework="pt") as handle:
        tensors = {key: handle.get_tensor(key).double() for key in handle.keys()}
        return tensors, handle.metadata()


def _flat(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.reshape(-1, tensor.shape[-1])  # [B*T, d]


def test_every_norm_pair_of_the_dump_is_measured(measured, raw):
    tensors, metadata = raw
    labels = {key.removesuffix(".input") for key in tensors if key.endswith("layernorm.input")}
    labels |= {"model.norm"}
    assert {pair.label for pair in measured.pairs} == labels
    assert measured.model == metadata["model"]
    lengths = json.loads(metadata["lengths"])
    assert measured.tokens == sum(lengths)
    assert measured.storage_dtype == "float16"


def test_inputs_and_stored_outputs_match_the_file(measured, raw):
    tensors, _ = raw
    for pair in measured.pairs:
        x = _flat(tensors[f"{pair.label}.input"])  # [N, d]
        y = _flat(tensors[f"{pair.label}.output"])
        assert pair.rows == x.shape[0] and pair.d == x.shape[1] == 576
        np.testing.assert_allclose(pair.inputs.norm, x.norm(dim=-1).numpy(), rtol=1e-12)
        np.testing.assert_allclose(pair.inputs.ones, x.sum(dim=-1).numpy(), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(pair.stored.norm, y.norm(dim=-1).numpy(), rtol=1e-12)
        cos = F.cosine_similarity(x, y, dim=-1).numpy()
        np.testing.assert_allclose(pair.stored.cos_input, cos, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(pair.weight, tensors[f"{pair.label}.weight"].numpy())


def test_recomputed_norms_are_pytorchs_and_land_on_the_sphere(measured, raw):
    tensors, metadata = raw
    eps = float(metadata["norm_eps"])
    for pair in measured.pairs:
        x = _flat(tensors[f"{pair.label}.input"]).float()  # [N, d]
        rms = F.rms_norm(x, (pair.d,), eps=eps).double()
        layer = F.layer_norm(x, (pair.d,), eps=eps).double()
        np.testing.assert_allclose(
            pair.recomputed["rmsnorm"].norm, rms.norm(dim=-1).numpy(), rtol=1e-5
        )
        np.testing.assert_allclose(
            pair.recomputed["layernorm"].norm, layer.norm(dim=-1).numpy(), rtol=1e-5
        )
        # the sqrt(d) sphere pulled in by eps: block 0's small embeddings (rms ~0.12) land
        # ~4e-4 inside it, the later blocks' at it to float32 precision
        root = x.double().pow(2).mean(dim=-1).sqrt().numpy()
        expected = math.sqrt(576) * root / np.sqrt(root**2 + eps)
        np.testing.assert_allclose(pair.recomputed["rmsnorm"].norm, expected, rtol=1e-5)
        np.testing.assert_allclose(pair.recomputed["rmsnorm"].cos_input, 1.0, atol=1e-6)
        assert np.abs(pair.recomputed["layernorm"].ones).max() < 1e-3  # 0 up to rounding


def test_the_stored_output_is_the_models_rmsnorm_to_float16_rounding(measured, raw):
    tensors, metadata = raw
    eps = float(metadata["norm_eps"])
    for pair in measured.pairs:
        x = _flat(tensors[f"{pair.label}.input"]).float()
        weight = tensors[f"{pair.label}.weight"].float()
        oracle = F.rms_norm(x, (pair.d,), weight=weight, eps=eps).double()
        stored = _flat(tensors[f"{pair.label}.output"])
        # float16 keeps 11 bits: the stored input and the stored output are each off by up to
        # half an ulp, so recomputing from the stored input lands within about one ulp
        ulp = 2.0**-10 * stored.abs().max().item()
        assert pair.recomputed_max_abs_difference <= ulp
        assert (oracle - stored).abs().max().item() <= ulp
        assert pair.stored_max_abs == pytest.approx(stored.abs().max().item())


def test_block_12_holds_the_massive_activation(measured):
    block12 = next(p for p in measured.pairs if p.label == "model.layers.12.input_layernorm")
    norms = block12.inputs.norm
    assert norms.max() > 100 * np.median(norms)  # ~26,650 against a median of ~149
    block0 = next(p for p in measured.pairs if p.label == "model.layers.0.input_layernorm")
    assert block0.inputs.norm.max() < 2 * np.median(block0.inputs.norm)
