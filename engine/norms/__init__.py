"""Every normalization kind: the reference formulas, the dispatch to a backend, worked examples.

Importing the package imports none of its modules: ``engine.config`` reads ``kinds`` (pure data)
while ``dispatch`` needs ``engine.config``.  ``normalize`` is re-exported by ``engine``.
"""
