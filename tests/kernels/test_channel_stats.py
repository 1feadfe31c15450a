"""Per-channel statistics kernel vs engine.norms.reference.batch_norm and a masked oracle."""

from __future__ import annotations

import pytest
import torch

from engine import NormSpec, normalize
from engine.kernels.channel_stats import channel_stats
from engine.norms import reference

PARTIAL, MERGE = "_channel_stats_partial_kernel", "_channel_stats_merge_kernel"


@pytest.mark.parametrize(
    "shape",
    [(1, 1), (7, 41), (2, 9, 123), (199, 760), (3, 50, 1128), (4, 3000)],
    ids=lambda s: "x".join(map(str, s)),
)
def test_unmasked_statistics_match_reference_batch_norm(shape, launches):
    x = -2.3 + 0.5 * torch.randn(shape)
    count, mean, m2 = channel_stats(x)
    ref = reference.batch_norm(x)
    rows = x.numel() // shape[-1]
    assert torch.equal(count, torch.full((shape[-1],), float(rows)))
    torch.testing.assert_close(mean, ref.mean, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(m2 / count, ref.var, atol=1e-5, rtol=1e-5)
    assert launches.since(PARTIAL) == 1 and launches.since(MERGE) == 1


@pytest.mark.parametrize("keep", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("shape", [(2, 9, 37), (5, 40, 300)], ids=["2x9x37", "5x40x300"])
def test_masked_statistics_match_an_oracle_over_the_kept_positions(shape, keep, launches):
    x = 3.0 + 2.0 * torch.randn(shape)
    mask = torch.rand(shape[:-1]) < keep  # [B, T]; False = padding
    count, mean, m2 = channel_stats(x, mask)
    kept = x[mask].double()  # [k, d]
    assert torch.equal(count, torch.full((shape[-1],), float(kept.shape[0])))
    if kept.shape[0] == 0:
        assert torch.equal(mean, torch.zeros(shape[-1])) and torch.equal(m2, mean)
    else:
        torch.testing.assert_close(mean.double(), kept.mean(0), atol=1e-5, rtol=1e-5)
        exact_m2 = ((kept - kept.mean(0)) ** 2).sum(0)
        torch.testing.assert_close(m2.double(), exact_m2, atol=1e-4, rtol=1e-5)
    assert launches.since(PARTIAL) == 1


def test_padding_values_do_not_leak_into_the_statistics(launches):
    x = torch.randn(4, 16, 64)
    mask = torch.ones(4, 16, dtype=torch.bool)
    mask[:, 10:] = False
    poisoned = x.clone()
    poisoned[:, 10:] = 1e30  # whatever sits in padding must not matter
    for a, b in zip(channel_stats(x, mask), channel_stats(poisoned, mask)):
        assert torch.equal(a, b)
    assert launches.since(PARTIAL) == 2


def test_large_channel_means_keep_their_variance(launches):
    # |mean| / std = 1e5 per channel: Chan's merge of centred partials loses nothing.
    x = 1000.0 + 0.01 * torch.randn(4000, 8)
    count, _, m2 = channel_stats(x)
    exact = x.double().var(0, unbiased=False)
    torch.testing.assert_close((m2 / count).double(), exact, atol=0, rtol=1e-5)
    assert launches.since(MERGE) == 1


def test_strided_and_float16_inputs(launches):
    wide = torch.randn(3, 20, 90)
    x = wide[:, :, 5:85:2]  # [3, 20, 40], column stride 2
    count, mean, m2 = channel_stats(x)
    ref = reference.batch_norm(x)
    torch.testing.assert_close(mean, ref.mean, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(m2 / count, ref.var, atol=1e-5, rtol=1e-5)
    half = x.half()
    _, mean16, _ = channel_stats(half)
    torch.testing.assert_close(mean16, reference.batch_norm(half).mean, atol=1e-2, rtol=1e-2)
    assert launches.since(PARTIAL) == 2


def test_statistics_are_bit_identical_across_runs(launches):
    x = torch.randn(199, 760)
    first, second = channel_stats(x), channel_stats(x)
    for a, b in zip(first, second):
        assert torch.equal(a, b)


def test_batch_norm_through_normalize_matches_reference_with_gradients(launches):
    x = (-2.3 + 0.5 * torch.randn(3, 17, 41)).requires_grad_()
    w = torch.randn(41).requires_grad_()
    b = torch.randn(41).requires_grad_()
    spec = NormSpec(kind="batchnorm", eps=1e-5)
    r = normalize(x, spec, w, b, backend="triton")
    assert r.backend == "triton" and launches.since(PARTIAL) == 1
    ref = reference.batch_norm(x, 1e-5, w, b)
    torch.testing.assert_close(r.y, ref.y, atol=1e-5, rtol=1e-5)
    for name in ("mean", "var", "rms", "rstd"):
        torch.testing.assert_close(getattr(r, name), getattr(ref, name), atol=1e-5, rtol=1e-5)
    dy = torch.randn(3, 17, 41)
    got = torch.autograd.grad(r.y, (x, w, b), dy)
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
    ref64 = reference.batch_norm(x64, 1e-5, w64, b64, compute_dtype=torch.float64)
    expected = torch.autograd.grad(ref64.y, (x64, w64, b64), dy.double())
    for name, g, e in zip(("dx", "dW", "dB"), got, expected):
        torch.testing.assert_close(g.double(), e, atol=1e-5, rtol=1e-5, msg=name)
