"""Which cells of ``[B, T, d]`` share statistics under each norm, and BatchNorm's failures.

The table of which axes each kind pools is ``engine/norms/kinds.py``; the configuration is
``engine.config.AxesSpec``.  The package re-exports nothing: import the module that defines
a name.
"""
