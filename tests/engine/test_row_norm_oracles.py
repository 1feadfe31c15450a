"""``engine.normalize`` (backend="torch") for the per-token norms against independent oracles.

LayerNorm, RMSNorm and DyT normalise each token on its own.  Nothing here calls
``engine/norms/reference.py``: every expected value comes from the formulas written out in
float64 below (``layer_norm64``, ``rms_norm64``), from PyTorch's own functional ops
(``F.layer_norm``, ``F.rms_norm``), from HF transformers' ``LlamaRMSNorm`` /
``Gemma2RMSNorm``, or from numbers worked by hand.  The norms that pool over positions or
rows are in ``test_pooled_norm_oracles.py``; the tolerances and random inputs both files
use are in ``norm_oracle_inputs.py``.

For float32 inputs with float32 statistics the engine calls PyTorch's fused ops
(``aten.native_layer_norm``, ``aten._fused_rms_norm``), the very ops behind ``F.layer_norm``
and ``F.rms_norm``: comparing the two would test nothing.  So float32 is checked against
the float64 formulas and hand-computed values, and the ``F.*`` oracles are used only for
float16 / bfloat16, where the engine runs its own formulas.

Tolerances are ``(dtype, atol, rtol)`` tuples sized to the *output* dtype: about two units
in its last place, because the oracle and the engine may each round once at a different
step (Llama, for one, casts to the input dtype *before* multiplying by the weight).

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Gemma team 2024, arXiv:2403.08295 (RMSNorm scale is 1 + weight)
- Zhu et al. 2025, "Transformers without Normalization" (DyT), arXiv:2503.10622
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from engine import NormSpec, normalize
from tests.engine.norm_oracle_inputs import (
    DTYPE_TOLERANCES,
    EPS32,
    FLOAT32_VS_FLOAT64,
    FLOAT64_ORACLE_TOLERANCES,
    HALF_DTYPE_TOLERANCES,
    affine_params,
    randn,
)

# [..., T, d]: 1-D is one token, 2-D one sequence, 3-D a batch; widths 1, 3, 7, 1023
ROW_SHAPES = [
    pytest.param((1,), id="d1"),
    pytest.param((7,), id="1d-d7"),
    pytest.param((5, 3), id="2d-d3"),
    pytest.param((2, 3, 7), id="3d-d7"),
    pytest.param((2, 4, 1), id="3d-d1"),
    pytest.param((1, 3, 1023), id="3d-d1023"),
    pytest.param((2, 2, 3, 7), id="4d-d7"),
]


# --- float64 oracles: the definitions, written out ---------------------------------------


def _affine64(normalized, scale, bias) -> torch.Tensor:
    """gamma * x_hat + beta in float64 (either may be absent)."""
    y = normalized if scale is None else normalized * scale.double()  # [..., d]
    return y if bias is None else y + bias.double()  # [..., d]


def layer_norm64(x, eps, scale=None, bias=None) -> torch.Tensor:
    """LayerNorm (Ba et al. 2016) in float64: (x - mu) / sqrt(sigma^2 + eps), sigma^2 biased."""
    x64 = x.double()  # [..., d]: exactly the values x holds, no rounding on the way
    centred = x64 - x64.mean(dim=-1, keepdim=True)  # [..., d]
    var = centred.pow(2).mean(dim=-1, keepdim=True)  # [..., 1]
    return _affine64(centred / torch.sqrt(var + eps), scale, bias)


def rms_norm64(x, eps, scale=None, bias=None) -> torch.Tensor:
    """RMSNorm (Zhang & Sennrich 2019) in float64: x / sqrt(mean(x^2) + eps)."""
    x64 = x.double()  # [..., d]
    mean_square = x64.pow(2).mean(dim=-1, keepdim=True)  # [..., 1]
    return _affine64(x64 / torch.sqrt(mean_square + eps), scale, bias)


FLOAT64_FORMULAS = {"layernorm": layer_norm64, "rmsnorm": rms_norm64}


# --- float32: against the float64 formulas ----------------------------------------------


@pytest.mark.parametrize("kind, eps", [("layernorm", 1e-5), ("rmsnorm", 1e-6)])
@pytest.mark.parametrize("shape", [*ROW_SHAPES, pytest.param((8, 4096), id="2d-d4096")])
def test_float32_row_norms_match_the_float64_formulas(shape, kind, eps):
    x = randn(shape, shift=0.5)  # fp32
    d = shape[-1]
    weight, bias = affine_params(d, torch.float32)
    r = normalize(x, NormSpec(kind=kind, eps=eps), weight, bias, backend="torch")
    expected = FLOAT64_FORMULAS[kind](x, eps, weight, bias)  # [..., d] float64
    assert r.backend == "torch"
    assert r.y.dtype == torch.float32
    assert_close(r.y.double(), expected, atol=FLOAT32_VS_FLOAT64, rtol=FLOAT32_VS_FLOAT64)
    assert r.mean.shape == r.var.shape == r.rms.shape == r.rstd.shape == x.shape[:-1]
    assert r.mean.dtype == r.var.dtype == r.rms.dtype == r.rstd.dtype == torch.float32


# --- float16 / bfloat16: against torch.nn.functional -------------------------------------


@pytest.mark.parametrize("dtype, atol, rtol", HALF_DTYPE_TOLERANCES)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_half_precision_layernorm_matches_torch_layer_norm(shape, dtype, atol, rtol):
    x = randn(shape, dtype, shift=0.5)
    d = shape[-1]
    weight, bias = affine_params(d, dtype)
    r = normalize(x, NormSpec(kind="layernorm", eps=1e-5), weight, bias, backend="torch")
    expected = F.layer_norm(x, [d], weight, bias, eps=1e-5)
    assert r.backend == "torch"
    assert_close(r.y, expected, atol=atol, rtol=rtol)  # also checks dtype and shape
    assert r.mean.shape == r.var.shape == r.rms.shape == r.rstd.shape == x.shape[:-1]
    assert r.mean.dtype == r.var.dtype == r.rms.dtype == r.rstd.dtype == torch.float32


@pytest.mark.parametrize("dtype, atol, rtol", HALF_DTYPE_TOLERANCES)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_half_precision_rmsnorm_matches_torch_rms_norm(shape, dtype, atol, rtol):
    x = randn(shape, dtype, shift=0.5)
    d = shape[-1]
    weight, bias = affine_params(d, dtype)
    r = normalize(x, NormSpec(kind="rmsnorm", eps=1e-6), weight, bias, backend="torch")
    expected = F.rms_norm(x.float(), [d], weight.float(), eps=1e-6) + bias.float()
    assert_close(r.y, expected.to(dtype), atol=atol, rtol=rtol)
    assert r.y.dtype == dtype
    assert r.mean.shape == r.rstd.shape == x.shape[:-1]


@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("dtype, atol, rtol", FLOAT64_ORACLE_TOLERANCES)
def test_offset_scales_by_offset_plus_weight(kind, dtype, atol, rtol):
    d = 7
    x = randn((3, d), dtype, shift=1.0)
    weight = randn((d,), dtype, seed=5, scale=0.2)  # Gemma stores weight near 0
    r = normalize(x, NormSpec(kind=kind, eps=1e-6, offset=1.0), weight, backend="torch")
    expected = FLOAT64_FORMULAS[kind](x, 1e-6, 1.0 + weight.double())  # [3, d] float64
    assert_close(r.y, expected.to(dtype), atol=atol, rtol=rtol)


@pytest.mark.parametrize("eps", [1e-12, 1e-6, 1e-5, 1e-3, 1e-2])
@pytest.mark.parametrize("scale", [1.0, 0.03], ids=["var~1", "var~1e-3"])
@pytest.mark.parametrize("dtype, atol, rtol", FLOAT64_ORACLE_TOLERANCES)
@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
def test_eps_range_matches_float64_oracle(kind, dtype, atol, rtol, scale, eps):
    # scale 0.03 makes the mean square ~1e-3, comparable to eps: then eps visibly matters
    d = 7
    x = randn((4, 3, d), dtype, scale=scale, shift=0.5 * scale)
    x64 = x.double()  # the oracle sees exactly the values the dtype holds
    r = normalize(x, NormSpec(kind=kind, eps=eps), backend="torch")
    expected = FLOAT64_FORMULAS[kind](x, eps)  # [4, 3, d] float64
    if kind == "layernorm":
        mean64 = x64.mean(dim=-1)
        var64 = (x64 - mean64[..., None]).pow(2).mean(dim=-1)
    else:
        var64 = x64.pow(2).mean(dim=-1)  # RMSNorm's "variance" is the mean square
        mean64 = torch.zeros_like(var64)
    assert_close(r.y.double(), expected.to(dtype).double(), atol=atol, rtol=rtol)
    # the statistics are float32 whatever the input dtype
    assert_close(r.var.double(), var64, atol=1e-12, rtol=1e-5)
    assert_close(r.mean.double(), mean64, atol=1e-7, rtol=1e-5)
    assert_close(r.rstd.double(), (var64 + eps).rsqrt(), atol=0.0, rtol=1e-5)


# --- DyT: tanh instead of statistics -----------------------------------------------------


def test_dyt_matches_tanh_formula():
    x = randn((2, 3, 7), shift=0.2, scale=3.0)
    weight, bias = affine_params(7, torch.float32)
    r = normalize(x, NormSpec(kind="dyt", alpha=0.7), weight, bias, backend="torch")
    expected = weight.double() * torch.tanh(0.7 * x.double()) + bias.double()
    assert_close(r.y.double(), expected, atol=1e-6, rtol=1e-6)


# --- HF transformers modules --------------------------------------------------------------


@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
@pytest.mark.parametrize("shape", [(1,), (3,), (5, 7), (2, 4, 1023)], ids=str)
def test_rmsnorm_matches_hf_llama_rmsnorm(shape, dtype, atol, rtol):
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    d = shape[-1]
    x = randn(shape, dtype, shift=0.5)
    module = LlamaRMSNorm(d, eps=1e-5)
    weight, _ = affine_params(d, dtype)
    with torch.no_grad():
        module.weight.copy_(weight)
        expected = module.to(dtype)(x)
    # HF upcasts to float32 for the statistics, then casts back: compute_dtype="float32"
    spec = NormSpec(kind="rmsnorm", eps=1e-5, compute_dtype="float32")
    r = normalize(x, spec, module.weight.detach(), backend="torch")
    assert_close(r.y, expected, atol=atol, rtol=rtol)


@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
@pytest.mark.parametrize("shape", [(1,), (3,), (5, 7), (2, 4, 1023)], ids=str)
def test_rmsnorm_with_offset_one_matches_hf_gemma2_rmsnorm(shape, dtype, atol, rtol):
    from transformers.models.gemma2.modeling_gemma2 import Gemma2RMSNorm

    d = shape[-1]
    x = randn(shape, dtype, shift=0.5)
    module = Gemma2RMSNorm(d, eps=1e-6)
    with torch.no_grad():
        module.weight.copy_(randn((d,), seed=7, scale=0.2))  # zero-init; scale is 1 + weight
        expected = module.to(dtype)(x)
    spec = NormSpec(kind="rmsnorm", eps=1e-6, offset=1.0, compute_dtype="float32")
    r = normalize(x, spec, module.weight.detach(), backend="torch")
    assert_close(r.y, expected, atol=atol, rtol=rtol)


# --- statistics ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", [(7,), (5, 3), (2, 3, 1023)], ids=str)
def test_layernorm_statistics_match_float64(shape, dtype):
    # float32 statistics against float64 ones: mean ~3 and rstd ~1, each a few float32
    # roundings (and a log2(d)-deep sum) from exact, so 8 ulps; var is recovered from rstd
    # by the fused path (rstd^-2 - eps), which costs a few ulps more, hence 1e-5 there.
    x = randn(shape, dtype, shift=3.0)  # a visible mean, so rms != sigma
    r = normalize(x, NormSpec(kind="layernorm", eps=1e-5), backend="torch")
    x64 = x.double()
    mean64 = x64.mean(dim=-1)
    var64 = (x64 - mean64[..., None]).pow(2).mean(dim=-1)
    assert_close(r.mean.double(), mean64, atol=0, rtol=FLOAT32_VS_FLOAT64)
    assert_close(r.rstd.double(), (var64 + 1e-5).rsqrt(), atol=0, rtol=FLOAT32_VS_FLOAT64)
    assert_close(r.var.double(), var64, atol=1e-7, rtol=1e-5)
    assert_close(r.rms.double(), x64.pow(2).mean(-1).sqrt(), atol=1e-7, rtol=1e-6)
    # RMS^2 = sigma^2 + mu^2
    assert_close(r.rms.double() ** 2, r.var.double() + r.mean.double() ** 2, atol=0, rtol=1e-5)
    assert torch.all(r.rms >= r.var.sqrt() * (1 - 1e-6))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", [(7,), (5, 3), (2, 3, 1023)], ids=str)
def test_rmsnorm_statistics_are_mean_of_squares(shape, dtype):
    x = randn(shape, dtype, shift=3.0)
    r = normalize(x, NormSpec(kind="rmsnorm", eps=1e-6), backend="torch")
    mean_square64 = x.double().pow(2).mean(-1)
    assert torch.all(r.mean == 0)
    assert_close(r.var.double(), mean_square64, atol=1e-7, rtol=1e-5)
    assert_close(r.rms.double(), mean_square64.sqrt(), atol=1e-7, rtol=1e-5)
    assert_close(r.rstd.double(), (mean_square64 + 1e-6).rsqrt(), atol=0, rtol=1e-5)


@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
@pytest.mark.parametrize("shape", [(1,), (7,), (3, 1023), (2, 2, 3)], ids=str)
@pytest.mark.parametrize("value", [0.0, 1.0, -2.5, 3.7, 100.0])
def test_constant_rows(kind, shape, dtype, atol, rtol, value):
    # LayerNorm of a constant row: sigma^2 = 0, so with eps > 0 the output is beta exactly.
    # RMSNorm of a constant c: c / sqrt(c^2 + eps), i.e. ~sign(c), then the affine map.
    x = torch.full(shape, value, dtype=dtype)
    c = x.flatten()[0].item()  # the constant as the dtype holds it (3.7 is not exact)
    d = shape[-1]
    _, bias = affine_params(d, dtype)
    r = normalize(x, NormSpec(kind=kind, eps=1e-5), bias=bias, backend="torch")
    if kind == "layernorm":
        expected = bias.expand(shape)
        assert_close(r.mean, torch.full(shape[:-1], c), atol=0, rtol=1e-6)
        # sum-then-divide may miss c by an ulp, leaving a variance of ~ulp(c)^2, never more
        assert torch.all(r.var <= (2 * torch.finfo(torch.float32).eps * c) ** 2)
    else:
        expected = (c / math.sqrt(c**2 + 1e-5) + bias.double()).expand(shape).to(dtype)
        assert_close(r.var, torch.full(shape[:-1], c**2), atol=0, rtol=1e-6)
    assert_close(r.y, expected, atol=atol, rtol=rtol)
    assert_close(r.rms, torch.full(shape[:-1], abs(c)), atol=0, rtol=1e-6)


@pytest.mark.parametrize("d", [7, 1023, 4096])
def test_layernorm_survives_mean_cancellation(d):
    # x = 1e4 + N(0,1) in fp32: the one-pass E[x^2] - E[x]^2 cancels 1e8 - 1e8 with an
    # error ~ulp(1e8) = 8 >> sigma^2 = 1.  A stable algorithm (two-pass or Welford) errs by
    # ~eps32 * |mu| / sigma in relative terms; the fp32 mean itself is good to ~ulp(1e4).
    x = randn((8, d), shift=1e4)  # fp32
    x64 = x.double()
    r = normalize(x, NormSpec(kind="layernorm", eps=1e-5), backend="torch")
    expected = layer_norm64(x, 1e-5)  # [8, d] float64
    var64 = (x64 - x64.mean(dim=-1, keepdim=True)).pow(2).mean(dim=-1)  # [8]
    eps32 = EPS32
    output_tol = 4 * eps32 * 1e4 * (var64 + 1e-5).rsqrt()  # [8], mean error times rstd
    assert torch.all((r.y.double() - expected).abs().amax(-1) <= output_tol)
    var_rtol = 8 * eps32 * 1e4 / var64.sqrt()  # [8]
    assert torch.all(((r.var.double() - var64) / var64).abs() <= var_rtol)
    assert_close(r.mean.double(), x64.mean(-1), atol=2 * eps32 * 1e4, rtol=0)
    # float64 statistics remove the residual fp32 error
    r64 = normalize(x, NormSpec(kind="layernorm", compute_dtype="float64"), backend="torch")
    assert_close(r64.y.double(), expected, atol=1e-6, rtol=1e-6)
    assert_close(r64.var.double(), var64, atol=0, rtol=1e-6)


# --- hand-computed textbook example and precision ------------------------------------------


@pytest.mark.parametrize("compute_dtype", ["float32", "float64"])
def test_textbook_example_1_2_3_4(compute_dtype):
    # mu = 2.5, sigma^2 = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, RMS^2 = 30 / 4 = 7.5
    # LayerNorm: (x - 2.5) / sqrt(5/4) = [-3, -1, 1, 3] / sqrt(5) = [-1.3416, -0.4472, ...]
    # RMSNorm:   x / sqrt(7.5) = [1, 2, 3, 4] / sqrt(7.5)
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    ln = normalize(x, NormSpec("layernorm", eps=0.0, compute_dtype=compute_dtype), backend="torch")
    rms = normalize(x, NormSpec("rmsnorm", eps=0.0, compute_dtype=compute_dtype), backend="torch")
    assert ln.y.tolist() == pytest.approx([-1.3416, -0.4472, 0.4472, 1.3416], abs=1e-4)
    assert rms.y.tolist() == pytest.approx([0.3651, 0.7303, 1.0954, 1.4606], abs=1e-4)
    # exact values: centring is exact here, so rstd and one product are the only roundings
    # (each <= 1/2 ulp in float32); measured <= 0.5 EPS32 relative, 4 EPS32 allowed
    exact_ln = torch.tensor([-3.0, -1.0, 1.0, 3.0], dtype=torch.float64) / math.sqrt(5)
    exact_rms = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64) / math.sqrt(7.5)
    assert_close(ln.y.double(), exact_ln, atol=0, rtol=4 * EPS32)
    assert_close(rms.y.double(), exact_rms, atol=0, rtol=4 * EPS32)
    assert ln.mean.item() == pytest.approx(2.5, rel=1e-6)
    assert ln.var.item() == pytest.approx(1.25, rel=1e-6)
    assert ln.rms.item() ** 2 == pytest.approx(7.5, rel=1e-6)
    assert ln.rms.item() ** 2 == pytest.approx(ln.var.item() + ln.mean.item() ** 2, rel=1e-6)
    assert rms.var.item() == pytest.approx(7.5, rel=1e-6)  # the mean square
    assert rms.rstd.item() == pytest.approx(1 / math.sqrt(7.5), rel=1e-6)
    # RMSNorm keeps the direction 1 : 2 : 3 : 4; LayerNorm's output is orthogonal to 1
    assert (rms.y / rms.y[0]).tolist() == pytest.approx([1, 2, 3, 4], rel=1e-6)
    assert ln.y.sum().item() == pytest.approx(0.0, abs=1e-6)
    assert ln.y.norm().item() == pytest.approx(2.0, rel=1e-6)  # sqrt(d)


@pytest.mark.parametrize("compute_dtype", ["input", "float16"])
def test_float16_statistics_overflow_on_a_row_of_100s(compute_dtype):
    # sum of squares = 4096 * 100^2 = 4.1e7, ~625x fp16's max 65504: the mean square is inf,
    # rstd = 1/sqrt(inf) = 0, and every output is 0 instead of 1.
    x = torch.full((4096,), 100.0, dtype=torch.float16)
    r = normalize(x, NormSpec("rmsnorm", eps=1e-5, compute_dtype=compute_dtype), backend="torch")
    assert math.isinf(r.rms.item())
    assert r.rstd.item() == 0.0
    assert torch.all(r.y == 0)
    expected = x.double() / (x.double().pow(2).mean() + 1e-5).sqrt()  # float64 oracle: ~1
    assert not torch.allclose(r.y.double(), expected, atol=0.5)


@pytest.mark.parametrize("compute_dtype", ["float32", "bfloat16"])
def test_wide_range_compute_fixes_the_float16_overflow(compute_dtype):
    # float32 (HF's upcast) and bfloat16 share an 8-bit exponent: 4.1e7 fits easily
    x = torch.full((4096,), 100.0, dtype=torch.float16)
    r = normalize(x, NormSpec("rmsnorm", eps=1e-5, compute_dtype=compute_dtype), backend="torch")
    expected = x.double() / (x.double().pow(2).mean() + 1e-5).sqrt()
    assert_close(r.y.double(), expected, atol=2e-3, rtol=2e-3)
    assert torch.all(r.y == 1.0)
    assert r.y.dtype == torch.float16
    assert r.rms.item() == pytest.approx(100.0, rel=1e-2)
