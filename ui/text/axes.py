"""Axes page sentences: the legend of a norm's statistics, the clicked cell's arithmetic, and
the one-line lessons of BatchNorm's five failures.  Pure and unit-tested.

Every number here comes from an engine result (``engine.axes``) or its spec; the locale files
(``locales/*/axes.toml``) hold the words around them and no number of their own.  Which axes
a kind pools is ``engine/norms/kinds.py``'s table, read through the result.
"""

from __future__ import annotations

import math

import numpy as np

from engine.axes.batch_of_one import BatchOfOne
from engine.axes.causal_leak import CausalLeak
from engine.axes.limits import EXAMPLE_CHANNELS
from engine.axes.padding import PaddingPollution
from engine.axes.sharing import AxesStatistics, CellSelection
from engine.axes.small_batch import SmallBatchNoise
from engine.axes.train_eval import TrainEvalGap
from engine.config import NormSpec
from engine.norms import kinds
from engine.norms.kinds import KIND_AXES
from ui.formatting import count, format_number, format_reading
from ui.i18n import sentence_joiner, translate
from ui.labels import NORM_NAMES
from ui.text.latex import chain, latex_number


def _n(value: float, decimals: int = 4) -> str:
    return format_number(float(value), decimals)


def heatmap_note(stats: AxesStatistics, lang: str) -> str:
    """How to read the heatmap; the grey rows named only where the tensor has PAD rows."""
    note = translate("axes.heatmap.note", lang)
    if stats.real.all():
        return note
    return note + sentence_joiner(lang) + translate("axes.heatmap.note_pad", lang)


def legend(stats: AxesStatistics, lang: str) -> list[str]:
    """Markdown lines: how many statistics the kind computes, what one pools, γ and β."""
    spec = stats.spec
    batch, tokens, d = stats.x.shape
    kind = spec.kind

    sizes = dict(B=batch, T=tokens, d=d, G=spec.groups, per_group=d // spec.groups)
    with_beta = "beta" in KIND_AXES[kind].params
    params_key = "axes.legend.params" if with_beta else "axes.legend.params_gamma"
    if kind == "instancenorm":  # PyTorch's module has them only when asked (affine=True)
        params_key = "axes.legend.params_instancenorm"
    shape = "[" + ", ".join(str(n) for n in stats.param_shape) + "]"
    params = translate(params_key, lang, shape=shape)
    if not stats.n_statistics:
        return [
            translate("axes.legend.none", lang, name=NORM_NAMES[kind]),
            params + sentence_joiner(lang) + translate("axes.legend.alpha", lang),
        ]
    expression = f"{stats.count_formula} = "
    if len(stats.stat_shape) > 1:  # "B·T = 4·16 = 64"; a single axis needs no product
        expression += "·".join(str(n) for n in stats.stat_shape) + " = "
    expression += f"{stats.n_statistics:,}"
    one = "_one" if stats.n_statistics == 1 else ""  # B = T = 1: "1 (μ, σ) pair"
    what = "mean_squares" if kind == "rmsnorm" else "pairs"
    what = translate(f"axes.legend.{what}{one}", lang)
    count = translate(
        "axes.legend.count", lang, name=NORM_NAMES[kind], expression=expression, what=what
    )
    pooled_cells = int(stats.count.max()) if stats.count.size else 0
    cells = translate(
        "axes.legend.cells_one" if pooled_cells == 1 else "axes.legend.cells",
        lang,
        n=f"{pooled_cells:,}",
    )
    masked = "_masked" if stats.masked else ""  # BatchNorm's PAD cells left out of its count
    pooled = translate(f"axes.legend.pooled_{kind}{masked}", lang, cells=cells, **sizes)
    lines = [count, pooled, params]
    if stats.masked:
        lines.append(translate("axes.legend.masked", lang))
    return lines


def groupnorm_layouts(stats: AxesStatistics, lang: str) -> str | None:
    """GroupNorm's two counts on a sequence: B·G on [B, d, T] (this page), B·T·G per token."""
    if stats.spec.kind != "groupnorm":
        return None
    batch, tokens, d = stats.x.shape
    layouts = kinds.groupnorm_layouts(batch, tokens, d, stats.spec.groups)
    sequence_formula, sequence = layouts["sequence"]
    token_formula, per_token = layouts["per_token"]
    return translate(
        "axes.legend.groupnorm_layouts",
        lang,
        sequence_formula=sequence_formula,
        sequence=f"{sequence:,}",
        token_formula=token_formula,
        per_token=f"{per_token:,}",
        tokens=tokens,
    )


def leak_note(kind: str, tokens: int, lang: str) -> str | None:
    """Kinds whose statistics pool over T let a later token change earlier outputs (at
    T = 1 there is no later token)."""
    if not KIND_AXES[kind].mixes_positions or tokens == 1:
        return None
    return translate("axes.legend.leaks", lang, name=NORM_NAMES[kind])


def nan_note(stats: AxesStatistics, lang: str) -> str | None:
    """Where outputs are NaN (left out of the heatmap), how many and why: a statistic of 0
    (the pooled values all equal, or all 0 for RMSNorm) under ε = 0 divides 0 by 0 (under
    ε > 0 the cause is not known: none is given).  The real tokens' outputs are counted
    first; those of PAD positions (the gray rows, all one value: RMSNorm at ε = 0 makes
    each of a zero PAD row 0/0) apart."""
    d, pad = stats.y.shape[-1], ~stats.real
    nan, pad_nan = (int(np.isnan(stats.y[cells]).sum()) for cells in (stats.real, pad))
    counts = {"nan": f"{nan:,}", "total": f"{int(stats.real.sum()) * d:,}"}
    pad_counts = {"nan": f"{pad_nan:,}", "total": f"{int(pad.sum()) * d:,}"}
    said = []
    if nan:  # beside PAD positions, the count is the real tokens'
        said.append(
            translate("axes.legend.nan_outputs" + ("_real" if pad.any() else ""), lang, **counts)
        )
    if pad_nan:
        key = "axes.legend.nan_pad_too" if nan else "axes.legend.nan_pad_only"
        said.append(translate(key, lang, **pad_counts))
    if said and stats.spec.eps == 0:
        said.append(translate("axes.legend.nan_cause", lang))
    return sentence_joiner(lang).join(said) if said else None


def _signed(value: float) -> str:
    return f"({latex_number(value)})" if value < 0 else latex_number(value)


def cell_arithmetic(stats: AxesStatistics, selection: CellSelection) -> str:
    """LaTeX: the clicked cell normalized with its statistic (γ = 1, β = 0), as computed."""
    kind = stats.spec.kind
    x, y = selection.x, selection.y
    if kind == "dyt":
        alpha = NormSpec(kind="dyt").alpha
        return chain(
            "y",
            r"\tanh(\alpha x)",
            rf"\tanh({latex_number(alpha)}\times{_signed(x)})",
            latex_number(y),
        )
    eps = latex_number(stats.spec.eps)
    if kind == "rmsnorm":
        return chain(
            "y",
            r"\frac{x}{\sqrt{\overline{x^2} + \varepsilon}}",
            rf"\frac{{{latex_number(x)}}}{{\sqrt{{{latex_number(selection.var)} + {eps}}}}}",
            latex_number(y),
        )
    return chain(
        "y",
        r"\frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}",
        rf"\frac{{{latex_number(x)} - {_signed(selection.mean)}}}"
        rf"{{\sqrt{{{latex_number(selection.var)} + {eps}}}}}",
        latex_number(y),
    )


# --- BatchNorm's five failures: one lesson each ---------------------------------------------


def padding_lesson(result: PaddingPollution, lang: str) -> str:
    if result.pad_fraction == 0:  # one sentence, or every length T: nothing to pollute
        return translate("axes.padding.no_pad", lang, ln=_n(result.ln_real_token_max_diff))
    return translate(
        "axes.padding.lesson",
        lang,
        pad=f"{format_number(100 * result.pad_fraction, 1)}\u00a0%",
        shift=_n(result.max_mean_shift, 3),
        low=_n(result.std_ratio_min, 3),
        high=_n(result.std_ratio_max, 3),
        bn=_n(result.bn_real_token_max_diff, 3),
        ln=_n(result.ln_real_token_max_diff),
    )


def small_batch_lesson(result: SmallBatchNoise, lang: str) -> str:
    """The mean's noise against the batch size; where one value is all a channel has (b = 1
    at T = 1), why that batch variance has no dot: its spread is 0, off a log axis."""
    ratio = result.spread_ratio
    lone = [int(b) for b, n in zip(result.batch_sizes, result.values_per_channel) if n == 1]
    n_small = int(result.values_per_channel[0])
    values = translate("axes.small.values", lang, n=n_small)
    lesson = translate(
        "axes.small.lesson" if len(result.batch_sizes) > 1 else "axes.small.lesson_single",
        lang,
        b_small=int(result.batch_sizes[0]),
        values=translate("axes.small.values_one", lang) if n_small == 1 else values,
        spread_small=_n(result.mean_spread[0], 3),
        b_large=int(result.batch_sizes[-1]),
        spread_large=_n(result.mean_spread[-1], 3),
        low=_n(float(ratio.min()), 2),
        high=_n(float(ratio.max()), 2),
    )
    if not lone:
        return lesson
    missing = translate("axes.small.variance_zero", lang, b=lone[0])
    return lesson + sentence_joiner(lang) + missing


def train_eval_lesson(result: TrainEvalGap, lang: str) -> str:
    return translate(
        "axes.train_eval.lesson",
        lang,
        steps=result.steps,
        momentum=_n(result.momentum),
        error=_n(result.running_mean_error, 3),
        shift=_n(result.shift, 2),
        gap=_n(result.gap_mean, 3),
        gap_max=_n(result.gap_max, 3),
    )


def batch_of_one_facts(result: BatchOfOne, lang: str) -> list[str]:
    """What happens with one value per channel, each fact with its measured number."""
    d = len(result.x)
    facts = [
        translate("axes.one.variance", lang, var=_n(float(abs(result.variance).max()))),
        translate(
            "axes.one.collapses",
            lang,
            eps=format_reading(result.eps),  # as the ε slider writes it: 10⁻⁵
            diff=format_reading(result.max_abs_y_minus_beta),
            native=format_reading(result.native_max_abs_minus_beta),
            dtype=result.dtype,
            exact="float64",
        ),
        translate(
            "axes.one.eps_zero",
            lang,
            nan=result.nan_count_eps0,
            d=d,
            native=_n(result.native_eps0_max_abs_minus_beta),
        ),
    ]
    if result.torch_train_error_type:
        facts.append(
            translate(
                "axes.one.torch_raises",
                lang,
                type=result.torch_train_error_type,
                message=result.torch_train_error,
            )
        )
    else:
        facts.append(translate("axes.one.torch_runs", lang))
    finite = "finite" if result.torch_eval_finite else "nonfinite"
    facts.append(translate(f"axes.one.torch_eval_{finite}", lang))
    trains = "trains" if result.torch_sequence_trains else "refused"
    var = _n(result.sequence_min_var, 3)
    tokens = result.sequence_tokens
    if tokens == 1 and not result.torch_sequence_trains:  # no contrast: the same batch of one
        trains = "one_token"
    facts.append(translate(f"axes.one.sequence_{trains}", lang, tokens=tokens, var=var))
    return facts


def batch_of_one_lesson(result: BatchOfOne, lang: str) -> str:
    key = "verdict_holds" if result.claim_holds else "verdict"
    return translate(
        f"axes.one.{key}",
        lang,
        diff=_n(result.max_abs_y_minus_beta),
        native=format_reading(result.native_max_abs_minus_beta),
        dtype=result.dtype,
    )


def causal_lesson(result: CausalLeak, lang: str) -> str:
    earlier = dict(zip(result.kinds, result.earlier_max))
    leaking = [kind for kind, leaks in zip(result.kinds, result.leaks_future) if leaks]
    sealed = [kind for kind in result.kinds if kind not in leaking]
    separator = translate("axes.causal.separator", lang)

    def name(kind: str) -> str:  # GroupNorm with its G, where the result is read
        return (
            f"{NORM_NAMES[kind]} (G = {result.groups})" if kind == "groupnorm" else NORM_NAMES[kind]
        )

    moved = separator.join(f"{name(k)} {_n(earlier[k], 3)}" for k in leaking)
    same = separator.join(name(k) for k in sealed)
    zero = max((earlier[k] for k in sealed), default=math.nan)
    lesson = translate(
        "axes.causal.lesson",
        lang,
        position=result.position,
        moved=moved or "—",
        sealed=same or "—",
        zero=_n(zero),
    )
    # across sequences only where there are others and BatchNorm moved them (B = 1: none)
    other = float(result.other_samples[result.kinds.index("batchnorm")].max(initial=0.0))
    if other > 0:
        across = translate("axes.causal.across", lang, other=_n(other, 3))
        lesson = sentence_joiner(lang).join([lesson, across])
    return lesson


MAX_LISTED_CHANNELS = 12  # the example slice's channels listed before "…"


def example_channels(stats: AxesStatistics, lang: str) -> str | None:
    """Which of the dump's channels the example slice's columns are (None: not an example)."""
    channels = stats.channels
    if channels is None:
        return None
    d, layer = len(channels), stats.spec.layer
    x = stats.x.reshape(-1, d)  # [B*T, d]
    peak = int(abs(x).max(axis=0).argmax())  # the column holding the largest |x|
    listed = ", ".join(str(c) for c in channels[:MAX_LISTED_CHANNELS])
    if d > MAX_LISTED_CHANNELS:
        listed += ", …"
    key = "axes.example_all_channels" if d == EXAMPLE_CHANNELS else "axes.example_channels"
    key += "_one" if d == 1 else ""
    return translate(
        key,
        lang,
        d=d,
        last=d - 1,
        layer=layer,
        channels=listed,
        peak_column=peak,
        peak_channel=channels[peak],
        peak=format_reading(float(abs(x).max()), 1),  # "26,464", as the Dumps page
    )


def summarised_note(cells: int, block: tuple[int, int], last: tuple[int, int], lang: str) -> str:
    """A summarised heatmap: its ``cells``, each brick's (rows, channels), and the last
    brick of an axis where the axis does not divide into whole bricks (``last``)."""
    note = translate("axes.summarised", lang, cells=f"{cells:,}", **block_size(*block, lang))
    if last[0] != block[0]:
        rows = translate("axes.summarised_last_rows", lang, **block_size(last[0], 1, lang))
        note += sentence_joiner(lang) + rows
    if last[1] != block[1]:
        cols = translate("axes.summarised_last_cols", lang, **block_size(1, last[1], lang))
        note += sentence_joiner(lang) + cols
    return note


def block_size(rows: int, cols: int, lang: str) -> dict[str, str]:
    """A summarised heatmap's brick, "8 rows" × "1 channel" (not "1 channels")."""
    row_key = "axes.block_rows_one" if rows == 1 else "axes.block_rows"
    col_key = "axes.block_cols_one" if cols == 1 else "axes.block_cols"
    return {
        "rows": translate(row_key, lang, n=count(rows)),
        "cols": translate(col_key, lang, n=count(cols)),
    }
