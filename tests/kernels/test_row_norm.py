"""Row-norm kernels (forward, backward, fused residual) vs engine/norms/reference.py and autograd.

Outputs and statistics are compared with the reference at the kernel's own precision
(float32 statistics); gradients with torch autograd through the reference in float64.
Every test checks the launch counter: the Triton kernel ran, not a torch fallback.
"""

from __future__ import annotations

import itertools

import pytest
import torch

from engine.kernels.row_norm_backward import row_norm_backward
from engine.kernels.row_norm_forward import row_norm_forward
from engine.kernels.row_norm_function import row_norm
from engine.norms.dispatch import reference

WIDTHS = (1, 41, 123, 760, 1023, 1024, 1128, 3000)
ROWS = (0, 1, 7, 199)
KINDS = pytest.mark.parametrize("is_rms", [False, True], ids=["layernorm", "rmsnorm"])
FWD, BWD = "_row_norm_forward_kernel", "_row_norm_backward_kernel"
TOL = {torch.float32: 1e-5, torch.float16: 1e-2}
EPS = 1e-5


def cancelling(*shape, dtype=torch.float32) -> torch.Tensor:
    """Inputs whose mean dominates their spread: -2.3 + 0.5 * randn."""
    return (-2.3 + 0.5 * torch.randn(*shape)).to(dtype)


def reference_forward(x, residual, weight, bias, offset, is_rms) -> reference.NormResult:
    """engine.norms.reference on the unfused pair, at the kernel's float32 statistics."""
    h = x if residual is None else x + residual
    norm = reference.rms_norm if is_rms else reference.layer_norm
    return norm(h, EPS, weight, bias, offset=offset, compute_dtype=torch.float32)


def float64_gradients(x, residual, weight, bias, offset, is_rms, dy, dh):
    """d(sum(y * dy) + sum(h * dh)) through engine.norms.reference in float64, for every input."""
    leaves = [
        t.detach().double().requires_grad_() if t is not None else None
        for t in (x, residual, weight, bias)
    ]
    x64, r64, w64, b64 = leaves
    h = x64
    if r64 is not None:
        # The kernel rounds h to its dtype before normalizing; take that value with the
        # identity's gradient (rounding is constant almost everywhere).
        exact = x64 + r64
        rounded = (x + residual).double()
        h = exact + (rounded - exact).detach()
    norm = reference.rms_norm if is_rms else reference.layer_norm
    y = norm(h, EPS, w64, b64, offset=offset, compute_dtype=torch.float64).y
    loss = (y * dy.double()).sum()
    if r64 is not None and dh is not None:
        loss = loss + (h * dh.double()).sum()
    wanted = [t for t in leaves if t is not None]
    grads = iter(torch.autograd.grad(loss, wanted, allow_unused=True))
    return [next(grads) if t is not None else None for t in leaves]


def check_against_reference(x, residual, weight, bias, offset, is_rms, dy, dh=None):
    """Run the kernels forward and backward and compare everything with the oracles."""
    tol = TOL[x.dtype]
    inputs = [
        t.detach().clone().requires_grad_() if t is not None else None
        for t in (x, residual, weight, bias)
    ]
    xi, ri, wi, bi = inputs
    y, h, mean, var, rstd = row_norm(xi, ri, wi, bi, EPS, offset, is_rms)

    ref = reference_forward(x, residual, weight, bias, offset, is_rms)
    assert y.shape == x.shape and y.dtype == ref.y.dtype
    torch.testing.assert_close(y, ref.y, atol=tol, rtol=tol)
    torch.testing.assert_close(mean, ref.mean, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(var, ref.var, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rstd, ref.rstd, atol=1e-5, rtol=1e-5)
    if residual is not None:
        torch.testing.assert_close(h, x + residual, atol=0, rtol=0)

    loss = (y * dy).sum()
    if residual is not None and dh is not None:
        loss = loss + (h * dh).sum()
    wanted = [t for t in inputs if t is not None]
    got = iter(torch.autograd.grad(loss, wanted))
    expected = float64_gradients(x, residual, weight, bias, offset, is_rms, dy, dh)
    for name, leaf, exp in zip(("dx", "dres", "dW", "dB"), inputs, expected):
        if leaf is None:
            continue
        grad = next(got)
        assert grad.dtype == leaf.dtype, name
        torch.testing.assert_close(grad.double(), exp, atol=tol, rtol=tol, msg=name)


# Every width x row count for LayerNorm; RMSNorm (the same kernel less the centring) skips
# the three slowest interpreted cases, 199 rows at the widest widths.
SHAPE_SWEEP = [
    pytest.param(
        width,
        rows,
        is_rms,
        id=f"{width}-{rows}-{'rmsnorm' if is_rms else 'layernorm'}",
        # the interpreter's wide blocks of 199 rows: seconds each, the narrow ones stay quick
        marks=[pytest.mark.slow] if rows == 199 and width >= 760 else [],
    )
    for is_rms in (False, True)
    for rows in ROWS
    for width in WIDTHS
    if not (is_rms and rows == 199 and width >= 1023)
]


@pytest.mark.parametrize("width,rows,is_rms", SHAPE_SWEEP)
def test_matches_reference_and_autograd_at_every_width_and_row_count(width, rows, is_rms, launches):
    x, r = cancelling(rows, width), torch.randn(rows, width)
    w, b = 1.0 + 0.1 * torch.randn(width), 0.1 * torch.randn(width)
    dy, dh = torch.randn(rows, width), torch.randn(rows, width)
    check_against_reference(x, r, w, b, 0.0, is_rms, dy, dh)
    expected_launches = 1 if rows else 0
    assert launches.since(FWD) == expected_launches
    assert launches.since(BWD) == expected_launches


FLAGS = list(itertools.product([False, True], repeat=4))


@KINDS
@pytest.mark.parametrize(
    "has_weight,has_bias,has_offset,has_residual",
    FLAGS,
    ids=["".join(n for n, on in zip("wbor", f) if on) or "none" for f in FLAGS],
)
def test_every_flag_combination(has_weight, has_bias, has_offset, has_residual, is_rms, launches):
    rows, width = 7, 123
    x = cancelling(rows, width)
    r = torch.randn(rows, width) if has_residual else None
    w = torch.randn(width) if has_weight else None
    b = torch.randn(width) if has_bias else None
    dy, dh = torch.randn(rows, width), torch.randn(rows, width)
    check_against_reference(x, r, w, b, 1.0 if has_offset else 0.0, is_rms, dy, dh)
    assert launches.since(FWD) == 1 and launches.since(BWD) == 1


@KINDS
@pytest.mark.parametrize(
    "rows,width",
    # 199 rows of 1024: seconds in the interpreter, like the shape sweep's wide blocks
    [(7, 41), pytest.param(199, 1024, marks=pytest.mark.slow), (7, 3000)],
)
def test_float16_within_1e_2(rows, width, is_rms, launches):
    x, r = cancelling(rows, width, dtype=torch.float16), torch.randn(rows, width).half()
    w = (1.0 + 0.1 * torch.randn(width)).half()
    b = (0.1 * torch.randn(width)).half()
    dy, dh = torch.randn(rows, width).half(), torch.randn(rows, width).half()
    check_against_reference(x, r, w, b, 0.0, is_rms, dy, dh)
    assert launches.since(FWD) == 1


@KINDS
def test_bfloat16_values_through_float32(is_rms, launches):
    # The interpreter's bfloat16 arithmetic is wrong: feed bfloat16 values as float32.
    x_bf16 = cancelling(7, 760).bfloat16()
    w_bf16 = (1.0 + 0.1 * torch.randn(760)).bfloat16()
    y, *_ = row_norm(x_bf16.float(), None, w_bf16.float(), None, EPS, 0.0, is_rms)
    ref = reference_forward(x_bf16, None, w_bf16, None, 0.0, is_rms)
    torch.testing.assert_close(y.bfloat16(), ref.y, atol=1e-2, rtol=1e-2)
    assert launches.since(FWD) == 1


def strided_cases(rows: int, width: int):
    """(name, x, dy) with awkward layouts; dy is never contiguous."""
    big = cancelling(3, rows, width + 9)
    yield "3d-slice", big[:, :, 4 : 4 + width], torch.randn(3, rows, width + 2)[..., 1:-1]
    wide = cancelling(rows, 2 * width)
    yield "column-stride-2", wide[:, ::2], torch.randn(width, rows).t()
    leading = cancelling(rows, 3, width)
    yield "transposed-leading", leading.transpose(0, 1), torch.randn(rows, 3, width).transpose(0, 1)
    yield "expanded-dy", cancelling(2, rows, width), torch.ones(1, 1, 1).expand(2, rows, width)


@KINDS
@pytest.mark.parametrize("rows,width", [(7, 41), (5, 1128)])
def test_strided_and_3d_inputs_and_non_contiguous_dy(rows, width, is_rms, launches):
    for name, x, dy in strided_cases(rows, width):
        assert not dy.is_contiguous(), name
        r = torch.randn(x.shape).transpose(-1, -2).contiguous().transpose(-1, -2)  # col-major
        w, b = torch.randn(width), torch.randn(width)
        dh = torch.randn(x.shape)
        check_against_reference(x, r, w, b, 0.0, is_rms, dy.expand(x.shape), dh)
    assert launches.since(FWD) == 4 and launches.since(BWD) == 4


@KINDS
@pytest.mark.parametrize("width", [41, 1023, 3000])
def test_looped_wide_row_path_matches_register_path(width, is_rms, launches):
    # Force the chunked (wide-row) code at small widths: forward shifted sums, backward
    # row-sum kernel + 2-D grid of column blocks.
    x, r = cancelling(7, width), torch.randn(7, width)
    w, b = torch.randn(width), torch.randn(width)
    small = dict(max_fused_n=16, chunk_n=16) if width == 41 else dict(max_fused_n=512, chunk_n=512)
    looped = row_norm_forward(x, r, w, b, EPS, 0.5, is_rms, **small)
    fused = row_norm_forward(x, r, w, b, EPS, 0.5, is_rms)
    for a, c in zip(looped, fused):
        torch.testing.assert_close(a, c, atol=1e-5, rtol=1e-5)
    y, h, mean, _, rstd = fused
    dy, dh = torch.randn(7, width), torch.randn(7, width)
    args = (dy, dh, h, w, mean, rstd, 0.5, is_rms, True, True, True)
    for a, c in zip(row_norm_backward(*args, **small), row_norm_backward(*args)):
        torch.testing.assert_close(a, c, atol=1e-5, rtol=1e-5)
    assert launches.since("_row_norm_backward_row_sums_kernel") == 1


@KINDS
@pytest.mark.slow  # the width is the point: 65,573 columns take seconds in the interpreter
def test_rows_wider_than_64k_take_the_looped_path(is_rms, launches):
    width = 65536 + 37
    x, w, b = cancelling(2, width), torch.randn(width), torch.randn(width)
    check_against_reference(x, None, w, b, 0.0, is_rms, torch.randn(2, width))
    assert launches.since(FWD) == 1
    assert launches.since("_row_norm_backward_row_sums_kernel") == 1


@KINDS
@pytest.mark.parametrize("looped", [False, True], ids=["registers", "looped"])
def test_constant_rows(looped, is_rms, launches):
    x = torch.tensor([3.0, -1.5, 0.0, 1e4]).repeat_interleave(300).reshape(4, 300)
    w, b = torch.randn(300), torch.randn(300)
    small = dict(max_fused_n=64, chunk_n=64) if looped else {}
    y, _, mean, var, rstd = row_norm_forward(x, None, w, b, EPS, 0.0, is_rms, **small)
    ref = reference_forward(x, None, w, b, 0.0, is_rms)
    torch.testing.assert_close(y, ref.y, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(var, ref.var, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rstd, ref.rstd, atol=1e-5, rtol=1e-5)
    if not is_rms:
        assert torch.equal(var, torch.zeros(4))  # no spurious variance from rounding
        torch.testing.assert_close(y, b.expand(4, 300), atol=0, rtol=0)
    assert launches.since(FWD) == 1


@KINDS
@pytest.mark.parametrize("looped", [False, True], ids=["registers", "looped"])
def test_large_mean_small_spread_keeps_the_variance(looped, is_rms, launches):
    # |mean| / std = 1e5: E[x^2] - E[x]^2 in float32 would return noise here.
    x = 1000.0 + 0.01 * torch.randn(3, 2000)
    small = dict(max_fused_n=256, chunk_n=256) if looped else {}
    _, _, mean, var, _ = row_norm_forward(x, None, None, None, EPS, 0.0, is_rms, **small)
    x64 = x.double()
    exact_var = (x64 * x64).mean(-1) if is_rms else x64.var(-1, unbiased=False)
    torch.testing.assert_close(var.double(), exact_var, atol=0, rtol=1e-4)  # reference: 2e-5
    assert launches.since(FWD) == 1


def test_two_backward_runs_give_bit_identical_weight_gradients(launches):
    # 64 rows of 300 are 8 tiles of 8 rows for the interpreter's 4 programs: 4 partial rows
    # summed by column_sum, as many as for 199 rows of 1128 (100 tiles of 2 rows).
    x = cancelling(64, 300).requires_grad_()
    w = torch.randn(300).requires_grad_()
    b = torch.randn(300).requires_grad_()
    dy = torch.randn(64, 300)
    runs = []
    for _ in range(2):
        y = row_norm(x, None, w, b, EPS, 0.0, False)[0]
        runs.append(torch.autograd.grad(y, (x, w, b), dy))
    for first, second in zip(*runs):
        assert torch.equal(first, second)
    assert launches.since(BWD) == 2 and launches.since("_column_sum_kernel") == 4


@pytest.mark.parametrize("wanted", ["x", "residual", "weight", "bias", "x+residual"])
def test_only_the_requested_gradients_are_computed(wanted, launches):
    x, r, w, b = cancelling(7, 123), torch.randn(7, 123), torch.randn(123), torch.randn(123)
    leaves = dict(x=x, residual=r, weight=w, bias=b)
    for name in wanted.split("+"):
        leaves[name] = leaves[name].clone().requires_grad_()
    y, h, *_ = row_norm(leaves["x"], leaves["residual"], leaves["weight"], leaves["bias"])
    dy = torch.randn(7, 123)
    grads = torch.autograd.grad((y * dy).sum(), [leaves[n] for n in wanted.split("+")])
    expected = float64_gradients(x, r, w, b, 0.0, False, dy, None)
    index = dict(x=0, residual=1, weight=2, bias=3)
    for name, grad in zip(wanted.split("+"), grads):
        torch.testing.assert_close(grad.double(), expected[index[name]], atol=1e-5, rtol=1e-5)
    assert launches.since(BWD) == 1


def test_residual_of_another_dtype_promotes_like_torch(launches):
    x = cancelling(7, 41, dtype=torch.float16)
    r = torch.randn(7, 41)
    y, h, *_ = row_norm(x, r, None, None, EPS, 0.0, True)
    assert h.dtype == y.dtype == torch.float32
    torch.testing.assert_close(h, x + r, atol=0, rtol=0)
    assert launches.since(FWD) == 1
