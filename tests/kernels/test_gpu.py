"""Compiled kernels on a CUDA GPU at real shapes, bfloat16 included (skipped without CUDA).

Run on a GPU machine with ``python3 -m pytest tests/kernels/test_gpu.py -m gpu`` (or through
``benchmarks/gpu_check.sh``).  Errors are measured as ||ours - oracle|| / ||oracle||, the
oracle being PyTorch in float32 (float64 for the statistics) on the same inputs.
"""

from __future__ import annotations

import pytest
import torch

from engine import NormSpec, normalize
from engine.kernels._launch import launch_counts
from engine.kernels.channel_stats import channel_stats
from engine.kernels.row_norm_function import row_norm
from engine.norms.dispatch import fused_add_norm

pytestmark = pytest.mark.gpu

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
REL_TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
SHAPES = [(4096, 4096), (2048, 8192), (1024, 1000), (8192, 128), (64, 20000), (8, 65536 + 1000)]
KINDS = pytest.mark.parametrize("is_rms", [False, True], ids=["layernorm", "rmsnorm"])


def rel_err(ours: torch.Tensor, oracle: torch.Tensor) -> float:
    ours, oracle = ours.double(), oracle.double()
    assert torch.isfinite(ours).all()
    return ((ours - oracle).norm() / oracle.norm().clamp_min(1e-30)).item()


def torch_norm(x, w, b, is_rms, eps=1e-5):
    """The oracle: PyTorch's own ops in float32 on the (upcast) inputs."""
    x32 = x.float()
    w32 = None if w is None else w.float()
    if is_rms:
        y = torch.nn.functional.rms_norm(x32, (x.shape[-1],), w32, eps)
        return y if b is None else y + b.float()
    return torch.nn.functional.layer_norm(
        x32, (x.shape[-1],), w32, None if b is None else b.float(), eps
    )


# bfloat16 and float32 at every shape; float16 at two (each case compiles its own kernels).
CASES = [
    pytest.param(shape, dtype, id=f"{'x'.join(map(str, shape))}-{str(dtype)[6:]}")
    for dtype in DTYPES
    for shape in SHAPES
    if dtype != torch.float16 or shape in ((4096, 4096), (8, 65536 + 1000))
]


@KINDS
@pytest.mark.parametrize("shape,dtype", CASES)
def test_forward_and_backward_match_torch(shape, dtype, is_rms):
    m, n = shape
    dev = "cuda"
    x = (-2.3 + 0.5 * torch.randn(m, n, device=dev)).to(dtype)
    w = (1.0 + 0.1 * torch.randn(n, device=dev)).to(dtype)
    b = (0.1 * torch.randn(n, device=dev)).to(dtype)
    dy = torch.randn(m, n, device=dev).to(dtype)
    before = launch_counts().get("_row_norm_forward_kernel", 0)
    leaves = [t.clone().requires_grad_() for t in (x, w, b)]
    y, _, mean, var, rstd = row_norm(leaves[0], None, leaves[1], leaves[2], 1e-5, 0.0, is_rms)
    assert launch_counts()["_row_norm_forward_kernel"] == before + 1
    grads = torch.autograd.grad(y, leaves, dy)

    oracle_in = [t.float().clone().requires_grad_() for t in (x, w, b)]
    y_ref = torch_norm(*oracle_in, is_rms)
    grads_ref = torch.autograd.grad(y_ref, oracle_in, dy.float())
    tol = REL_TOL[dtype]
    assert y.dtype == dtype
    assert rel_err(y, y_ref) < tol
    for name, g, g_ref in zip(("dx", "dW", "dB"), grads, grads_ref):
        assert rel_err(g, g_ref) < tol, name
    x64 = x.double()
    var_ref = (x64 * x64).mean(-1) if is_rms else x64.var(-1, unbiased=False)
    assert rel_err(var, var_ref) < 1e-5
    assert rel_err(rstd, torch.rsqrt(var_ref + 1e-5)) < 1e-5
    if not is_rms:
        assert rel_err(mean, x64.mean(-1)) < 1e-5


@KINDS
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_fused_add_norm_matches_the_unfused_pair(dtype, is_rms):
    x = torch.randn(4096, 4096, device="cuda").to(dtype)
    res = torch.randn(4096, 4096, device="cuda").to(dtype)
    w = torch.randn(4096, device="cuda").to(dtype)
    spec = NormSpec(kind="rmsnorm" if is_rms else "layernorm")
    fused, h = fused_add_norm(x, res, spec, w)
    assert fused.backend == "triton"
    assert torch.equal(h, x + res)
    unfused = normalize(x + res, spec, w, backend="triton")
    assert rel_err(fused.y, unfused.y) < 1e-6  # same arithmetic, same rounding of h


def test_weight_gradient_is_bit_identical_across_runs():
    x = torch.randn(16384, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(16384, 4096, device="cuda", dtype=torch.bfloat16)
    runs = []
    for _ in range(3):
        y = row_norm(x, None, w, None, 1e-5, 0.0, False)[0]
        runs.append(torch.autograd.grad(y, (x, w), dy))
    for other in runs[1:]:
        assert torch.equal(runs[0][1], other[1]) and torch.equal(runs[0][0], other[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_channel_stats_match_torch(dtype):
    x = (5.0 + 2.0 * torch.randn(64, 512, 768, device="cuda")).to(dtype)
    mask = torch.rand(64, 512, device="cuda") > 0.2
    count, mean, m2 = channel_stats(x, mask)
    kept = x[mask].double()
    assert count[0].item() == kept.shape[0]
    assert rel_err(mean, kept.mean(0)) < 1e-6
    assert rel_err(m2 / count, kept.var(0, unbiased=False)) < 1e-5


def test_auto_backend_picks_triton_on_cuda():
    x = torch.randn(8, 128, 576, device="cuda", dtype=torch.bfloat16)
    r = normalize(x, NormSpec(kind="rmsnorm"), torch.ones(576, device="cuda", dtype=torch.bfloat16))
    assert r.backend == "triton"
    r = normalize(x, NormSpec(kind="groupnorm", groups=4))  # not a kernel kind: torch
    assert r.backend == "torch"


def test_torch_compile_inductor_fullgraph_with_our_ops():
    torch._dynamo.reset()

    def block(x, res, w):
        y, h, *_ = row_norm(x, res, w, None, 1e-6, 1.0, True)
        return y.float().square().mean() + h.float().mean()

    x = torch.randn(1024, 2048, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    res = torch.randn(1024, 2048, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(2048, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    eager = block(x, res, w)
    compiled = torch.compile(block, fullgraph=True)(x, res, w)
    torch.testing.assert_close(compiled, eager)
    g_eager = torch.autograd.grad(eager, (x, res, w))
    g_comp = torch.autograd.grad(compiled, (x, res, w))
    for a, c in zip(g_comp, g_eager):
        assert rel_err(a, c) < 1e-2  # bfloat16 gradients; the point is composing at all
