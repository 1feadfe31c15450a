"""engine.perf.timing: LayerNorm-vs-RMSNorm timing rows."""

from __future__ import annotations

import re

import pytest

from engine.perf.timing import MAX_SPREAD, rms_over_ln, spread, time_norms


def test_time_norms_returns_one_plain_row_per_kind_pass_and_width_and_the_ratios():
    timed = time_norms(rows=8, widths=(16, 48), dtype="float32", min_sample_s=0.0, repeats=2)
    rows = timed.rows
    assert timed.ratios == rms_over_ln(rows) and len(timed.ratios) == 2 * 2  # widths x passes
    assert len(rows) == 2 * 2 * 2  # widths x passes x kinds
    keys = {
        "kind",
        "pass",
        "rows",
        "width",
        "dtype",
        "device",
        "provider",
        "median_us",
        "q1_us",
        "q3_us",
        "min_us",
        "gbps",
        "measured_at",
    }
    for row in rows:
        assert set(row) == keys
        assert row["provider"] == "torch" and row["device"] == "CPU"
        # a kept measurement is shown to later visitors: its day and its time zone say when
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", row["measured_at"])
        assert 0 < row["min_us"] <= row["q1_us"] <= row["median_us"] <= row["q3_us"]
        per_value = 2 if row["pass"] == "forward" else 5
        expected = per_value * 8 * row["width"] * 4 / (row["median_us"] * 1e-6) / 1e9
        assert row["gbps"] == pytest.approx(expected)
    assert {(r["kind"], r["pass"], r["width"]) for r in rows} == {
        (k, p, w)
        for k in ("layernorm", "rmsnorm")
        for p in ("forward", "forward+backward")
        for w in (16, 48)
    }


def test_time_norms_takes_half_precision_and_a_single_pass():
    rows = time_norms(
        rows=4, widths=(32,), dtype="bfloat16", passes=("forward",), repeats=1, min_sample_s=0.0
    ).rows
    assert [r["kind"] for r in rows] == ["layernorm", "rmsnorm"]
    assert all(r["dtype"] == "bfloat16" and r["pass"] == "forward" for r in rows)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(dtype="int8"), "dtype"),
        (dict(passes=("backward",)), "pass"),
        (dict(provider="triton"), "CUDA"),
        (dict(provider="cuda"), "provider"),
        (dict(rows=0), "rows"),
        (dict(widths=(0,)), "widths"),
    ],
)
def test_time_norms_rejects_bad_requests(kwargs, message):
    with pytest.raises(ValueError, match=message):
        time_norms(**{"widths": (8,), "repeats": 1, "min_sample_s": 0.0, **kwargs})


def _timing(kind, median, q1=None, q3=None, pass_="forward", width=8):
    """A synthetic row as ``time_norms`` returns it (no timing in tests)."""
    return {"kind": kind, "pass": pass_, "rows": 4, "width": width, "median_us": median,
            "q1_us": median if q1 is None else q1, "q3_us": median if q3 is None else q3}  # fmt: skip


def test_rms_over_ln_divides_matching_rows():
    timings = [
        _timing("layernorm", 10.0, 9.8, 10.2),
        _timing("rmsnorm", 6.7, 6.6, 6.8),
        _timing("layernorm", 30.0, pass_="forward+backward"),  # no RMSNorm row: no ratio
    ]
    assert rms_over_ln(timings) == [
        {
            "rows": 4,
            "width": 8,
            "pass": "forward",
            "ratio": pytest.approx(0.67),
            "verdict": "ranked",
        }  # fmt: skip
    ]


def test_spread_is_the_interquartile_range_over_the_median():
    assert spread(_timing("layernorm", 10.0, 9.0, 11.0)) == pytest.approx(0.2)
    assert spread(_timing("layernorm", 10.0)) == 0.0  # one sample (or do_bench's quartiles)


@pytest.mark.parametrize(
    "ln, rms, verdict",
    [
        ((10.0, 9.9, 10.1), (6.7, 6.6, 6.8), "ranked"),  # narrow and apart: a ratio
        ((10.0, 9.5, 10.5), (10.2, 9.8, 10.6), "tie"),  # narrow but overlapping: no rank
        ((10.0, 9.9, 10.1), (122.5, 20.0, 130.0), "busy"),  # one spread far over the limit
        ((10.0, 8.9, 11.1), (6.7, 6.6, 6.8), "busy"),  # 22 % > 20 %
    ],
)
def test_a_ratio_is_read_only_where_the_spreads_rank_the_norms(ln, rms, verdict):
    (row,) = rms_over_ln([_timing("layernorm", *ln), _timing("rmsnorm", *rms)])
    assert row["verdict"] == verdict
    assert MAX_SPREAD == 0.2


def test_a_sum_faster_than_its_part_means_the_machine_was_too_busy():
    """LayerNorm forward + backward measured faster than its forward alone: both passes at
    that width are "busy", however narrow each spread; another width is not affected."""
    timings = [
        _timing("layernorm", 50.0),
        _timing("rmsnorm", 30.0),
        _timing("layernorm", 40.0, pass_="forward+backward"),  # < 50: impossible when quiet
        _timing("rmsnorm", 90.0, pass_="forward+backward"),
        _timing("layernorm", 50.0, width=16),
        _timing("rmsnorm", 30.0, width=16),
    ]
    verdicts = {(r["width"], r["pass"]): r["verdict"] for r in rms_over_ln(timings)}
    assert verdicts == {
        (8, "forward"): "busy",
        (8, "forward+backward"): "busy",
        (16, "forward"): "ranked",
    }
