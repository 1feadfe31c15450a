"""engine.normalize / fused_add_norm reach the kernels (no silent fallback), and the
torch.library ops pass opcheck and compose with torch.compile."""

from __future__ import annotations

import pytest
import torch

import engine.norms.dispatch
from engine import NormSpec, normalize
from engine.kernels import _launch
from engine.kernels.row_norm_function import row_norm
from engine.norms import reference
from engine.norms.dispatch import fused_add_norm, supports

FWD, BWD = "_row_norm_forward_kernel", "_row_norm_backward_kernel"


@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm", "batchnorm"])
def test_forced_triton_backend_runs_the_kernels_not_a_fallback(kind, launches, monkeypatch):
    def no_fallback(*args, **kwargs):
        raise AssertionError("the torch path ran")

    for name in ("layer_norm", "rms_norm", "batch_norm"):
        monkeypatch.setattr(reference, name, no_fallback)
    monkeypatch.setattr(engine.norms.dispatch, "_native_row_norm", no_fallback)
    monkeypatch.setattr(engine.norms.dispatch, "_reference_norm", no_fallback)
    x = -2.3 + 0.5 * torch.randn(2, 5, 41)
    r = normalize(x, NormSpec(kind=kind, offset=1.0), torch.randn(41), torch.randn(41), "triton")
    assert r.backend == "triton"
    assert r.y.shape == x.shape and r.y.dtype == x.dtype
    kernel = "_channel_stats_partial_kernel" if kind == "batchnorm" else FWD
    assert launches.since(kernel) == 1


@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
def test_normalize_triton_matches_normalize_torch(kind, launches):
    x = -2.3 + 0.5 * torch.randn(3, 7, 123)
    w, b = torch.randn(123), torch.randn(123)
    spec = NormSpec(kind=kind, eps=1e-6, offset=1.0)
    ours, theirs = normalize(x, spec, w, b, "triton"), normalize(x, spec, w, b, "torch")
    assert (ours.backend, theirs.backend) == ("triton", "torch")
    for name in ("y", "mean", "var", "rms", "rstd"):
        torch.testing.assert_close(getattr(ours, name), getattr(theirs, name), atol=1e-5, rtol=1e-5)
    assert launches.since(FWD) == 1


@pytest.mark.parametrize("kind", ["instancenorm", "groupnorm", "dyt"])
def test_kinds_without_kernels_raise_naming_the_kind(kind):
    with pytest.raises(NotImplementedError, match=kind):
        normalize(torch.randn(2, 4, 8), NormSpec(kind=kind, groups=2), backend="triton")


def test_reduced_precision_statistics_are_not_claimed_by_the_kernels():
    spec = NormSpec(kind="layernorm", compute_dtype="float16")
    assert not supports(spec, torch.float16)
    assert supports(NormSpec(kind="rmsnorm"), torch.bfloat16)
    with pytest.raises(NotImplementedError, match="float32"):
        normalize(torch.randn(4, 8).half(), spec, backend="triton")


def test_auto_leaves_unsupported_specs_to_torch(monkeypatch, launches):
    # Pretend the tensor lives on a GPU: "auto" resolves to Triton.
    monkeypatch.setattr(engine.norms.dispatch, "resolve_backend", lambda x, backend: "triton")
    r = normalize(torch.randn(2, 4, 8), NormSpec(kind="groupnorm", groups=2), backend="auto")
    assert r.backend == "torch"
    r = normalize(torch.randn(2, 4, 8), NormSpec(kind="rmsnorm"), backend="auto")
    assert r.backend == "triton" and launches.since(FWD) == 1


@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
def test_fused_add_norm_equals_the_unfused_pair(kind, launches):
    x, res = torch.randn(2, 7, 760), torch.randn(2, 7, 760)
    w, b = torch.randn(760), torch.randn(760)
    spec = NormSpec(kind=kind)
    fused, h = fused_add_norm(x, res, spec, w, b, backend="triton")
    assert fused.backend == "triton" and launches.since(FWD) == 1
    torch.testing.assert_close(h, x + res, atol=0, rtol=0)
    unfused = normalize(x + res, spec, w, b, backend="torch")
    for name in ("y", "mean", "var", "rms", "rstd"):
        torch.testing.assert_close(
            getattr(fused, name), getattr(unfused, name), atol=1e-5, rtol=1e-5
        )


def test_fused_add_norm_on_the_torch_backend_says_so(launches):
    x, res = torch.randn(7, 41), torch.randn(7, 41)
    for backend in ("torch", "auto"):  # a CPU tensor: "auto" is torch
        r, h = fused_add_norm(x, res, NormSpec(kind="rmsnorm"), backend=backend)
        assert r.backend == "torch"
        torch.testing.assert_close(h, x + res, atol=0, rtol=0)
    assert launches.since(FWD) == 0
    with pytest.raises(ValueError, match="residual shape"):
        fused_add_norm(x, res[:3], NormSpec())


def test_cpu_launch_without_the_interpreter_explains_itself(monkeypatch):
    monkeypatch.setattr(_launch, "interpreter_active", lambda: False)
    with pytest.raises(RuntimeError, match="before triton is first imported"):
        row_norm(torch.randn(2, 8))


def test_strided_inputs_are_read_in_place_not_copied():
    wide = torch.randn(3, 5, 50)
    for view in (wide[:, :, 3:40], wide[..., ::2], torch.ones(1).expand(4, 9)):
        rows = _launch.as_rows(view)
        assert rows.data_ptr() == view.data_ptr() and rows.shape == (
            view.numel() // view.shape[-1],
            view.shape[-1],
        )
    transposed = wide.transpose(0, 1)  # [5, 3, 50]: leading axes do not collapse -> a copy
    torch.testing.assert_close(_launch.as_rows(transposed), transposed.reshape(-1, 50))


def _small_args():
    x, r = torch.randn(3, 5, 41), torch.randn(3, 5, 41)
    w, b = torch.randn(41), torch.randn(41)
    return x, r, w, b


@pytest.mark.parametrize("with_residual", [False, True])
def test_forward_op_passes_opcheck(with_residual):
    x, r, w, b = _small_args()
    args = (x, r if with_residual else None, w, b, 1e-5, 1.0, False)
    torch.library.opcheck(torch.ops.normscope.row_norm_forward.default, args)


def test_backward_op_passes_opcheck():
    x, r, w, _ = _small_args()
    _, h, mean, _, rstd = torch.ops.normscope.row_norm_forward(x, r, w, None, 1e-5, 0.0, True)
    args = (
        torch.randn(3, 5, 41),
        torch.randn(3, 5, 41),
        h,
        w,
        mean,
        rstd,
        0.0,
        True,
        True,
        True,
        True,
    )
    torch.library.opcheck(torch.ops.normscope.row_norm_backward.default, args)


def test_channel_stats_op_passes_opcheck():
    x = torch.randn(3, 5, 41)
    mask = torch.rand(3, 5) > 0.5
    torch.library.opcheck(torch.ops.normscope.channel_stats.default, (x, mask))


def test_ops_compose_with_torch_compile_fullgraph(launches):
    # imported here: torch._dynamo costs each worker's collection 1.4 CPU s
    from torch._dynamo.backends.registry import lookup_backend

    torch._dynamo.reset()

    def block(x, res, w):
        y, h, *_ = row_norm(x, res, w, None, 1e-5, 0.0, True)
        return (y * y).sum() + h.sum()

    graphs = []

    def recording_aot_eager(gm, example_inputs):
        graphs.append(gm.print_readable(print_output=False))
        return lookup_backend("aot_eager")(gm, example_inputs)

    compiled = torch.compile(block, fullgraph=True, backend=recording_aot_eager)
    x, res, _, _ = _small_args()
    w = torch.randn(41)
    eager_in = [t.clone().requires_grad_() for t in (x, res, w)]
    compiled_in = [t.clone().requires_grad_() for t in (x, res, w)]
    eager_loss = block(*eager_in)
    compiled_loss = compiled(*compiled_in)
    torch.testing.assert_close(compiled_loss, eager_loss)
    eager_grads = torch.autograd.grad(eager_loss, eager_in)
    compiled_grads = torch.autograd.grad(compiled_loss, compiled_in)
    for a, c in zip(compiled_grads, eager_grads):
        torch.testing.assert_close(a, c)
    assert launches.since(FWD) >= 2 and launches.since(BWD) >= 2
    traced = "\n".join(graphs)  # the tracer saw our ops, not their insides
    assert "normscope.row_norm_forward" in traced and "normscope.row_norm_backward" in traced


def test_the_variance_of_a_fused_row_agrees_with_its_rstd():
    """Seven 1e17s in float32: aten.native_layer_norm's rstd is 1/sqrt(eps) (variance 0); the
    reference's rounded mean (sum / 7) leaves a variance of 7e19, which is not taken for it."""
    x = torch.full((1, 7), 1e17)
    result = normalize(x, NormSpec("layernorm"), backend="torch")
    assert float(result.rstd[0]) == pytest.approx(1e-5**-0.5) and float(result.var[0]) == 0
    assert float(reference.layer_norm(x).var[0]) > 1e19
    tiny = normalize(torch.tensor([[1.0, 1.001]]), NormSpec("layernorm"), backend="torch")
    assert float(tiny.var[0]) == pytest.approx(2.5e-7, rel=1e-3)  # the reference's digits kept
