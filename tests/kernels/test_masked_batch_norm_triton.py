"""``masked_batch_norm`` on the Triton backend: the ``channel_stats`` kernel with a padding
mask, against ``nn.BatchNorm1d`` over the real tokens only (interpreter here, GPU in CI)."""

from __future__ import annotations

import torch

from engine import NormSpec
from engine.norms import reference
from engine.norms.dispatch import masked_batch_norm

PARTIAL = "_channel_stats_partial_kernel"


def test_masked_statistics_from_the_kernel_match_batchnorm1d_on_real_rows(launches, monkeypatch):
    def no_fallback(*args, **kwargs):
        raise AssertionError("the torch path ran")

    monkeypatch.setattr(reference, "batch_norm", no_fallback)
    x = 1.5 + 2.0 * torch.randn(3, 9, 37)  # [B, T, d]
    real = torch.arange(9)[None, :] < torch.tensor([9, 5, 2])[:, None]  # [B, T]
    x[~real] = 0.0  # zero padding
    w, b = torch.randn(37), torch.randn(37)
    r = masked_batch_norm(x, NormSpec(kind="batchnorm"), real, w, b, backend="triton")
    assert r.backend == "triton" and launches.since(PARTIAL) == 1
    bn = torch.nn.BatchNorm1d(37, eps=1e-5, momentum=1.0).train()
    with torch.no_grad():
        bn.weight.copy_(w)
        bn.bias.copy_(b)
        expected_real = bn(x[real])  # [n, d]: the real rows alone
    n = int(real.sum())
    torch.testing.assert_close(r.mean, bn.running_mean, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(r.var * n / (n - 1), bn.running_var, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(r.y[real], expected_real, atol=1e-5, rtol=1e-5)


def test_triton_and_torch_paths_agree_with_and_without_mask(launches):
    x = -2.0 + torch.randn(2, 6, 20)
    real = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0]], dtype=torch.bool)
    spec = NormSpec(kind="batchnorm", eps=1e-5)
    for mask in (real, None):
        fast = masked_batch_norm(x, spec, mask, backend="triton")
        slow = masked_batch_norm(x, spec, mask, backend="torch")
        assert slow.backend == "torch"
        for name in ("y", "mean", "var", "rms", "rstd"):
            torch.testing.assert_close(getattr(fast, name), getattr(slow, name), msg=name)
    assert launches.since(PARTIAL) == 2
