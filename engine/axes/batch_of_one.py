"""BatchNorm failure 4: a batch of one token, and what really happens there.

Seed 001 claims that at batch size 1 "the variance is zero, which causes a division-by-zero
error".  The variance is zero only when a channel pools a single value: B = 1 *and* T = 1.
One sentence of T > 1 tokens gives BatchNorm T values per channel and a nonzero variance
(``nn.BatchNorm1d`` on ``[1, d, T]`` trains without complaint).  With B = T = 1::

    var = 0,  x - mean = 0,  y = 0 * 1/sqrt(0 + eps) * gamma + beta = beta   (eps > 0)

so every output collapses to β, whatever the input — no error, and no information.  With
eps = 0 the formula is 0 * 1/sqrt(0) = 0 * inf = NaN in IEEE arithmetic: no exception is
raised either (floating-point division by zero does not raise; PyTorch's native
``torch.batch_norm`` even defines the inverse std as 0 there and returns β).  The one thing
that *does* raise is ``nn.BatchNorm1d`` in training mode, on purpose: it refuses one value
per channel with a ``ValueError`` before computing anything.  In eval mode it normalizes
the same token with its running statistics.

References:
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167
- IEEE 754-2019, 0 * inf is an invalid operation returning NaN (quiet, no trap by default)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from engine.axes.sources import make_tensor
from engine.config import AxesSpec, NormSpec
from engine.norms.dispatch import normalize

DEFAULT_EPS = 1e-5  # used for the eps > 0 case when the spec's eps is 0


@dataclass(frozen=True)
class BatchOfOne:
    """The claim, and what the engine and PyTorch do with one value per channel."""

    claim_holds: bool  # whether anything raised ZeroDivisionError (it does not)
    eps: float  # eps of the eps > 0 case
    x: np.ndarray  # [d] the one token
    gamma: np.ndarray  # [d]
    beta: np.ndarray  # [d]
    variance: np.ndarray  # [d] BatchNorm's batch variance of the one token: zeros
    y: np.ndarray  # [d] engine output with eps > 0
    max_abs_y_minus_beta: float  # max |y - beta| (0: the output is beta)
    dtype: str  # the spec's precision, which torch.batch_norm runs in below
    # torch.batch_norm in ``dtype`` with eps > 0: max |y - beta|.  Its CPU kernel folds the
    # statistics into one scale and shift, y = x*s + (beta - mu*s) with s = gamma/sqrt(var + eps)
    # (aten/src/ATen/native/cpu/batch_norm_kernel.cpp), so two terms of size |x*s| round: a
    # float32 rounding of |x|*316 at eps = 1e-5, not 0
    native_max_abs_minus_beta: float
    y_eps0: np.ndarray  # [d] engine output with eps = 0
    nan_count_eps0: int  # NaN outputs with eps = 0 (0 * inf)
    native_eps0_max_abs_minus_beta: float  # torch.batch_norm with eps = 0: max |y - beta|
    torch_train_error_type: str  # nn.BatchNorm1d training mode on [1, d]: the exception
    torch_train_error: str  # its message, as raised (empty if nothing was raised)
    torch_eval_finite: bool  # nn.BatchNorm1d eval mode on [1, d]: finite output
    sequence_tokens: int  # T: values per channel of one sentence (B = 1, T tokens)
    sequence_min_var: float  # min over channels of that sentence's BatchNorm variance
    torch_sequence_trains: bool  # nn.BatchNorm1d training mode on [1, d, T] runs


def batch_of_one(spec: AxesSpec) -> BatchOfOne:
    """Normalize one token (B = T = 1, ``spec``'s preset and seed) with BatchNorm."""
    eps = spec.eps if spec.eps > 0 else DEFAULT_EPS
    one = make_tensor(replace(spec, source="synthetic", batch=1, tokens=1, lengths=()))
    x = one.x.double()  # [1, 1, d]
    d = x.shape[-1]
    generator = torch.Generator().manual_seed(spec.seed + 1)
    gamma = 1.0 + 0.1 * torch.randn(d, generator=generator, dtype=torch.float64)  # [d]
    beta = 0.5 * torch.randn(d, generator=generator, dtype=torch.float64)  # [d]
    bn_eps = NormSpec(kind="batchnorm", eps=eps, compute_dtype="float64")
    bn_exact = NormSpec(kind="batchnorm", eps=0.0, compute_dtype="float64")
    result = normalize(x, bn_eps, gamma, beta)  # [1, 1, d]
    y, y_eps0 = result.y.reshape(d), normalize(x, bn_exact, gamma, beta).y.reshape(d)  # [d]
    # the op under nn.BatchNorm1d, without the module's Python-side size check
    native = torch.batch_norm(x[0], gamma, beta, None, None, True, 0.1, 0.0, False)  # [1, d]

    dtype = getattr(torch, spec.dtype)
    native_eps = torch.batch_norm(
        x[0].to(dtype), gamma.to(dtype), beta.to(dtype), None, None, True, 0.1, eps, False
    )  # [1, d]
    error_type, error = _train_one_value(x[0], eps)
    bn = torch.nn.BatchNorm1d(d, eps=eps, dtype=torch.float64).eval()
    with torch.no_grad():
        eval_finite = bool(torch.isfinite(bn(x[0])).all())

    sentence = make_tensor(replace(spec, source="synthetic", batch=1, lengths=())).x.double()
    sentence_var = normalize(sentence, NormSpec(kind="batchnorm", compute_dtype="float64")).var
    seq_type, _ = _train_one_value(sentence.transpose(1, 2), eps)  # [1, d, T]
    return BatchOfOne(
        # the tensor calls above returned; nn.BatchNorm1d is the only thing that raises
        claim_holds=error_type == "ZeroDivisionError",
        eps=eps,
        x=x.reshape(d).numpy(),
        gamma=gamma.numpy(),
        beta=beta.numpy(),
        variance=result.var.double().numpy(),
        y=y.numpy(),
        max_abs_y_minus_beta=float((y - beta).abs().max()),
        dtype=spec.dtype,
        native_max_abs_minus_beta=float(
            (native_eps.reshape(d).double() - beta.to(dtype).double()).abs().max()
        ),
        y_eps0=y_eps0.numpy(),
        nan_count_eps0=int(torch.isnan(y_eps0).sum()),
        native_eps0_max_abs_minus_beta=float((native.reshape(d) - beta).abs().max()),
        torch_train_error_type=error_type,
        torch_train_error=error,
        torch_eval_finite=eval_finite,
        sequence_tokens=spec.tokens,
        sequence_min_var=float(sentence_var.min()),
        torch_sequence_trains=seq_type == "",
    )


def _train_one_value(x: torch.Tensor, eps: float) -> tuple[str, str]:
    """Run ``nn.BatchNorm1d`` in training mode on ``x`` ([N, d] or [N, d, L]); return the
    exception's type name and message, or two empty strings if it ran."""
    bn = torch.nn.BatchNorm1d(x.shape[1], eps=eps, dtype=x.dtype).train()
    try:
        with torch.no_grad():
            bn(x)
    except Exception as error:  # noqa: BLE001 - whatever it raises is the fact we report
        return type(error).__name__, str(error)
    return "", ""
