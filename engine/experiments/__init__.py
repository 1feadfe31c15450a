"""Experiments on a real model: change one norm (or the numbers it sees) and measure what
breaks on a held-out text, against the unmodified model; one module per experiment.

Specs are in ``engine/config/experiments.py``.  Import from the modules; this package's
``__init__`` imports nothing, so ``engine.config`` can read ``refusals`` without a cycle.
"""
