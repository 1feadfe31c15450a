"""The depth simulator's memory budget: the prediction from the spec bounds what a run holds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.config import DepthSpec
from engine.depth.limits import JOB_MEMORY_BYTES, check_limits, peak_bytes, weight_elements
from engine.errors import EngineError

ROOT = Path(__file__).resolve().parents[2]

# Runs simulate_depth in a fresh interpreter and prints how much its peak RSS grew.
PEAK_SCRIPT = """
import json, resource, sys
sys.path.insert(0, {root!r})
import torch
from engine.config import DepthSpec
from engine.depth.simulator import simulate_depth
spec = DepthSpec(**json.loads(sys.argv[1]))
simulate_depth(DepthSpec(layers=1, d=8, tokens=2), threads=1)  # autograd's first-call buffers
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
simulate_depth(spec, threads=1)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(after - before)
"""


def _measured_peak_growth(spec: dict) -> int:
    script = PEAK_SCRIPT.format(root=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


def test_a_configuration_over_the_memory_budget_is_refused_before_any_work():
    spec = DepthSpec(sublayer="transformer", layers=1, d=4096)  # 10 d^2 weights: ~6 GiB
    assert peak_bytes(spec) > JOB_MEMORY_BYTES
    with pytest.raises(EngineError) as refused:
        check_limits(spec)
    assert refused.value.key == "depth.over_memory_budget"
    assert float(refused.value.params["budget"]) == pytest.approx(JOB_MEMORY_BYTES / 2**30, 0.01)


@pytest.mark.slow  # ~10 s: one simulation of ~1.3 GiB predicted peak in a fresh interpreter
def test_the_heaviest_accepted_weights_stay_within_the_budget_and_the_prediction():
    spec = {"placement": "pre", "sublayer": "mlp", "layers": 8, "d": 2048, "tokens": 64}
    check_limits(DepthSpec(**spec))  # accepted
    predicted = peak_bytes(DepthSpec(**spec))
    assert predicted > 0.8 * JOB_MEMORY_BYTES  # close to the budget: a real test of it
    measured = _measured_peak_growth(spec)
    assert measured <= predicted <= JOB_MEMORY_BYTES


def test_weights_are_counted_per_sublayer():
    assert weight_elements(DepthSpec(sublayer="transformer", layers=3, d=16)) == 3 * 16 * 16 * 10
