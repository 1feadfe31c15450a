"""``masked_batch_norm`` (torch path) and ``reference.batch_norm_running_update`` against
``nn.BatchNorm1d``; the Triton path is in ``tests/kernels/test_masked_batch_norm_triton.py``."""

from __future__ import annotations

import pytest
import torch

from engine import NormSpec, normalize
from engine.norms import reference
from engine.norms.dispatch import masked_batch_norm

BN = NormSpec(kind="batchnorm", eps=1e-5)


def padded_batch():
    gen = torch.Generator().manual_seed(0)
    x = 2.0 + 3.0 * torch.randn(3, 8, 10, generator=gen, dtype=torch.float64)  # [B, T, d]
    real = torch.arange(8)[None, :] < torch.tensor([8, 3, 1])[:, None]  # [B, T]
    x[~real] = 0.0
    return x, real


def test_masked_statistics_are_batchnorm1d_on_the_real_rows():
    x, real = padded_batch()
    spec = NormSpec(kind="batchnorm", eps=1e-5, compute_dtype="float64")
    w = torch.linspace(0.5, 1.5, 10, dtype=torch.float64)
    b = torch.linspace(-1, 1, 10, dtype=torch.float64)
    r = masked_batch_norm(x, spec, real, w, b)
    assert r.backend == "torch"
    bn = torch.nn.BatchNorm1d(10, eps=1e-5, momentum=1.0, dtype=torch.float64).train()
    with torch.no_grad():
        bn.weight.copy_(w)
        bn.bias.copy_(b)
        expected = bn(x[real])  # [n, d]
    n = int(real.sum())
    torch.testing.assert_close(r.y[real], expected)
    torch.testing.assert_close(r.mean.double(), bn.running_mean, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(r.var.double() * n / (n - 1), bn.running_var, rtol=1e-6, atol=0)
    # rms of the counted rows only, by hand
    rms = x[real].pow(2).mean(0).sqrt()
    torch.testing.assert_close(r.rms.double(), rms, rtol=1e-6, atol=0)


def test_no_mask_is_normalize():
    x, _ = padded_batch()
    a, b = masked_batch_norm(x, BN), normalize(x, BN)
    for name in ("y", "mean", "var", "rms", "rstd"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name


def test_padding_values_do_not_reach_masked_statistics():
    x, real = padded_batch()
    poisoned = x.clone()
    poisoned[~real] = 1e6
    a, b = masked_batch_norm(x, BN, real), masked_batch_norm(poisoned, BN, real)
    assert torch.equal(a.mean, b.mean) and torch.equal(a.var, b.var)
    assert torch.equal(a.y[real], b.y[real])


def test_bad_mask_and_kind_are_refused():
    x, real = padded_batch()
    with pytest.raises(ValueError, match="mask must be bool of shape"):
        masked_batch_norm(x, BN, real.float())
    with pytest.raises(ValueError, match="mask must be bool of shape"):
        masked_batch_norm(x, BN, real[:, :4])
    with pytest.raises(ValueError, match="kind='batchnorm'"):
        masked_batch_norm(x, NormSpec(kind="layernorm"), real)


@pytest.mark.parametrize("momentum", [0.1, 0.5, 1.0])
def test_running_update_matches_batchnorm1d(momentum):
    gen = torch.Generator().manual_seed(1)
    bn = torch.nn.BatchNorm1d(6, momentum=momentum, dtype=torch.float64).train()
    running_mean = torch.zeros(6, dtype=torch.float64)
    running_var = torch.ones(6, dtype=torch.float64)
    for _ in range(5):
        batch = 1.0 + 2.0 * torch.randn(12, 6, generator=gen, dtype=torch.float64)  # [N, d]
        bn(batch)
        running_mean, running_var = reference.batch_norm_running_update(
            running_mean, running_var, batch.mean(0), batch.var(0, correction=0), 12, momentum
        )
    torch.testing.assert_close(running_mean, bn.running_mean)
    torch.testing.assert_close(running_var, bn.running_var)


def test_running_update_of_one_value_is_nan_not_an_error():
    mean, var = reference.batch_norm_running_update(
        torch.zeros(2), torch.ones(2), torch.tensor([3.0, 4.0]), torch.zeros(2), 1
    )
    assert torch.allclose(mean, torch.tensor([0.3, 0.4]))
    assert bool(torch.isnan(var).all())
