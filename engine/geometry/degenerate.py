"""Where the geometry collapses: d = 1, d = 2, constant vectors and zero vectors.

LayerNorm keeps only x - mu * 1, which lives in a (d-1)-dimensional plane, and rescales it
onto a sphere of that plane.  So:

- d = 1: the plane is the point 0, and LayerNorm returns beta for every input;
  RMSNorm returns x / sqrt(x^2 + eps), i.e. the sign of x at eps = 0.
- d = 2: the plane is the line spanned by (1, -1): x - mu * 1 = ((x1 - x2) / 2) * (1, -1),
  so at eps = 0 LayerNorm has only two outputs, +(1, -1) and -(1, -1) (times gamma, plus
  beta); eps > 0 pulls them in along that line, |a| / sqrt(a^2 + eps) with a = (x1 - x2) / 2,
  so near-equal pairs land between the two points and a constant vector at beta.
- A constant vector (every entry equal) has x - mu * 1 = 0: LayerNorm returns beta
  (0 / sqrt(0 + eps)), or 0/0 = NaN at eps = 0.  The zero vector does the same to RMSNorm.

Results carry these cases as *flags*: stable keys of ``FLAGS`` that the UI translates.
Nothing here crashes.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
"""

from __future__ import annotations

import torch

# The cases, in the order a page lists them; their sentences are
# ``geometry.degenerate.<flag>`` in locales/{en,zh}/geometry.toml.
FLAGS = (
    "d1_layernorm_is_beta",
    "d1_rmsnorm_is_sign",
    "d2_layernorm_two_points",
    "d2_layernorm_segment",
    "layernorm_constant_is_beta",
    "layernorm_constant_undefined",
    "rmsnorm_zero_is_beta",
    "rmsnorm_zero_undefined",
    # the same four where every one of several inputs is such a vector
    "layernorm_constant_is_beta_all",
    "layernorm_constant_undefined_all",
    "rmsnorm_zero_is_beta_all",
    "rmsnorm_zero_undefined_all",
)


def degeneracy_flags(x: torch.Tensor, eps: float) -> tuple[str, ...]:
    """The ``FLAGS`` that apply to inputs ``x`` ([N, d]) at this eps, in their order.
    "Constant" means every entry exactly equal, as the norm sees it; "_all": every one of
    several inputs is (a cloud of spread 0 said "some inputs" of all of them)."""
    d = x.shape[-1]
    constant_rows = x.amax(dim=-1) == x.amin(dim=-1)  # [N]
    zero_rows = (x == 0).all(dim=-1)  # [N]
    several = x.shape[0] > 1
    every_constant = several and bool(constant_rows.all())
    every_zero = several and bool(zero_rows.all())
    constant = bool(constant_rows.any()) and not every_constant
    zero = bool(zero_rows.any()) and not every_zero
    applies = {
        "d1_layernorm_is_beta": d == 1 and eps > 0,  # at 0: 0/0, said by *_undefined_all
        "d1_rmsnorm_is_sign": d == 1,
        "d2_layernorm_two_points": d == 2 and eps == 0,
        "d2_layernorm_segment": d == 2 and eps > 0,
        # with d = 1 every row is constant: the d1 flag already says it
        "layernorm_constant_is_beta": constant and d > 1 and eps > 0,
        "layernorm_constant_undefined": constant and eps == 0,
        "rmsnorm_zero_is_beta": zero and eps > 0,
        "rmsnorm_zero_undefined": zero and eps == 0,
        "layernorm_constant_is_beta_all": every_constant and d > 1 and eps > 0,
        "layernorm_constant_undefined_all": every_constant and eps == 0,
        "rmsnorm_zero_is_beta_all": every_zero and eps > 0,
        "rmsnorm_zero_undefined_all": every_zero and eps == 0,
    }
    return tuple(key for key in FLAGS if applies[key])
