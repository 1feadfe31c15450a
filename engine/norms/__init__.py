"""Every normalization kind: the reference formulas, the dispatch to a backend, worked examples.

- ``reference.py``  the readable formulas every other path is checked against
- ``dispatch.py``   ``normalize`` / ``fused_add_norm`` / ``masked_batch_norm``: picks torch or
  the Triton kernels
- ``kinds.py``      which axes of [B, T, d] each kind pools (one table, ``KIND_AXES``)
- ``worked.py``     the Vector Lab's step-by-step example of one row
- ``random_inputs.py`` reproducible example inputs
- ``precision.py``  the float16/bfloat16 story: every real way to compute a row norm in half
  precision (``precision_paths.py``), where each breaks, presets (``precision_presets.py``)
  and the format facts a page states (``precision_facts.py``)

Importing the package imports none of them: ``engine.config`` reads ``kinds`` (pure data)
while ``dispatch`` needs ``engine.config``.  ``normalize`` is re-exported by ``engine``.
"""
