"""Which cells of ``[B, T, d]`` share statistics under each norm, and BatchNorm's failures.

- ``limits.py``       what the Axes engine refuses (and summarises), and its refusals
- ``sources.py``      tensors and padding masks: synthetic presets, sentences with padding
- ``sharing.py``      every cell's statistic, the pooled set of a clicked cell, the numbers
- ``padding.py``      failure 1: padding pollutes BatchNorm's statistics (LayerNorm: exact 0)
- ``small_batch.py``  failure 2: batch statistics' spread against 1/sqrt(b*T)
- ``train_eval.py``   failure 3: running statistics vs batch statistics, under drift
- ``batch_of_one.py`` failure 4: one value per channel — the seed's claim against the facts
- ``causal_leak.py``  failure 5: a later token changes earlier outputs under BatchNorm

The table of which axes each kind pools is ``engine/norms/kinds.py``; the configuration is
``engine.config.AxesSpec``.  What each costs at the defaults: benchmarks/RESULTS.md ("The
Axes engine").  The package re-exports nothing: import the module that defines a name.
"""
