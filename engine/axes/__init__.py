"""Which cells of ``[B, T, d]`` share statistics under each norm, and BatchNorm's failures.

- ``limits.py``       what the Axes engine refuses (and summarises), and its refusals
- ``sources.py``      tensors and padding masks: synthetic presets, sentences with padding
- ``sharing.py``      every cell's statistic, the pooled set of a clicked cell, the numbers
- ``padding.py``      failure 1: padding pollutes BatchNorm's statistics (LayerNorm: exact 0)
- ``small_batch.py``  failure 2: batch statistics' spread against 1/sqrt(b*T)
- ``train_eval.py``   failure 3: running statistics vs batch statistics, under drift
- ``batch_of_one.py`` failure 4: one value per channel — the seed's claim against the facts
- ``causal_leak.py``  failure 5: a later token changes earlier outputs under BatchNorm

The table of which axes each kind pools is ``engine/norms/kinds.py``.  The configuration is
``engine.config.AxesSpec``; ``engine/config/axes.py`` imports ``limits`` from here, so this
file imports nothing at load time and resolves the names below on first use (no import
cycle).  What each costs at the defaults: benchmarks/RESULTS.md ("The Axes engine").
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "AxesTensor": "sources",
    "make_tensor": "sources",
    "synthetic_tensor": "sources",
    "padded_sentences": "sources",
    "default_lengths": "sources",
    "AxesStatistics": "sharing",
    "CellSelection": "sharing",
    "axes_statistics": "sharing",
    "select_cell": "sharing",
    "pooled_mask": "sharing",
    "statistic_labels": "sharing",
    "PaddingPollution": "padding",
    "padding_pollution": "padding",
    "SmallBatchNoise": "small_batch",
    "small_batch_noise": "small_batch",
    "TrainEvalGap": "train_eval",
    "train_eval_gap": "train_eval",
    "train_eval_batches": "train_eval",
    "BatchOfOne": "batch_of_one",
    "batch_of_one": "batch_of_one",
    "CausalLeak": "causal_leak",
    "causal_leak": "causal_leak",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        module = importlib.import_module(f"engine.axes.{_EXPORTS[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'engine.axes' has no attribute {name!r}")
