"""Where normalized vectors land: the sqrt(d) sphere, the plane perpendicular to 1, and what
eps, gamma, beta and DyT's alpha do to them.  Pure computation: every result is a frozen
dataclass of read-only numpy arrays that a plotly figure can draw directly.

- ``measures.py``        ||y||, <y, 1>, cos(x, y) over the last axis, in float64
- ``cloud.py``           the input cloud, x = mu 1 + (x - mu 1), LN / RMSNorm / DyT outputs
- ``scene.py``           cloud + meshes + ellipsoid in one call (what the 3-D scene draws)
- ``meshes.py``          sphere, plane, all-ones axis, LayerNorm circle, gamma/beta ellipsoid
- ``path.py``            one vector step by step: x, x - mu 1, y
- ``eps_curve.py``       ||y|| = sqrt(d) sigma / sqrt(sigma^2 + eps) against measured norms
- ``dyt_sweep.py``       DyT outputs as alpha varies
- ``two_dimensions.py``  d = 2: LayerNorm has only the outputs +-(1, -1)
- ``degenerate.py``      d = 1, constant and zero vectors: flags (sentences in locales/)
- ``high_dimension.py``  d up to 8192: histograms, their spread over eps, LN = RMSNorm(x - mu 1)
- ``views.py``           2-D views of a high-dimensional cloud (PCA, two axes, 1 and the plane)
- ``real_activations.py`` a dump's norm inputs and outputs (the shipped SmolLM2 example), measured
- ``arrays.py``          read-only numpy copies for results that are cached and shared

The package imports nothing itself: ``engine.norms.worked`` uses ``measures.py`` and must
not pull in the rest (which depends on ``engine.norms``).  Import from the modules.
"""
