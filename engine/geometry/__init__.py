"""Where normalized vectors land: norms, the all-ones direction, angles.

- ``measures.py`` ||y||, <y, 1>, cos(x, y) over the last axis, in float64
"""
