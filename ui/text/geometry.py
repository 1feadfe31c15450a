"""The Geometry page's sentences and worked steps (d <= 3 and one vector): pure, unit-tested.

Numbers come from ``engine.geometry`` results; this module writes them the way a person
would.  Where float32 leaves a trace (<y, 1> of LayerNorm is not exactly 0; at d = 2 nearly
equal entries land a little off +-(1, -1)) the sentence says how large rounding may be, so
a reader can see the measured number is that and nothing else.  The high-dimension and
real-activation sentences are in ``ui.text.geometry_high``.
"""

from __future__ import annotations

import numpy as np

from engine.geometry.cloud import Cloud
from engine.geometry.dyt_sweep import SATURATED
from engine.geometry.eps_curve import EpsCurve, predicted_norm
from engine.geometry.meshes import Ellipsoids
from engine.geometry.path import VectorPath
from engine.geometry.two_dimensions import DECIMALS, TwoDimensionalLayerNorm
from ui.formatting import format_cosine, format_power, format_reading, format_vector
from ui.i18n import sentence_joiner, translate
from ui.labels import NORM_NAMES
from ui.text.latex import Step, chain, latex_number, latex_vector
from ui.text.vector_lab_compare import UNDERFLOWED


def ones_rounding(ones: np.ndarray, norm: np.ndarray, cos_input: np.ndarray, d: int) -> dict:
    """What LayerNorm's measured <y, 1> (0 in exact arithmetic) amounts to, as parameters of
    the sentence ``geometry.rounding``: the largest |<y, 1>|, the largest |cos(y, 1)| (the
    scale-free size: <y, 1> / (||y|| sqrt(d))), and the largest rms/sigma = 1/cos(x, y) of
    the inputs, which is how much float32's rounding of mu and of x - mu 1 is magnified."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cos_ones = np.abs(ones) / (norm * np.sqrt(d))
        magnification = 1.0 / np.abs(cos_input)
    return dict(
        ones=format_reading(largest_abs(ones)),
        cos_ones=format_reading(largest_abs(cos_ones)),
        ratio=format_reading(largest_abs(magnification), 1),
    )


def rounding_sentence(ones, norm, cos_input, d: int, lang: str) -> str | None:
    """``geometry.rounding`` with ``ones_rounding``'s numbers; where rms/σ reads 1 (a centred
    cloud), without the magnification that does not happen; None where no output has a
    direction to measure (every input constant: "|cos(y, 1)| ≤ NaN" said nothing)."""
    if not np.isfinite(cos_input).any():  # every input constant: y = β has no direction
        return None
    rounding = ones_rounding(ones, norm, cos_input, d)
    unmagnified = rounding["ratio"] in ("1", "1.0")
    return translate(
        "geometry.rounding_centred" if unmagnified else "geometry.rounding", lang, **rounding
    )


def min_median_max(values: np.ndarray, write=format_reading) -> tuple[str, str, str]:
    """(min, median, max) of the finite values, written with ``write``."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return "NaN", "NaN", "NaN"
    return tuple(write(float(v)) for v in np.percentile(finite, [0, 50, 100]))


def cosine_ends(cosines: np.ndarray, gaps: np.ndarray) -> tuple[str, str, str]:
    """(min, median, max) of the finite cosines, each near 1 written from its gap 1 − cos
    (``engine.geometry.measures.cosine_gap``; ``format_cosine``): float64's cosine holds steps
    of 1.1×10⁻¹⁶ there, and RMSNorm's cloud read "from 1 − 7.8×10⁻¹⁶ to 1" where its gaps
    run from 7.3×10⁻¹⁶ to 2.5×10⁻²³.  The largest gap belongs to the smallest cosine."""
    finite = np.isfinite(cosines) & np.isfinite(gaps)
    if not finite.any():
        return "NaN", "NaN", "NaN"
    ends = zip(
        np.percentile(cosines[finite], [0, 50, 100]), np.percentile(gaps[finite], [100, 50, 0])
    )
    return tuple(format_cosine(float(cosine), float(gap)) for cosine, gap in ends)


def spread_text(values: np.ndarray, lang: str, write=format_reading, median: bool = False) -> str:
    """Where the finite values lie: "from 27.7127 to 27.7130" (with the median when asked),
    or "= 27.7127 for every input" where both ends read the same (never "from 27.7127 to
    27.7127")."""
    if not np.isfinite(values).any():  # every input's value 0/0: "= NaN for every input"
        return translate("geometry.range.undefined", lang)
    return _spread(min_median_max(values, write), lang, median)


def cosine_spread(
    cosines: np.ndarray, gaps: np.ndarray | None, lang: str, median: bool = False
) -> str:
    """``spread_text`` of cosines, written from their gaps (``cosine_ends``; without them,
    from the cosines alone)."""
    if gaps is None:
        return spread_text(cosines, lang, format_cosine, median)
    if not np.isfinite(cosines).any():
        return translate("geometry.range.undefined", lang)
    return _spread(cosine_ends(cosines, gaps), lang, median)


def _spread(ends: tuple[str, str, str], lang: str, median: bool) -> str:
    low, middle, high = ends
    if low == high:
        return translate("geometry.range.one", lang, value=low)
    key = "geometry.range.between_median" if median else "geometry.range.between"
    return translate(key, lang, low=low, high=high, median=middle)


def largest_abs(values: np.ndarray) -> float:
    """The largest finite |value| (NaN when none is finite)."""
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size else float("nan")


# --- one vector, step by step ------------------------------------------------------------------


def gathered(*lines: str) -> str:
    """Equations one under the other (a narrow column has no room for them side by side)."""
    return r"\begin{gathered}" + r" \\ ".join(lines) + r"\end{gathered}"


def _underflow(path: VectorPath, kind: str, eps: float, lang: str) -> str:
    """Where PyTorch's float32 norm computed sigma^2 (or rms^2) far from its exact value (its
    squares underflowed: 0, or a few subnormal steps), the sentence saying so, after a space;
    else ""."""
    exact, used = (
        (path.sigma, path.op_variance) if kind == "layernorm" else (path.rms, path.op_mean_square)
    )
    if not abs(used - exact**2) > UNDERFLOWED * exact**2:
        return ""
    key = "sigma_underflow"
    if eps == 0:
        key += "_nan" if used == 0 else "_off"
    words = {
        "norm": NORM_NAMES[kind],
        "symbol": "σ²" if kind == "layernorm" else "rms²",
        "used": format_reading(used),
        "exact": format_reading(exact**2),
    }
    return sentence_joiner(lang) + translate(f"geometry.path.{key}", lang, **words)


def path_steps(path: VectorPath, eps: float, alpha: float, lang: str) -> list[Step]:
    """x, its mean, the drop onto the plane, LayerNorm, RMSNorm, the cosines, DyT."""
    d, n, v = len(path.x), latex_number, latex_vector
    one = r"\mathbf{1}"
    dyt_norm = float(np.linalg.norm(path.dyt))
    sigma_over_rms = path.sigma / path.rms if path.rms > 0 else float("nan")
    predicted = float(predicted_norm(path.sigma, eps, d))
    predicted_rms = float(predicted_norm(path.rms, eps, d))  # √d·rms/√(rms² + ε)
    return [
        Step(
            translate("geometry.path.input", lang, d=d),
            gathered(
                rf"x = {v(path.x)}",
                rf"\mu = \frac{{\langle x, {one}\rangle}}{{d}} = {n(path.mean)}",
            ),
        ),
        Step(
            translate("geometry.path.drop", lang),
            gathered(
                rf"x - \mu{one} = {v(path.centered)}",
                rf"\langle x - \mu{one}, {one}\rangle = {n(path.centered_ones)}",
            ),
        ),
        Step(
            translate("geometry.path.layernorm", lang) + _underflow(path, "layernorm", eps, lang),
            gathered(
                rf"\sigma = \frac{{\lVert x - \mu{one}\rVert}}{{\sqrt{{d}}}} = {n(path.sigma)}",
                chain(
                    r"\mathrm{LN}(x)",
                    rf"\frac{{x - \mu{one}}}{{\sqrt{{\sigma^2 + \varepsilon}}}}",
                    v(path.layernorm),
                ),
            ),
        ),
        Step(
            translate("geometry.path.layernorm_norm", lang, eps=format_power(eps, 4)),
            gathered(
                rf"\lVert\mathrm{{LN}}(x)\rVert = {n(path.layernorm_norm)}",
                rf"\sqrt{{d}}\,\frac{{\sigma}}{{\sqrt{{\sigma^2+\varepsilon}}}} = {n(predicted)}"
                rf",\quad \sqrt{{d}} = {n(path.sqrt_d)}",
            ),
        ),
        Step(
            translate("geometry.path.rmsnorm", lang) + _underflow(path, "rmsnorm", eps, lang),
            gathered(
                rf"\mathrm{{rms}} = \frac{{\lVert x\rVert}}{{\sqrt{{d}}}} = {n(path.rms)}",
                chain(
                    r"\mathrm{RMSNorm}(x)",
                    r"\frac{x}{\sqrt{\mathrm{rms}^2 + \varepsilon}}",
                    v(path.rmsnorm),
                ),
                rf"\lVert\mathrm{{RMSNorm}}(x)\rVert = {n(path.rmsnorm_norm)}",
                rf"\sqrt{{d}}\,\frac{{\mathrm{{rms}}}}{{\sqrt{{\mathrm{{rms}}^2+\varepsilon}}}}"
                rf" = {n(predicted_rms)},\quad \sqrt{{d}} = {n(path.sqrt_d)}",
            ),
        ),
        Step(
            translate("geometry.path.cosines", lang),
            gathered(
                rf"\cos(x, \mathrm{{RMSNorm}}(x)) = {n(path.rmsnorm_cos_input)}",
                rf"\cos(x, \mathrm{{LN}}(x)) = {n(path.layernorm_cos_input)},\quad "
                rf"\sigma/\mathrm{{rms}} = {n(sigma_over_rms)}",
            ),
        ),
        Step(
            translate("geometry.path.dyt", lang, alpha=format_reading(alpha)),
            gathered(
                rf"\tanh(\alpha x) = {v(path.dyt)}",
                rf"\lVert\tanh(\alpha x)\rVert = {n(dyt_norm)}",
            ),
        ),
    ]


# --- the cloud ---------------------------------------------------------------------------------


def cloud_summary(cloud: Cloud, shown: tuple[str, ...], lang: str) -> list[str]:
    """What the scene shows, measured: lengths against sqrt(d), <y, 1>, the cosines."""
    d, sqrt_d = cloud.inputs.shape[-1], format_reading(cloud.sqrt_d)
    lines = []
    for kind in shown:
        normed = getattr(cloud, kind)
        norms = spread_text(normed.norm, lang)
        name = NORM_NAMES[kind]
        lines.append(
            translate("geometry.summary.norm_range", lang, norm=name, norms=norms, sqrt_d=sqrt_d)
        )
        if kind == "layernorm" and d > 1:
            rounding = rounding_sentence(normed.ones, normed.norm, normed.cos_input, d, lang)
            lines += [rounding] if rounding else []
        measured = np.isfinite(normed.cos_input).any()  # else the degenerate notes say why
        if measured and (kind == "rmsnorm" or kind == "layernorm" and d > 1):
            cosines = cosine_spread(normed.cos_input, normed.cos_gap, lang)
            key = f"geometry.summary.{kind}_cos"
            exact = cosine_spread(cloud.sigma_over_rms, cloud.sigma_over_rms_gap, lang)
            if kind == "layernorm" and exact != cosines:  # float32's rounding of x − μ shows
                key += "_rounded"
            lines.append(translate(key, lang, cosines=cosines, exact=exact))
        if kind == "dyt":  # a cloud of one vector repeated (spread 0) spreads nothing out
            same = len(cloud.inputs) > 1 and bool(np.all(cloud.inputs == cloud.inputs[0]))
            key = "geometry.summary.dyt_one_input" if same else "geometry.summary.dyt"
            lines.append(translate(key, lang, alpha=format_reading(cloud.dyt_alpha)))
    return lines


def two_dimensions_summary(two: TwoDimensionalLayerNorm, lang: str) -> str:
    """How many inputs landed on +gamma(1, -1) + beta, on -..., inside (eps), or at beta."""
    t = two.coefficient
    finite = np.isfinite(t)
    tolerance = 10.0**-DECIMALS
    plus = int(np.sum(finite & (t >= 1 - tolerance)))
    minus = int(np.sum(finite & (t <= -(1 - tolerance))))
    centre = int(np.sum(finite & (t == 0)))  # a constant input's x − μ is 0 exactly: y = β
    inside = int(np.sum(finite)) - plus - minus - centre
    return translate(
        "geometry.two_d.summary",
        lang,
        count=len(t),
        plus=plus,
        minus=minus,
        inside=inside,
        centre=centre,
        undefined=int(np.sum(~finite)),
        first=format_vector(two.endpoints[0]),
        second=format_vector(two.endpoints[1]),
        off_line=format_reading(two.off_line),
        tolerance=format_reading(tolerance),
    )


def eps_summary(curve: EpsCurve, lang: str) -> str:
    """The formula against the measured norms, and where the knee sits."""
    params = dict(
        error=format_reading(curve.max_relative_error),
        sqrt_d=format_reading(curve.sqrt_d),
        eps=format_power(curve.eps, 4),
    )
    if curve.eps == 0:
        return translate("geometry.eps_curve.summary_zero", lang, **params)
    half = float(predicted_norm(np.sqrt(curve.eps), curve.eps, curve.d))  # sqrt(d / 2)
    return translate(
        "geometry.eps_curve.summary",
        lang,
        sqrt_eps=format_reading(float(np.sqrt(curve.eps))),
        half=format_reading(half),
        **params,
    )


def affine_table(ellipsoids: Ellipsoids, lang: str) -> dict[str, list[str]]:
    """Per drawn axis: gamma, Gemma's stored weight gamma_Gemma = gamma - 1 (subscripted, as
    everywhere in the section, since the standard gamma stands beside it), and beta (columns
    of a table)."""
    return {
        "γ": [format_reading(g) for g in ellipsoids.gamma],
        translate("geometry.affine.gemma_column", lang): [
            format_reading(w) for w in ellipsoids.gemma_weight
        ],
        "β": [format_reading(b) for b in ellipsoids.beta],
    }


def affine_summary(ellipsoids: Ellipsoids, d: int, lang: str) -> str:
    semi_axes = np.abs(ellipsoids.gamma) * np.sqrt(d)
    return translate(
        "geometry.affine.summary",
        lang,
        axes=format_vector(semi_axes),
        centre=format_vector(ellipsoids.beta),
        difference=format_reading(ellipsoids.max_abs_difference),
    )


def dyt_summary(cloud: Cloud, lang: str) -> str:
    """DyT at the chosen alpha: the spread of lengths against sqrt(d), the saturated share."""
    saturated = float(np.mean(np.abs(cloud.dyt.y) > SATURATED))
    return translate(
        "geometry.dyt.summary",
        lang,
        alpha=format_reading(cloud.dyt_alpha),
        norms=spread_text(cloud.dyt.norm, lang),  # "= 1.3191 for every input" at spread 0
        sqrt_d=format_reading(cloud.sqrt_d),
        saturated=f"{100 * saturated:.0f}\u00a0%",
        level=format_reading(SATURATED),
    )


# The notes about constant and zero vectors, said of one input when there is one (a typed
# vector, a cloud of one): "the input is", not "some inputs are".
OF_ONE_INPUT = frozenset(
    (
        "layernorm_constant_is_beta",
        "layernorm_constant_undefined",
        "rmsnorm_zero_is_beta",
        "rmsnorm_zero_undefined",
    )
)


def degenerate_notes(flags: tuple[str, ...], lang: str, inputs: int) -> list[str]:
    """The sentence of each flag, for ``inputs`` input vectors (one: in the singular)."""
    one = "_one" if inputs == 1 else ""
    return [
        translate(f"geometry.degenerate.{flag}{one if flag in OF_ONE_INPUT else ''}", lang)
        for flag in flags
    ]
