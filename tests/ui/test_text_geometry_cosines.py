"""Cosines near 1 and LayerNorm's exact σ/rms near 1 as the Geometry page writes them
(ui/text/geometry.py), against 50 digits (mpmath) on PyTorch's own float32 outputs: float64's
cosine moves in steps of 1.1×10⁻¹⁶ there, so the page writes each gap from 1 computed on its
own (engine.geometry.measures.cosine_gap, Cloud.sigma_over_rms_gap)."""

from __future__ import annotations

import mpmath
import pytest

from engine.config import GeometrySpec
from engine.geometry.cloud import normalized_cloud
from tests.plain_text import plain
from ui.formatting import format_power
from ui.text import geometry as text


@pytest.mark.parametrize("d", [2, 3])
def test_the_cosines_near_1_are_written_to_their_last_digit(d):
    """Near 1 float64's cosine moves in steps of 1.1×10⁻¹⁶: RMSNorm's 2-D cloud read "from
    1 − 7.8×10⁻¹⁶ to 1" where its gaps from 1, computed to 50 digits (mpmath) on PyTorch's own
    float32 outputs, run from 7.3×10⁻¹⁶ to 2.5×10⁻²³."""
    cloud = normalized_cloud(GeometrySpec(d=d))

    def gap(a, b) -> float:
        with mpmath.workdps(50):
            a, b = [mpmath.mpf(float(v)) for v in a], [mpmath.mpf(float(v)) for v in b]
            dot = mpmath.fsum(p * q for p, q in zip(a, b))
            norms = mpmath.sqrt(mpmath.fsum(p * p for p in a) * mpmath.fsum(q * q for q in b))
            return float(1 - dot / norms)

    gaps = [gap(x, y) for x, y in zip(cloud.inputs, cloud.rmsnorm.y)]
    ends = [f"1 − {format_power(g, 2)}" if g > 0 else "1" for g in (max(gaps), min(gaps))]
    lines = plain(" ".join(text.cloud_summary(cloud, ("rmsnorm",), "en")))
    assert f"cos(x, RMSNorm(x)) from {ends[0]} to {ends[1]}:" in lines


def test_sigma_over_rms_gap_is_1_minus_sigma_over_rms_to_its_last_digits():
    """1 − σ/rms of a cloud whose inputs have almost no mean (σ/rms within 10⁻¹² of 1),
    against 50 digits (mpmath) on the same float32 inputs."""
    cloud = normalized_cloud(GeometrySpec(d=3, count=50, shift=1e-6))
    for x, gap in zip(cloud.inputs, cloud.sigma_over_rms_gap):
        with mpmath.workdps(50):
            x = [mpmath.mpf(float(v)) for v in x]
            mean = mpmath.fsum(x) / len(x)
            sigma = mpmath.sqrt(mpmath.fsum((v - mean) ** 2 for v in x) / len(x))
            rms = mpmath.sqrt(mpmath.fsum(v * v for v in x) / len(x))
            exact = float(1 - sigma / rms)
        assert gap == pytest.approx(exact, rel=1e-12)
