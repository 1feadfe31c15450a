"""The Vector Lab's jobs: the worked example, each kind's default ε, a dtype's facts."""

from __future__ import annotations

from dataclasses import replace

from ui.compute import Job


def vector_explanation(config, compute_dtype: str | None = None) -> Job:
    """The Vector Lab's worked example (milliseconds: computed inline)."""
    from engine.norms.worked import explain_vectors

    spec = (
        config.spec if compute_dtype is None else replace(config.spec, compute_dtype=compute_dtype)
    )

    def run(report, should_stop):
        return explain_vectors(
            config.rows, spec, config.input_dtype, config.weight, config.bias, config.row_index
        )

    return Job("vector_lab.explain", (config, spec), run, max_entries=256)


def default_eps() -> Job:
    """Each API's real default epsilon, per storage dtype (engine.norms.precision_facts)."""
    from engine.config import STORAGE_DTYPES
    from engine.norms.precision_facts import default_eps_table

    def run(report, should_stop):
        return {dtype: default_eps_table(dtype) for dtype in STORAGE_DTYPES}

    return Job("vector_lab.default_eps", (), run, max_entries=1)


def precision_facts(dtype: str) -> Job:
    """Resolution of ``dtype``; for half dtypes also where a square and a running sum break."""
    from engine.config import HALF_DTYPES
    from engine.norms.precision_facts import (
        resolution,
        running_sum_limit,
        square_overflow_threshold,
    )
    from ui.text.vector_lab_precision import DtypeFacts

    def run(report, should_stop):
        if dtype not in HALF_DTYPES:  # a float32 running sum takes 2^25 terms to stall
            return DtypeFacts(resolution(dtype), None, None)
        return DtypeFacts(
            resolution(dtype), square_overflow_threshold(dtype), running_sum_limit(1.0, dtype)
        )

    return Job("vector_lab.precision_facts", dtype, run, max_entries=8)
