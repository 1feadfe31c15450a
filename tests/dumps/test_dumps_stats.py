"""The streaming pass against numpy in float64 on the whole array.

Chunks and windows are shrunk so that a small dump crosses many of both (rows split across
windows, layers split across shards), which is where a merge would go wrong.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from engine.config import DumpSpec
from engine.dumps.dump import open_dump
from engine.dumps.partials import LARGE_CAP, merge
from engine.dumps.reduce import make_units, reduce_stream, reduce_unit
from engine.dumps.stats import finalize
from tests.dumps import dump_files as files


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr("engine.dumps.chunks.CHUNK_VALUES", 100)  # 4 rows of d=24
    monkeypatch.setattr("engine.dumps.reduce.WINDOW_BYTES", 24 * 4 * 11)  # 11 float32 rows


def _dirty_stream(dtype) -> torch.Tensor:
    x = files.stream(layers=4, batch=3, tokens=37, d=24, dtype=torch.float64)
    x[1, 2, 5, 7] = float("nan")
    x[1, 0, 36, :3] = float("inf")
    x[3, 1, 2, 0] = float("-inf")
    x[2, 1, 9, 11] = -4000.0
    return x.to(dtype)


def _oracle(x: np.ndarray) -> dict:
    """Per-layer statistics of [L, B, T, d] in float64, NaN/inf left out."""
    finite = np.isfinite(x)
    clean = np.where(finite, x, 0.0)
    count = finite.sum(axis=-1)
    L, d = x.shape[0], x.shape[-1]
    flat = clean.reshape(L, -1, d)
    fin = finite.reshape(L, -1, d)
    ch_count = fin.sum(axis=1)
    ch_mean = flat.sum(axis=1) / ch_count
    ch_var = (np.where(fin, flat - ch_mean[:, None], 0.0) ** 2).sum(axis=1) / ch_count
    return {
        "row_mean": clean.sum(-1) / count,
        "row_ms": (clean**2).sum(-1) / count,
        "row_maxabs": np.abs(clean).max(-1),
        "channel_mean": ch_mean,
        "channel_var": ch_var,
        "channel_maxabs": np.abs(flat).max(axis=1),
        "median_abs": np.array([np.median(np.abs(x[i][finite[i]])) for i in range(L)]),
        "nonfinite": np.stack(
            [
                np.isnan(x).reshape(L, -1).sum(1),
                (x == np.inf).reshape(L, -1).sum(1),
                (x == -np.inf).reshape(L, -1).sum(1),
            ],
            axis=1,
        ),
        "abs_sorted": -np.sort(-np.abs(flat).reshape(L, -1), axis=1),
    }


@pytest.mark.parametrize(
    "dtype, rtol",
    [(torch.float16, 1e-5), (torch.bfloat16, 1e-5), (torch.float32, 1e-5), (torch.float64, 1e-12)],
)
def test_streaming_statistics_equal_numpy_float64(tmp_path, dtype, rtol):
    x = _dirty_stream(dtype)
    path = files.write_safetensors(tmp_path / "d.safetensors", {"hidden_states": x})
    dump = open_dump(path)
    assert len(make_units(dump.layout)) > 3 * 4  # several windows per layer
    stats = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec(top_k=5)))
    want = _oracle(x.double().numpy())
    for name in ("row_mean", "row_ms", "row_maxabs", "channel_mean", "channel_var"):
        np.testing.assert_allclose(
            getattr(stats, name), want[name], rtol=rtol, atol=1e-9, err_msg=name
        )
    np.testing.assert_allclose(stats.channel_maxabs, want["channel_maxabs"], rtol=1e-7)
    np.testing.assert_array_equal(stats.nonfinite, want["nonfinite"])
    assert stats.row_finite.sum() == np.isfinite(x.double().numpy()).sum()
    np.testing.assert_allclose(np.abs(stats.top_values), want["abs_sorted"][:, :5], rtol=1e-7)
    # float16 is histogrammed by its own bits: the median is exact; others on bfloat16's grid
    median_rtol = 0.0 if dtype == torch.float16 else 2.0**-8
    np.testing.assert_allclose(stats.median_abs, want["median_abs"], rtol=median_rtol)


def test_top_entries_carry_their_position(tmp_path):
    x = _dirty_stream(torch.float32)
    path = files.write_safetensors(tmp_path / "d.safetensors", {"h": x})
    dump = open_dump(path)
    stats = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec(top_k=4)))
    tokens = 37
    for layer, value, row, channel in zip(
        stats.large_layer, stats.large_values, stats.large_rows, stats.large_channels
    ):
        assert x[layer, row // tokens, row % tokens, channel].item() == value
    first = np.flatnonzero(stats.large_layer == 2)[0]  # the largest |a| of layer 2
    assert (stats.large_values[first], stats.large_rows[first], stats.large_channels[first]) == (
        -4000.0,
        1 * tokens + 9,
        11,
    )


def test_large_entries_are_counted_exactly_and_the_largest_listed(tmp_path):
    x = files.stream(layers=3, batch=2, tokens=9, d=24)
    x[1, :, :, 5] = 300.0  # every token of layer 1 in channel 5: 18 entries
    path = files.write_npy(tmp_path / "d.npy", x.numpy())
    dump = open_dump(path)
    stats = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec()))
    want = (np.abs(x.numpy()) > 100).reshape(3, -1).sum(1)  # 2500 and 300 sit on the grid
    assert [m.count_above(100.0) for m in stats.magnitudes] == want.tolist()
    for layer in range(3):  # the LARGE_CAP largest |a| of each layer, whatever the threshold
        listed = np.sort(np.abs(stats.large_values[stats.large_layer == layer]))[::-1]
        expected = np.sort(np.abs(x[layer].double().numpy()).ravel())[::-1][:LARGE_CAP]
        np.testing.assert_array_equal(listed, expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_an_infinity_is_never_counted_as_a_large_finite_value(tmp_path, dtype):
    """±inf is left out of the magnitudes (as the page says), not clamped into the largest
    finite bin: no massive count of 1 beside an empty list, no median pulled up."""
    x = _dirty_stream(dtype)
    x[2, 0, :20, :] = float("inf")  # 480 of layer 2's 2,664 entries
    path = files.write_safetensors(tmp_path / "d.safetensors", {"h": x})
    dump = open_dump(path)
    stats = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec()))
    values = np.abs(x.double().numpy()).reshape(4, -1)
    finite = np.isfinite(values)
    want = [int((row[ok] > 100).sum()) for row, ok in zip(values, finite)]
    assert [m.count_above(100.0) for m in stats.magnitudes] == want
    median = [np.median(row[ok]) for row, ok in zip(values, finite)]
    np.testing.assert_allclose(stats.median_abs, median, rtol=2.0**-8)


def test_nonfinite_tokens_are_named(tmp_path):
    x = _dirty_stream(torch.float32)
    dump = open_dump(files.write_pt(tmp_path / "d.pt", {"h": x}))
    stats = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec()))
    assert set(stats.nonfinite_rows) == {(1, 2 * 37 + 5), (1, 0 * 37 + 36), (3, 1 * 37 + 2)}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_what_holds_no_finite_value_has_no_maximum_mean_or_largest_entry(tmp_path, dtype):
    """A token, a channel and a whole layer of NaN/inf: their max |a|, mean and spread are
    NaN (as numpy's nan-aware reductions say), never 0, and the layer of them lists no
    largest entry (it listed zeros).  The other tokens and channels are untouched."""
    x = _dirty_stream(torch.float64)
    x[0, 1, 4, :] = float("inf")  # a token
    x[2, :, :, 6] = float("nan")  # a channel
    x[3] = float("-inf")  # a layer
    x = x.to(dtype)
    dump = open_dump(files.write_safetensors(tmp_path / "d.safetensors", {"h": x}))
    stats = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec()))
    a = x.double().numpy()
    clean = np.where(np.isfinite(a), a, np.nan)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        want_token = np.nanmax(np.abs(clean), axis=-1)  # [L, B, T]
        want_channel = np.nanmax(np.abs(clean.reshape(4, -1, 24)), axis=1)  # [L, d]
        want_mean = np.nanmean(clean.reshape(4, -1, 24), axis=1)
        want_var = np.nanvar(clean.reshape(4, -1, 24), axis=1)
    assert np.isnan(stats.row_maxabs[0, 1, 4]) and np.isnan(stats.row_maxabs[3]).all()
    np.testing.assert_allclose(stats.row_maxabs, want_token, rtol=1e-6)
    np.testing.assert_allclose(stats.channel_maxabs, want_channel, rtol=1e-6)
    np.testing.assert_allclose(stats.channel_mean, want_mean, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(stats.channel_var, want_var, rtol=1e-5)
    assert np.isnan(stats.channel_mean[2, 6]) and np.isnan(stats.channel_var[3]).all()
    assert not (stats.large_layer == 3).any() and np.isnan(stats.top_values[3]).all()
    listed = np.sort(np.abs(stats.large_values[stats.large_layer == 0]))[::-1]
    expected = np.sort(np.abs(a[0][np.isfinite(a[0])]))[::-1][: listed.size]
    np.testing.assert_array_equal(listed, expected)


def test_merge_is_associative_and_order_free(tmp_path):
    """Partials of the same rows merged in any grouping and order give one answer."""
    x = _dirty_stream(torch.float32)
    dump = open_dump(files.write_safetensors(tmp_path / "d.safetensors", {"h": x}))
    spec = DumpSpec(top_k=6)
    units = [u for u in make_units(dump.layout) if u.layer == 1]
    partials = [reduce_unit(unit, spec) for unit in units]
    assert len(partials) >= 4
    results = []
    for order in itertools.islice(itertools.permutations(range(len(partials))), 0, 24, 5):
        left = partials[order[0]]
        for index in order[1:]:
            left = merge(left, partials[index])
        results.append(left)
    tree = merge(merge(partials[0], partials[1]), merge(partials[2], _fold(partials[3:])))
    results.append(tree)
    first = results[0]
    for other in results[1:]:
        np.testing.assert_allclose(other.mean, first.mean, rtol=1e-12)
        np.testing.assert_allclose(other.m2, first.m2, rtol=1e-12)
        np.testing.assert_array_equal(other.magnitudes.dense(), first.magnitudes.dense())
        np.testing.assert_array_equal(other.top.values, first.top.values)
        np.testing.assert_array_equal(other.top.rows, first.top.rows)
        assert [b.start for b in other.blocks] == sorted(b.start for b in first.blocks)


def _fold(partials):
    result = partials[0]
    for partial in partials[1:]:
        result = merge(result, partial)
    return result


def test_chan_merge_keeps_a_large_mean_accurate(tmp_path):
    """Channels with mean 1e4 and spread 1e-2: Σx² − n·mean² would lose every digit in
    float32; the chunked two-pass + Chan merge keeps the variance."""
    generator = torch.Generator().manual_seed(1)
    x = 1e4 + 1e-2 * torch.randn(2, 1, 64, 24, generator=generator, dtype=torch.float64)
    dump = open_dump(files.write_npy(tmp_path / "m.npy", x.numpy()))
    stats = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec()))
    want = x.reshape(2, -1, 24).var(dim=1, unbiased=False).numpy()
    np.testing.assert_allclose(stats.channel_var, want, rtol=1e-9)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_tokens_spread_beside_a_large_mean_keeps_its_digits(tmp_path, dtype):
    """Tokens 100 + 0.01·z: σ² = RMS² − μ² from float32 sums gave σ = 0.033 or 0 for 0.010;
    each row's own deviations keep it (its NaN-holding rows too)."""
    generator = torch.Generator().manual_seed(2)
    x = 100 + 1e-2 * torch.randn(2, 3, 5, 256, generator=generator, dtype=torch.float64)
    x[1, 2, 4, 7] = float("nan")  # a row reduced by the masked path
    dump = open_dump(files.write_npy(tmp_path / "o.npy", x.to(dtype).numpy()))
    stats = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec()))
    stored = x.to(dtype).double().numpy()
    want = np.nanvar(stored, axis=-1)  # [L, B, T], over each token's finite values
    np.testing.assert_allclose(stats.row_var, want, rtol=1e-4 if dtype == torch.float32 else 1e-9)


def test_workers_split_windows_to_the_same_result(tmp_path):
    x = _dirty_stream(torch.float16)
    dump = open_dump(files.write_safetensors(tmp_path / "d.safetensors", {"h": x}))
    one = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec()))
    two = finalize(dump.layout, reduce_stream(dump.layout, DumpSpec(), workers=2))
    np.testing.assert_allclose(two.channel_var, one.channel_var, rtol=1e-6)
    np.testing.assert_allclose(two.row_ms, one.row_ms, rtol=1e-6)
    for mine, theirs in zip(two.magnitudes, one.magnitudes):
        np.testing.assert_array_equal(mine.dense(), theirs.dense())
    np.testing.assert_array_equal(two.top_values, one.top_values)


def test_a_layers_histogram_keeps_only_its_occupied_bins_and_answers_as_the_dense_one():
    """A layer's 32,768 int64 counts (256 KiB) were kept for every layer; a million float32
    values occupy a few thousand bins of the bfloat16 grid, and the median and the count
    above a threshold read from those bins alone."""
    from engine.dumps.chunks import reduce_window
    from engine.dumps.partials import HIST_BINS, grid_values

    generator = torch.Generator().manual_seed(0)
    window = torch.randn(1024, 1024, generator=generator) * 3.0  # [rows, d]
    magnitudes = reduce_window(window, 0, 0, 16, "bfloat16").magnitudes
    assert magnitudes.bins.size < 4000 and magnitudes.counts.sum() == window.numel()
    dense = magnitudes.dense()
    assert dense.shape == (HIST_BINS,) and dense.sum() == window.numel()
    values = grid_values("bfloat16")
    want_above = int(dense[:0x7F80][values[:0x7F80] > 5.0].sum())
    assert magnitudes.count_above(5.0) == want_above
    exact = float(window.abs().median())
    assert magnitudes.median() == pytest.approx(exact, rel=4e-3)  # 8 significant bits


def test_opening_shards_stops_between_files_when_asked(tmp_path):
    from engine.threads import Cancelled

    x = files.stream(layers=3, batch=2, tokens=4, d=8)
    for part in range(2):
        files.write_safetensors(
            tmp_path / f"part-{part}.safetensors", files.hf_names(x[:, part : part + 1])
        )
    asked = []
    with pytest.raises(Cancelled):
        open_dump(tmp_path, should_stop=lambda: asked.append(1) or len(asked) > 1)
    assert len(asked) == 2  # the first file scanned, then stopped before the second


def test_a_windows_largest_entries_among_ties_are_the_first_by_row_and_channel():
    """Taken whole, a window of zeros made every one of its entries a candidate (1.3 GB at
    d = 65,536); the ties that fill k are the first by (row, channel), as before."""
    from engine.dumps.chunks import _top_entries

    zeros = torch.zeros(6, 1000)
    maxabs = np.zeros(6)
    top = _top_entries(zeros, maxabs, 4, first_row=10)
    assert list(top.rows) == [10] * 4 and list(top.channels) == [0, 1, 2, 3]
    x = torch.tensor([[0.0, 5.0, 5.0, 1.0], [5.0, 0.0, 9.0, 5.0], [5.0, 5.0, 0.0, 0.0]])
    top = _top_entries(x, x.abs().amax(-1).double().numpy(), 3, first_row=0)
    # 9 first, then the 5s by (row, channel): (0, 1), (0, 2)
    assert list(zip(top.rows, top.channels, top.values)) == [(1, 2, 9.0), (0, 1, 5.0), (0, 2, 5.0)]
