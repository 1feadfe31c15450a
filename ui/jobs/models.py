"""The Model catalog's jobs: a config's norm parameters and their memory traffic."""

from __future__ import annotations

from ui.compute import Job


def model_norm_budget(shape) -> Job:
    """Norm parameters of a model and their share (milliseconds: computed inline).

    ``share=False``: the shape may come from a config.json someone pasted, which is theirs.
    """
    from engine.models import norm_budget

    def run(report, should_stop):
        return norm_budget(shape)

    return Job("models.budget", shape, run, share=False, max_entries=16)


def model_norm_cost(shape, dtype: str | None, tokens: int) -> Job:
    """Bytes and FLOPs of a model's norms, and what fusing the adds saves (inline, private)."""
    from engine.models import norm_cost

    def run(report, should_stop):
        return norm_cost(shape, dtype, tokens)

    return Job("models.cost", (shape, dtype, tokens), run, share=False, max_entries=16)
