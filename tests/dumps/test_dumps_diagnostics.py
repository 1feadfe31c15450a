"""Diagnostics against independent computations: numpy in float64 for the statistics,
torch's F.layer_norm / F.rms_norm for the norm comparison, known curves for the fits."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.config import DumpSpec
from engine.dumps.dump import open_dump
from engine.dumps.norm_views import SAMPLE_POINTS, compare_norms, fit_tanh
from engine.dumps.report import report
from tests.dumps import dump_files as files


@pytest.fixture
def stream_report(tmp_path):
    x = files.stream(layers=5, batch=2, tokens=7, d=16)
    path = files.write_safetensors(tmp_path / "d.safetensors", {"hidden_states": x})
    return x.numpy(), report(path)


def test_massive_activations_follow_sun_et_al(stream_report):
    x, rep = stream_report
    magnitude = np.abs(x.reshape(5, -1))
    median = np.median(magnitude, axis=1)
    threshold = np.maximum(100.0, 1000.0 * median)
    np.testing.assert_allclose(rep.massive.median_abs, median, rtol=2.0**-8)
    found = set(zip(rep.massive.layer, rep.massive.batch, rep.massive.token, rep.massive.channel))
    layer, batch, token, channel = np.nonzero(np.abs(x) > threshold[:, None, None, None])
    assert found == set(zip(layer, batch, token, channel))
    assert found == {(layer, b, 0, 3) for layer in range(2, 5) for b in range(2)}
    np.testing.assert_array_equal(rep.massive.count, [0, 0, 2, 2, 2])
    top3 = -np.sort(-magnitude, axis=1)[:, :3]
    np.testing.assert_allclose(rep.massive.top3, top3, rtol=1e-7)
    np.testing.assert_allclose(rep.massive.top3_ratio, top3 / rep.massive.median_abs[:, None])


def test_residual_rms_per_token_and_layer(stream_report):
    x, rep = stream_report
    rms = np.sqrt((x**2).mean(-1))  # [L, B, T]
    np.testing.assert_allclose(rep.residual.rms, rms, rtol=1e-6)
    np.testing.assert_allclose(
        rep.residual.rms_layer, np.sqrt((x**2).mean(axis=(1, 2, 3))), rtol=1e-6
    )
    np.testing.assert_allclose(
        rep.residual.rms_median_token, np.median(rms.reshape(5, -1), 1), rtol=1e-6
    )
    np.testing.assert_allclose(rep.residual.rms_first_token, np.median(rms[:, :, 0], 1), rtol=1e-6)


def test_first_token_is_the_outlier(stream_report):
    _, rep = stream_report
    res = rep.residual
    assert set(zip(res.outlier_batch, res.outlier_token)) == {(0, 0), (1, 0)}
    assert set(res.outlier_first_layer) == {2}
    assert set(res.outlier_layers) == {3}


def test_growth_fit_recovers_a_geometric_stream(tmp_path):
    generator = torch.Generator().manual_seed(3)
    z = torch.randn(1, 9, 32, generator=generator, dtype=torch.float64)
    x = torch.stack([1.3**layer * z for layer in range(8)])  # [L, B, T, d]
    rep = report(files.write_npy(tmp_path / "g.npy", x.numpy()))
    for fit in rep.residual.growth:
        assert fit.rate == pytest.approx(1.3, rel=1e-9) and fit.r2 == pytest.approx(1.0)
    np.testing.assert_allclose(rep.residual.step_ratio[1:], 1.3, rtol=1e-9)


def test_centering_share_is_mu_squared_over_rms_squared(stream_report):
    x, rep = stream_report
    mean, ms = x.mean(-1), (x**2).mean(-1)
    want = (mean**2).reshape(5, -1).sum(1) / ms.reshape(5, -1).sum(1)
    np.testing.assert_allclose(rep.centering.mu2_share, want, rtol=1e-6)
    np.testing.assert_allclose(rep.centering.token_std, x.std(-1), rtol=1e-5)


def test_layernorm_vs_rmsnorm_on_chosen_tokens_match_torch(stream_report):
    x, rep = stream_report
    com = rep.comparison
    assert com.reasons[0] == "first_token" and (com.batch[0], com.token[0]) == (0, 0)
    for layer in range(5):
        tokens = torch.from_numpy(x[layer][com.batch, com.token]).double()  # [k, d]
        ln = F.layer_norm(tokens, (16,), eps=1e-5)
        rms = F.rms_norm(tokens, (16,), eps=1e-5)
        want = (ln - rms).pow(2).mean(-1).sqrt().numpy()
        np.testing.assert_allclose(com.difference_rms[layer], want, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(
            com.cosine[layer], F.cosine_similarity(ln, rms).numpy(), rtol=1e-9
        )


def test_compare_norms_returns_both_outputs(tmp_path):
    x = files.stream()
    dump = open_dump(files.write_pt(tmp_path / "d.pt", list(x.unbind(0))))
    norms = compare_norms(dump, layer=3, rows=[0, 9], eps=1e-6)
    tokens = x[3].reshape(-1, 16)[[0, 9]].double()
    np.testing.assert_allclose(norms.layernorm, F.layer_norm(tokens, (16,), eps=1e-6), rtol=1e-9)
    np.testing.assert_allclose(norms.rmsnorm, F.rms_norm(tokens, (16,), eps=1e-6), rtol=1e-9)


def test_channel_view_flags_the_massive_channel(stream_report):
    x, rep = stream_report
    flat = x.reshape(5, -1, 16)
    np.testing.assert_allclose(rep.channels.mean, flat.mean(1), rtol=1e-6, atol=1e-6)  # fp32 sums
    np.testing.assert_allclose(rep.channels.std, flat.std(1), rtol=1e-6)
    assert set(zip(rep.channels.outlier_layer, rep.channels.outlier_channel)) == {
        (layer, 3) for layer in range(2, 5)
    }


def test_fit_tanh_recovers_alpha_and_gamma():
    x = np.linspace(-20, 20, 4001)
    y = 1.7 * np.tanh(0.3 * x) + 0.001 * np.sin(37 * x)
    alpha, gamma, r2 = fit_tanh(x, y)
    assert alpha == pytest.approx(0.3, rel=1e-3) and gamma == pytest.approx(1.7, rel=1e-3)
    assert r2 > 0.9999


def test_dyt_fit_through_a_dump_removes_the_weight(tmp_path):
    """A norm whose output is weight · 2·tanh(0.5·x): the fit divides the weight back out."""
    x = files.stream(layers=3) * 3
    weight = torch.linspace(0.5, 1.5, 16, dtype=torch.float32)
    tensors = {}
    for i in range(3):
        tensors[f"model.layers.{i}.input_layernorm.input"] = x[i]
        tensors[f"model.layers.{i}.input_layernorm.output"] = weight * 2.0 * torch.tanh(0.5 * x[i])
        tensors[f"model.layers.{i}.input_layernorm.weight"] = weight
    rep = report(files.write_safetensors(tmp_path / "dyt.safetensors", tensors))
    assert [fit.label for fit in rep.dyt] == [f"model.layers.{i}.input_layernorm" for i in range(3)]
    for fit in rep.dyt:
        assert fit.affine_removed
        assert fit.alpha == pytest.approx(0.5, rel=1e-4) and fit.gamma == pytest.approx(
            2.0, rel=1e-4
        )
        assert fit.x.shape == fit.y.shape and 0 < fit.x.shape[0] <= 2000


def test_an_rmsnorms_tokens_of_far_larger_scale_are_the_flat_band(tmp_path):
    """RMSNorm divides each token by its RMS: two tokens holding a value of 2,500 lie along
    lines about 100 times flatter than the rest's, which no one tanh follows together; the
    fit names them, how much flatter they are (least squares by hand), and fits the others
    alone (there, x / RMS is one line: r² near 1)."""
    x = files.stream(layers=3, batch=2, tokens=7, d=64).double()[2]  # [B, T, d]: token 0 massive
    y = x / x.pow(2).mean(-1, keepdim=True).sqrt()  # RMSNorm, no weight
    tensors = {
        "model.layers.2.input_layernorm.input": x.float(),
        "model.layers.2.input_layernorm.output": y.float(),
    }
    (fit,) = report(files.write_safetensors(tmp_path / "flat.safetensors", tensors)).dyt
    rows = x.reshape(-1, 64).float().double()  # [B·T, d] as stored
    out = y.reshape(-1, 64).float().double()
    dx, dy = rows - rows.mean(-1, keepdim=True), out - out.mean(-1, keepdim=True)
    slope = ((dx * dy).sum(-1) / (dx * dx).sum(-1)).numpy()  # [14]
    band = fit.flat
    assert band.tokens == 2 and band.read == 14
    assert band.factor == pytest.approx(np.median(slope) / slope[[0, 7]].max(), rel=1e-9)
    assert band.factor > 50 and band.largest == 2500.0
    assert band.scale == "rms"
    assert band.median_scale == pytest.approx(np.median(rows.pow(2).mean(-1).sqrt()), rel=1e-12)
    assert fit.r2 < 0.9 and band.r2_rest > 0.99


def test_a_layernorms_flat_band_is_told_by_sigma_and_unrelated_outputs_by_no_scale(tmp_path):
    """LayerNorm divides by σ: tokens of a common large mean and a few of far larger σ are
    set apart by σ, not by their RMS (every token's RMS is near the mean).  An output that is
    noise, unrelated to its input, has tokens of flat slope too, but no larger scale."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((14, 64)) + 100.0  # [T, d]: RMS ≈ 100 for every token
    x[[0, 7]] = (x[[0, 7]] - 100.0) * 50 + 100.0  # two tokens of σ ≈ 50
    y = (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True)  # LayerNorm, no weight
    noise = rng.standard_normal((14, 64))
    for name, out, scale in (("ln", y, "sigma"), ("noise", noise, None)):
        tensors = {
            "model.layers.0.input_layernorm.input": torch.tensor(x, dtype=torch.float32),
            "model.layers.0.input_layernorm.output": torch.tensor(out, dtype=torch.float32),
        }
        (fit,) = report(files.write_safetensors(tmp_path / f"{name}.safetensors", tensors)).dyt
        if scale is None:
            assert fit.flat is None or fit.flat.scale is None, name
        else:
            assert fit.flat.tokens == 2 and fit.flat.scale == scale, name
            assert fit.flat.largest_scale > 40 and fit.flat.median_scale < 1.5


def test_tokens_of_one_scale_make_no_flat_band(tmp_path):
    x = files.stream(layers=1, batch=2, tokens=7, d=64)[0] * 3  # no massive value on layer 0
    tensors = {
        "model.layers.0.input_layernorm.input": x,
        "model.layers.0.input_layernorm.output": x / x.pow(2).mean(-1, keepdim=True).sqrt(),
    }
    (fit,) = report(files.write_safetensors(tmp_path / "plain.safetensors", tensors)).dyt
    assert fit.flat is None and fit.r2 > 0.99


def test_transformer_lens_norm_pairs_are_fitted(tmp_path):
    x = files.stream()
    rep = report(files.write_safetensors(tmp_path / "tl.safetensors", files.tl_names(x)))
    assert len(rep.dyt) == 9 and not any(fit.affine_removed for fit in rep.dyt)
    assert all(np.isfinite(fit.alpha) and fit.points > 0 for fit in rep.dyt)
    assert len(rep.labels) == 5


def test_nonfinite_values_are_reported_not_dropped(tmp_path):
    x = files.stream()
    x[1, 0, 2, 4] = float("nan")
    x[4, 1, 6, :2] = float("-inf")
    rep = report(files.write_safetensors(tmp_path / "d.safetensors", {"h": x}))
    np.testing.assert_array_equal(rep.stats.nonfinite.sum(axis=0), [1, 0, 2])
    assert rep.stats.row_finite[1, 0, 2] == 15 and rep.stats.row_finite[4, 1, 6] == 14
    clean = x[1, 0, 2].double().numpy()
    clean = clean[np.isfinite(clean)]
    assert rep.residual.rms[1, 0, 2] == pytest.approx(np.sqrt((clean**2).mean()), rel=1e-6)


def test_thresholds_come_from_the_spec(tmp_path):
    x = files.stream()
    path = files.write_safetensors(tmp_path / "d.safetensors", {"h": x})
    rep = report(path, DumpSpec(massive_abs=5000.0))
    assert rep.massive.layer.size == 0 and rep.massive.count.sum() == 0


def test_thresholds_judged_on_a_read_report_equal_a_report_read_with_them(tmp_path):
    x = files.stream(layers=5, batch=2, tokens=9, d=16)
    x[3, 1, 4] *= 8.0  # an outlier token at layer 3
    path = files.write_safetensors(tmp_path / "d.safetensors", {"h": x})
    strict = DumpSpec(massive_abs=20.0, massive_ratio=2.0, outlier_ratio=1.1)
    read_once = report(path)
    judged_later = read_once.judged(strict)
    direct = report(path, strict)
    assert judged_later.spec == strict and judged_later.stats is read_once.stats
    for part in ("residual", "massive", "channels"):
        for field in dataclasses.fields(getattr(direct, part)):
            want, got = (
                getattr(getattr(direct, part), field.name),
                getattr(getattr(judged_later, part), field.name),
            )
            pairs = [(got, want, field.name)]
            if dataclasses.is_dataclass(want):  # the massive activations' carriers
                pairs = [
                    (getattr(got, f.name), getattr(want, f.name), f.name)
                    for f in dataclasses.fields(want)
                ]
            for got_part, want_part, name in pairs:
                np.testing.assert_array_equal(
                    np.asarray(got_part), np.asarray(want_part), err_msg=name
                )
    assert judged_later.massive.layer.size > read_once.massive.layer.size
    assert judged_later.residual.outlier_token.size > read_once.residual.outlier_token.size
    with pytest.raises(ValueError):
        read_once.judged(DumpSpec(axes="LBTd"))  # not a threshold: read again


def test_progress_reaches_one_and_cancel_stops(tmp_path):
    from engine.threads import Cancelled

    path = files.write_safetensors(tmp_path / "d.safetensors", {"h": files.stream()})
    seen = []
    report(path, progress=seen.append)
    assert seen[-1] == 1.0 and seen == sorted(seen)
    with pytest.raises(Cancelled):
        report(path, should_stop=lambda: True)


def test_dyt_fit_reads_the_bulk_and_counts_the_outliers_apart(tmp_path):
    """A DyT norm with a few inputs 10,000 times the rest (as SmolLM2's massive activations):
    the fit recovers the bulk's curve, the outliers are counted and returned, largest first,
    and r² over every value says how badly they sit on that curve."""
    x = files.stream(layers=1) * 3  # [1, B, T, 16]
    x[0, 0, 0, 5] = 30_000.0
    x[0, 1, 0, 5] = -20_000.0
    y = 2.0 * torch.tanh(0.5 * x[0])
    y[0, 0, 5] = 900.0  # the outliers' outputs are off the curve (a per-token scale)
    y[1, 0, 5] = -600.0
    tensors = {
        "model.layers.0.input_layernorm.input": x[0],
        "model.layers.0.input_layernorm.output": y,
    }
    (fit,) = report(files.write_safetensors(tmp_path / "dyt.safetensors", tensors)).dyt
    assert fit.outliers == 2 and list(fit.outlier_x) == [30_000.0, -20_000.0]
    assert list(fit.outlier_y) == [900.0, -600.0]
    assert fit.bulk_limit < 20_000 and np.abs(fit.x).max() <= fit.bulk_limit
    assert fit.alpha == pytest.approx(0.5, rel=1e-4) and fit.r2 > 0.9999
    assert fit.r2_all < 0.5


def test_dyt_fit_finds_an_outlier_in_an_odd_channel_of_a_wide_dump(tmp_path):
    """More values than the fit takes (64 tokens × 576 channels): the fit's sample is drawn
    from every channel, and the outliers are looked for in every value read — SmolLM2's
    massive activation sits in channel 507, which a stride of 2 over the rows never read."""
    x = files.stream(layers=1, batch=1, tokens=64, d=576)[0] * 3  # [1, 64, 576]
    x[0, 0, 507] = 26_000.0
    y = 2.0 * torch.tanh(0.5 * x)
    tensors = {
        "model.layers.0.input_layernorm.input": x,
        "model.layers.0.input_layernorm.output": y,
    }
    (fit,) = report(files.write_safetensors(tmp_path / "wide.safetensors", tensors)).dyt
    assert fit.outliers == 1 and list(fit.outlier_x) == [26_000.0]
    assert fit.points == SAMPLE_POINTS < x.numel() - 1  # a sample of the bulk was fitted
    assert fit.alpha == pytest.approx(0.5, rel=1e-4) and fit.r2 > 0.9999


def test_dyt_fit_without_outliers_keeps_every_value(tmp_path):
    x = files.stream(layers=1) * 3
    tensors = {
        "model.layers.0.input_layernorm.input": x[0],
        "model.layers.0.input_layernorm.output": 2.0 * torch.tanh(0.5 * x[0]),
    }
    (fit,) = report(files.write_safetensors(tmp_path / "dyt.safetensors", tensors)).dyt
    assert fit.outliers == 0 and fit.outlier_x.size == 0 and fit.points == x[0].numel()
    assert fit.r2_all == pytest.approx(fit.r2)


def test_the_massive_count_agrees_with_the_entries_listed_near_the_threshold(tmp_path):
    """100.2 is 100 on the histogram's bfloat16 grid: the count said 0 beside a table that
    listed three entries of the layer above |a| = 100."""
    x = torch.zeros(2, 1, 8, 16, dtype=torch.float32) + 0.01
    x[0, 0, 1, 3], x[0, 0, 2, 5], x[0, 0, 4, 7] = 100.2, 100.24, -100.1
    dump = files.write_npy(tmp_path / "border.npy", x.numpy())
    rep = report(str(dump), DumpSpec(massive_abs=100, massive_ratio=2))
    assert list(rep.massive.count) == [3, 0]
    assert int((rep.massive.layer == 0).sum()) == 3


def test_outlier_tables_cut_to_the_most_extreme_keep_their_total_and_say_it(tmp_path):
    """The bundled example flags 261 (layer, channel) pairs above 5x their layer's median
    channel RMS (numpy on its stream); the table lists the 200 most extreme, and the CLI's
    title said "(first 20 of 200)" as if 200 were all."""
    import io

    from engine.dumps.cli import print_report
    from engine.dumps.diagnostics import MAX_LISTED, outlier_channels
    from engine.dumps.example import EXAMPLE_DUMP

    ratio = np.ones((3, 400))
    ratio[1, :300] = 9.0  # 300 pairs flagged
    found = outlier_channels(ratio, 5.0)
    assert found["outlier_total"] == 300 and len(found["outlier_channel"]) == MAX_LISTED
    rep = report(EXAMPLE_DUMP)
    flagged = int((np.nan_to_num(rep.channels.ratio) > rep.spec.outlier_ratio).sum())
    assert rep.channels.outlier_total == flagged > MAX_LISTED == len(rep.channels.outlier_channel)
    printed = io.StringIO()
    print_report(rep, out=printed)
    assert f"the {MAX_LISTED} most extreme of {flagged:,}" in printed.getvalue()


def test_dyt_r2_is_taken_on_every_bulk_value_not_the_sample_fitted(tmp_path):
    """64 tokens × 576 values, noisy around 2·tanh(0.5x): the curve is fitted on a sample of
    SAMPLE_POINTS values, its r² said of "the rest" — every value of the bulk (numpy here)."""
    x = files.stream(layers=1, batch=1, tokens=64, d=576)[0] * 3  # [1, 64, 576]
    noise = torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    y = 2.0 * torch.tanh(0.5 * x) + 0.5 * noise
    tensors = {
        "model.layers.0.input_layernorm.input": x,
        "model.layers.0.input_layernorm.output": y,
    }
    (fit,) = report(files.write_safetensors(tmp_path / "noisy.safetensors", tensors)).dyt
    assert fit.outliers == 0 and fit.points == SAMPLE_POINTS < x.numel()
    xs, ys = x.double().flatten().numpy(), y.double().flatten().numpy()
    residual = ys - fit.gamma * np.tanh(fit.alpha * xs)
    every = 1 - (residual**2).sum() / ((ys - ys.mean()) ** 2).sum()
    assert fit.r2 == pytest.approx(every, abs=1e-12)
