"""Where normalized vectors land: the sqrt(d) sphere, the plane perpendicular to 1, and what
eps, gamma, beta and DyT's alpha do to them.  Pure computation: every result is a frozen
dataclass of read-only numpy arrays that a plotly figure can draw directly.

The package imports nothing itself: ``engine.norms.worked`` uses ``measures.py`` and must
not pull in the rest (which depends on ``engine.norms``).  Import from the modules.
"""
