"""engine.perf.timing: LayerNorm-vs-RMSNorm timing rows."""

from __future__ import annotations

import pytest

from engine.perf.timing import rms_over_ln, time_norms


def test_time_norms_returns_one_plain_row_per_kind_pass_and_width():
    rows = time_norms(rows=8, widths=(16, 48), dtype="float32", min_sample_s=0.0, repeats=2)
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
        "min_us",
        "gbps",
    }
    for row in rows:
        assert set(row) == keys
        assert row["provider"] == "torch" and row["device"] == "CPU"
        assert 0 < row["min_us"] <= row["median_us"]
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
    )
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


def test_rms_over_ln_divides_matching_rows():
    timings = [
        {"kind": "layernorm", "pass": "forward", "rows": 4, "width": 8, "median_us": 10.0},
        {"kind": "rmsnorm", "pass": "forward", "rows": 4, "width": 8, "median_us": 6.7},
        {"kind": "layernorm", "pass": "forward+backward", "rows": 4, "width": 8, "median_us": 30.0},
    ]
    assert rms_over_ln(timings) == [
        {"rows": 4, "width": 8, "pass": "forward", "ratio": pytest.approx(0.67)}
    ]
