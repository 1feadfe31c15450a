"""Results as read-only numpy arrays.

Geometry results are cached and shared between every session of a workshop, so a figure
builder that modified an array in place would change what the next person sees.  Each
array a result holds is a float64 numpy copy with its write flag cleared: plotly
draws it directly, and an accidental write raises instead of corrupting the cache.
"""

from __future__ import annotations

import numpy as np
import torch


def readonly(values: torch.Tensor | np.ndarray | list | tuple) -> np.ndarray:
    """A float64 copy of ``values`` that cannot be written."""
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().double().numpy()
    array = np.array(values, dtype=np.float64)
    array.setflags(write=False)
    return array
