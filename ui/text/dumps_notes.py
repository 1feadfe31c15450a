"""The activation-dump page's words for numbers that need a caveat: one token's LayerNorm
and RMSNorm where a norm's output is undefined (a token holding NaN/inf, or one whose
entries are all equal), and a median |a| read off bfloat16's grid, known to within 0.4 %.

Pure: every function takes the language and returns strings.
"""

from __future__ import annotations

import math

import numpy as np

from engine.dumps.chunks import median_exact
from engine.dumps.norm_views import TokenNorms
from engine.dumps.report import DumpReport
from ui.formatting import count, format_power, format_reading, grouped, true_minus
from ui.i18n import translate

APPROXIMATE_DIGITS = 3  # a value read on bfloat16's grid (8 significant bits, 0.4 %)


def median_approximate(rep: DumpReport) -> bool:
    """Whether the report's median |a| is read on bfloat16's grid, within 0.4 %: a stream
    not wholly float16 or wholly bfloat16, whose own bits give it exactly (``median_exact``)."""
    return not median_exact(rep.layout.dtype.split(", "))


def approximate(value: float, digits: int = APPROXIMATE_DIGITS) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros kept, marked "≈":
    1.0039 -> "≈1.00", 1001.5 -> "≈1,000", 997.6 -> "≈998"; "—" for NaN."""
    value = float(value)
    if math.isnan(value):
        return "—"
    if math.isinf(value) or value == 0:
        return format_reading(value)
    rounded = float(f"{value:.{digits}g}")
    power = math.floor(math.log10(abs(rounded)))
    if not -3 <= power < 6:
        return "≈" + format_power(rounded, digits)
    places = max(0, digits - 1 - power)
    return "≈" + grouped(true_minus(f"{rounded:.{places}f}"))


def token_detail_text(norms: TokenNorms, batch: int, token: int, d: int, lang: str) -> str:
    """The sentence above one token's LayerNorm and RMSNorm chart: μ and RMS over its
    finite values (as the tables give them), and the outputs said undefined where they
    are (a NaN/inf among its values; LayerNorm's zero vector has no angle)."""
    finite = int(norms.finite[0])
    where = dict(layer=norms.layer, batch=batch, token=token)
    if finite == 0:
        return translate("dumps.token_detail_no_finite", lang, d=count(d), **where)
    mean = format_reading(float(norms.mean[0]), 4)
    rms = format_reading(float(norms.rms[0]), 4)
    if finite < d:
        key = "token_detail_nonfinite_one" if d - finite == 1 else "token_detail_nonfinite"
        return translate(
            f"dumps.{key}",
            lang,
            count=count(d - finite),
            finite=count(finite),
            mean=mean,
            rms=rms,
            **where,
        )
    cosine = float(norms.cosine[0])
    key = "token_detail" if np.isfinite(cosine) else "token_detail_constant"
    return translate(
        f"dumps.{key}",
        lang,
        mean=mean,
        rms=rms,
        difference=format_reading(float(norms.difference_rms[0]), 4),
        cosine=format_reading(cosine, 6),
        **where,
    )
