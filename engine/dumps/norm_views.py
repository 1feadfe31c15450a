"""Norms applied to, or read from, real tokens of a dump.

- ``compare_norms``: LayerNorm and RMSNorm (through ``engine.normalize``, no affine) of
  chosen tokens at one layer: the two outputs and how far apart they are.  They differ only
  by the token's mean μ: with μ = 0 they are equal.
- ``fit_dyt``: where a dump holds a norm's input and output, the output (affine removed
  when the dump holds the weight and bias) against the input, and the DyT curve
  y = γ·tanh(α·x) fitted to it by least squares.  Zhu et al. observed that LayerNorm's
  input-output map in trained Transformers looks like such an S-curve, and replaced it with
  DyT; α is the fitted steepness.  A dump's ``<norm>.weight`` (and ``.bias``) must be what
  the output was multiplied by (and shifted by): y = weight·n + bias.  For Gemma's RMSNorm,
  which scales by (1 + weight), a capture stores 1 + weight.
  Outliers: massive activations put a few inputs thousands of times past the rest (SmolLM2:
  ~23,000 among values of a few units), which would set the drawing's scale and the fit.
  The fit reads the bulk, |x| <= ``BULK_FACTOR`` × the ``BULK_QUANTILE`` quantile of |x|;
  the values past it are counted and returned apart (``outlier_x``), so a page marks them
  instead of hiding them, and ``r2_all`` says how well the bulk's curve fits every value.
  The flat band (``FlatBand``): a norm divides each token by its own scale, so each token's
  points lie along a line of slope 1/scale (Zhu et al. 2025, section 3); the few tokens of
  far larger scale (in SmolLM2's middle layers, those holding a massive activation) lie
  along nearly flat lines that no one tanh follows together with the others'.  A token's
  slope is its least-squares one.

References:
- Zhu, Chen, He, LeCun, Liu 2025, "Transformers without Normalization", arXiv:2503.10622
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import NormSpec
from engine.dumps.dump import Dump, locate, read_param, read_piece_rows, read_tokens
from engine.dumps.layout import NormPair, Piece
from engine.norms.dispatch import normalize

SAMPLE_ROWS = 64  # tokens read from each norm pair for the DyT fit
SAMPLE_POINTS = 16384  # (input, output) points fitted
SCATTER_POINTS = 2000  # points returned for drawing
_ALPHAS = np.logspace(-4, 3, 141)  # the grid α is first searched on
BULK_QUANTILE = 0.99  # the bulk's scale: this quantile of |x| ...
BULK_FACTOR = 10.0  # ... times this is the bulk's edge; values past it are outliers
OUTLIER_POINTS = 200  # outliers returned for drawing (the largest |x| first)
STRAIGHT = 0.99  # tanh(z)/z from which a fitted curve is read as a line (z ≤ 0.17: 1 %)
# A token whose output rises this many times less steeply against its input than the median
# token's is in the flat band.  SmolLM2's example: its flat tokens are about 6 to 180 times
# flatter, every other token under 2 times (tests/dumps/test_example_story.py).
FLAT_FACTOR = 4.0
# A flat band is said to come from its tokens' larger scale where every one of them has an
# input scale at least this many times the median token's: half the slopes' factor, since a
# norm's output against its input has a least-squares slope near 1/scale, not exactly it.
SCALE_FACTOR = FLAT_FACTOR / 2


@dataclass(frozen=True)
class TokenNorms:
    """LayerNorm and RMSNorm of chosen tokens at one layer (no affine)."""

    layer: int
    rows: np.ndarray  # [k] b*T + t
    layernorm: np.ndarray  # [k, d]
    rmsnorm: np.ndarray  # [k, d]
    mean: np.ndarray  # [k] μ over the token's finite values (as the report's tables)
    rms: np.ndarray  # [k] over its finite values
    difference_rms: np.ndarray  # [k] sqrt(mean((LN − RMSNorm)²)) over d
    # [k] cosine of the angle between the two outputs; NaN where one is the zero vector (a
    # token of equal entries: LayerNorm(x) = 0) or not finite, since no angle is defined
    cosine: np.ndarray
    finite: np.ndarray  # [k] finite values of each token (d unless NaN/inf: outputs undefined)


@dataclass(frozen=True)
class FlatBand:
    """The tokens read whose output against input is at least ``FLAT_FACTOR`` times flatter
    than the median token's (a line's slope: least squares over the token's values), and
    whether a larger input scale accounts for it (``scale``)."""

    tokens: int  # how many of them
    read: int  # tokens read for the fit
    factor: float  # their lines are at least this many times flatter (inf: a line with no slope)
    # "rms" or "sigma": every flat token's input RMS (RMSNorm divides by it), or else its σ
    # (LayerNorm's), is at least SCALE_FACTOR times the median token's; None: neither is
    scale: str | None
    largest_scale: float  # the flat tokens' largest input RMS (σ where scale is "sigma")
    median_scale: float  # the median token's
    largest: float  # their largest |x|
    median_abs: float  # the median |x| of every value read
    r2_rest: float  # r² of γ·tanh(αx) fitted to the other tokens' bulk alone


@dataclass(frozen=True)
class DyTFit:
    """One norm's output against its input, and the fitted γ·tanh(α·x)."""

    label: str
    layer: int | None
    alpha: float
    gamma: float
    r2: float  # share of the bulk's output variance the curve explains
    points: int  # how many (x, y) points were fitted (the bulk)
    affine_removed: bool  # the output was divided back by the dump's weight (and bias)
    x: np.ndarray  # [<= SCATTER_POINTS] inputs of the bulk, for a scatter plot
    y: np.ndarray  # [<= SCATTER_POINTS] outputs
    bulk_limit: float  # |x| past this is an outlier (inf: none could be)
    outliers: int  # values past bulk_limit (of every value read), left out of the fit
    outlier_x: np.ndarray  # [<= OUTLIER_POINTS] their inputs, largest |x| first
    outlier_y: np.ndarray  # [<= OUTLIER_POINTS] their outputs
    r2_all: float  # the bulk's curve on every value read, outliers included
    flat: FlatBand | None = None  # the tokens of the flat band, where there are some
    reach: float = math.nan  # the largest |x| fitted: tanh(α·reach)/(α·reach) near 1 is a line

    @property
    def straight(self) -> bool:
        """The fitted curve bends less than 1 % over the values it was fitted to: γ·tanh(αx)
        is the line γαx there (a single token, one scale), no S-curve."""
        z = self.alpha * self.reach
        return math.isfinite(z) and (z == 0 or math.tanh(z) / z >= STRAIGHT)


def compare_norms(dump: Dump, layer: int, rows: list[int], eps: float = 1e-5) -> TokenNorms:
    """LayerNorm vs RMSNorm of the tokens ``rows`` (b*T + t) at ``layer``."""
    return token_norms(read_tokens(dump, [layer], rows)[0], layer, rows, eps)


def token_norms(x: torch.Tensor, layer: int, rows: list[int], eps: float) -> TokenNorms:
    """LayerNorm vs RMSNorm of the tokens ``x`` ([k, d]), computed in float64.

    A token holding NaN or ±inf has no defined output (NaN propagates through both norms);
    its μ and RMS are still given over its finite values, as the report's tables give them
    (``StreamStats``)."""
    x = x.double()  # [k, d]
    ln = normalize(x, NormSpec(kind="layernorm", eps=eps, compute_dtype="float64"))
    rms = normalize(x, NormSpec(kind="rmsnorm", eps=eps, compute_dtype="float64"))
    gap = ln.y - rms.y  # [k, d]
    finite = torch.isfinite(x)  # [k, d]
    count = finite.sum(-1)  # [k]
    clean = torch.where(finite, x, 0.0)  # [k, d]
    safe = count.clamp_min(1).double()  # [k]
    defined = count > 0
    nan = torch.tensor(float("nan"), dtype=torch.float64)
    mean = torch.where(defined, clean.sum(-1) / safe, nan)  # [k]
    root = torch.where(defined, (clean * clean).sum(-1).div(safe).sqrt(), nan)  # [k]
    norms = ln.y.norm(dim=-1) * rms.y.norm(dim=-1)  # [k]
    cosine = (ln.y * rms.y).sum(-1) / norms  # [k]
    cosine = torch.where((norms > 0) & torch.isfinite(norms), cosine.clamp(-1.0, 1.0), nan)
    return TokenNorms(
        layer=layer,
        rows=np.asarray(rows, dtype=np.int64),
        layernorm=ln.y.numpy(),
        rmsnorm=rms.y.numpy(),
        mean=mean.numpy(),
        rms=root.numpy(),
        difference_rms=gap.pow(2).mean(-1).sqrt().numpy(),
        cosine=cosine.numpy(),
        finite=count.numpy().astype(np.int64),
    )


def _sample_rows(pieces: tuple[Piece, ...], count: int) -> list[tuple[Piece, int]]:
    """Up to ``count`` evenly spaced rows of the pieces, as (piece, entry row)."""
    total = sum(p.rows for p in pieces)
    picked = np.unique(np.linspace(0, total - 1, min(count, total)).round().astype(np.int64))
    return [locate(pieces, row) for row in picked.tolist()]


def _sse(alpha: float, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(sum of squared errors, γ) of the best γ for this α: γ = Σ y·t / Σ t², t = tanh(αx)."""
    # Elementwise products summed, not ``t @ t``: a BLAS dot of a 16k vector wakes OpenBLAS's
    # thread pool, many times slower on a busy server (figures: benchmarks/RESULTS.md,
    # "Live model: SmolLM2-135M on the CPU").
    t = np.tanh(alpha * x)
    denominator = float((t * t).sum())
    gamma = float((y * t).sum()) / denominator if denominator > 0 else 0.0
    residual = y - gamma * t
    return float((residual * residual).sum()), gamma


def fit_tanh(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(α, γ, r²) minimising Σ(y − γ·tanh(αx))²: a grid over log α, then golden section."""
    errors = [_sse(alpha, x, y)[0] for alpha in _ALPHAS]
    best = int(np.argmin(errors))
    low = np.log(_ALPHAS[max(best - 1, 0)])
    high = np.log(_ALPHAS[min(best + 1, len(_ALPHAS) - 1)])
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(40):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if _sse(np.exp(a), x, y)[0] < _sse(np.exp(b), x, y)[0]:
            high = b
        else:
            low = a
    alpha = float(np.exp((low + high) / 2.0))
    gamma = _sse(alpha, x, y)[1]
    return alpha, gamma, _r2(alpha, gamma, x, y)


def fit_dyt(pair: NormPair, readers: dict | None = None) -> DyTFit:
    """Read a sample of the pair's tokens and fit γ·tanh(α·x) to output vs input.
    ``readers``: the files' readers, shared by the fits of a report's pairs (a .pt file is
    loaded once for all of them, not four times a pair: 256 layers of a TransformerLens
    cache took over 100 s)."""
    readers = {} if readers is None else readers
    located_in = _sample_rows(pair.inputs, SAMPLE_ROWS)
    located_out = _sample_rows(pair.outputs, SAMPLE_ROWS)
    x = read_piece_rows(located_in, readers).double()  # [k, d]
    y = read_piece_rows(located_out, readers).double()  # [k, d]
    removed = pair.weight is not None
    if removed:
        bias = read_param(pair.bias, readers) if pair.bias is not None else 0.0  # [d]
        weight = read_param(pair.weight, readers)  # [d]
        usable = weight.abs() > 1e-6  # [d] a zero weight erases its channel
        x, y = x[:, usable], ((y - bias) / weight)[:, usable]  # [k, d']
    x_all, y_all = x.flatten().numpy(), y.flatten().numpy()  # [k·d'] every read value
    finite = np.isfinite(x_all) & np.isfinite(y_all)
    token_of = np.repeat(np.arange(x.shape[0]), x.shape[1])[finite]  # each value's token
    x_all, y_all = x_all[finite], y_all[finite]
    limit = bulk_limit(x_all)
    bulk = np.abs(x_all) <= limit
    kept = _thin(np.flatnonzero(bulk), SAMPLE_POINTS)  # the same positions of x and y
    x_fit, y_fit = x_all[kept], y_all[kept]
    alpha, gamma, _ = fit_tanh(x_fit, y_fit) if x_fit.size else (np.nan, np.nan, np.nan)
    # r² on every value of the bulk, not only the sample the curve was fitted on
    r2 = _r2(alpha, gamma, x_all[bulk], y_all[bulk]) if x_fit.size else float("nan")
    flat = flat_band(x.numpy(), y.numpy(), x_all, y_all, token_of, bulk)
    order = np.argsort(-np.abs(x_all[~bulk]))[:OUTLIER_POINTS]
    drawn = _thin(np.arange(x_fit.shape[0]), SCATTER_POINTS)
    return DyTFit(
        label=pair.label,
        layer=pair.layer,
        alpha=alpha,
        gamma=gamma,
        r2=r2,
        points=int(x_fit.shape[0]),
        affine_removed=removed,
        x=x_fit[drawn],
        y=y_fit[drawn],
        bulk_limit=limit,
        outliers=int((~bulk).sum()),
        outlier_x=x_all[~bulk][order],
        outlier_y=y_all[~bulk][order],
        r2_all=_r2(alpha, gamma, x_all, y_all) if x_all.size else float("nan"),
        flat=flat,
        reach=float(np.abs(x_fit).max()) if x_fit.size else math.nan,
    )


def _row_moments(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """([k] each token's least-squares slope of y against x, [k] its input's RMS, [k] its
    input's σ), over the values where both are finite; NaN for a token with none (a slope:
    whose x is constant)."""
    ok = np.isfinite(x) & np.isfinite(y)  # [k, d]
    x, y = np.where(ok, x, 0.0), np.where(ok, y, 0.0)
    n = ok.sum(axis=1)  # [k]
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = np.where(ok, x - x.sum(axis=1, keepdims=True) / n[:, None], 0.0)
        dy = np.where(ok, y - y.sum(axis=1, keepdims=True) / n[:, None], 0.0)
        slope = (dx * dy).sum(axis=1) / (dx * dx).sum(axis=1)
        return slope, np.sqrt((x * x).sum(axis=1) / n), np.sqrt((dx * dx).sum(axis=1) / n)


def flat_band(x, y, x_all, y_all, token_of, bulk) -> FlatBand | None:
    """The tokens of ``x``, ``y`` ([k, d]) whose slope is ``FLAT_FACTOR`` times below the
    median token's, and the curve fitted without them; ``x_all``, ``y_all``: the finite
    values, ``token_of`` each one's token, ``bulk`` the ones the fit reads.  None where no
    token is that flat."""
    slopes, rms, sigma = _row_moments(x, y)
    slopes = np.abs(slopes)
    known = np.isfinite(slopes)
    median = float(np.median(slopes[known])) if known.any() else 0.0
    flat = known & (slopes * FLAT_FACTOR < median)  # [k]
    if not flat.any():
        return None
    scale, sizes = "rms", rms  # RMSNorm divides a token by its RMS, LayerNorm by its σ
    for name, values in (("rms", rms), ("sigma", sigma)):
        typical = float(np.nanmedian(values[known]))  # the median token's, as for slopes
        if typical > 0 and (values[flat] >= SCALE_FACTOR * typical).all():
            scale, sizes = name, values
            break
    else:
        scale = None
    rest = _thin(np.flatnonzero(bulk & ~flat[token_of]), SAMPLE_POINTS)
    steepest = float(slopes[flat].max())
    return FlatBand(
        tokens=int(flat.sum()),
        read=int(x.shape[0]),
        factor=median / steepest if steepest > 0 else float("inf"),
        scale=scale,
        largest_scale=float(sizes[flat].max()),
        median_scale=float(np.nanmedian(sizes[known])),
        largest=float(np.abs(x_all[flat[token_of]]).max()),
        median_abs=float(np.median(np.abs(x_all))),
        r2_rest=fit_tanh(x_all[rest], y_all[rest])[2] if rest.size else float("nan"),
    )


def _thin(values: np.ndarray, count: int) -> np.ndarray:
    """At most ``count`` of ``values`` (positions into the read rows, flattened), the same
    ones for the same length (seeded).

    Not a stride: every k-th value of rows whose width is divisible by k keeps only some
    channels, and would miss an outlier channel entirely.
    """
    if values.shape[0] <= count:
        return values
    picked = np.random.default_rng(0).choice(values.shape[0], count, replace=False)
    return values[np.sort(picked)]


def bulk_limit(x: np.ndarray) -> float:
    """The bulk's edge: ``BULK_FACTOR`` × the ``BULK_QUANTILE`` quantile of |x| (inf when
    that quantile is 0, so a dump of mostly zeros keeps every value)."""
    if not x.size:
        return float("inf")
    scale = float(np.quantile(np.abs(x), BULK_QUANTILE))
    return BULK_FACTOR * scale if scale > 0 else float("inf")


def _r2(alpha: float, gamma: float, x: np.ndarray, y: np.ndarray) -> float:
    if not (np.isfinite(alpha) and np.isfinite(gamma)):
        return float("nan")
    residual = y - gamma * np.tanh(alpha * x)
    spread = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float((residual * residual).sum()) / spread if spread > 0 else float("nan")
