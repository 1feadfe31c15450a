"""The Vector Lab's result sections (Streamlit); text comes from ``vector_lab_steps``."""

from __future__ import annotations

import inspect
import math

import pandas as pd
import streamlit as st
import torch

from engine import describe_backend
from engine.config import DTYPES
from engine.norms import reference
from engine.norms.worked import VectorExplanation
from ui.figures.vector_lab import ChartLabels, input_output_figure
from ui.formatting import format_number, format_vector
from ui.i18n import current_language, t
from ui.labels import norm_label
from ui.text.vector_lab_steps import is_row_kind, worked_steps


def steps(ex: VectorExplanation) -> None:
    st.subheader(t("vector_lab.steps_title"))
    engine_name = f"Triton · {describe_backend().device}" if ex.backend == "triton" else "PyTorch"
    st.caption(t("vector_lab.computed_by", backend=engine_name))
    for step in worked_steps(ex, current_language()):
        st.caption(step.caption)
        st.latex(step.latex)
    if not is_row_kind(ex.spec.kind):
        _statistics_table(ex)


def _statistics_table(ex: VectorExplanation) -> None:
    st.caption(t("vector_lab.stats_title"))
    frame = pd.DataFrame(
        {"μ": ex.statistics_mean, "σ²": ex.statistics_var, "rstd": ex.statistics_rstd}
    )
    st.dataframe(frame.map(format_number), width="stretch", height=min(38 * (len(frame) + 1), 300))


def chart(ex: VectorExplanation) -> None:
    st.subheader(t("vector_lab.chart_title"))
    row = ex.row_index
    series = [(norm_label(ex.spec.kind), ex.outputs[row])]
    if ex.spec.kind != "layernorm":
        series.append(("LayerNorm (γ=1, β=0)", ex.comparison.layernorm))
    if ex.spec.kind != "rmsnorm":
        series.append(("RMSNorm (γ=1, β=0)", ex.comparison.rmsnorm))
    labels = ChartLabels(
        t("vector_lab.chart_input"),
        t("vector_lab.chart_output"),
        t("vector_lab.chart_nonfinite"),
        t("vector_lab.chart_index"),
    )
    st.plotly_chart(
        input_output_figure(ex.rows[row], series, labels), width="stretch", key="vl_chart"
    )


def comparison(ex: VectorExplanation) -> None:
    st.subheader(t("vector_lab.compare_title"))
    st.caption(t("vector_lab.compare_caption"))
    c = ex.comparison
    frame = pd.DataFrame(
        {
            "LayerNorm": [
                format_vector(c.layernorm),
                format_number(c.layernorm_l2),
                format_number(c.layernorm_ones),
                format_number(c.layernorm_cos_input),
                _ratios(c.layernorm),
            ],
            "RMSNorm": [
                format_vector(c.rmsnorm),
                format_number(c.rmsnorm_l2),
                format_number(c.rmsnorm_ones),
                format_number(c.rmsnorm_cos_input),
                _ratios(c.rmsnorm),
            ],
        },
        index=[
            "y",
            t("vector_lab.compare_l2", sqrt_d=format_number(c.sqrt_d)),
            t("vector_lab.compare_ones"),
            t("vector_lab.compare_cos"),
            t("vector_lab.compare_ratios"),
        ],
    )
    st.table(frame)
    notes = [
        t("vector_lab.compare_l2_note", sqrt_d=format_number(c.sqrt_d)),
        t(
            "vector_lab.compare_ones_note",
            ln_ones=format_number(c.layernorm_ones),
            rms_ones=format_number(c.rmsnorm_ones),
        ),
        t(
            "vector_lab.compare_direction_note",
            rms_cos=format_number(c.rmsnorm_cos_input),
            ln_cos=format_number(c.layernorm_cos_input),
        ),
        _rms_note(ex.row_stats),
    ]
    st.markdown("\n".join(f"- {note}" for note in notes))


def _ratios(values) -> str:
    pivot = next((v for v in values if math.isfinite(v) and v != 0), None)
    if pivot is None or len(values) > 8:
        return "—"
    return " : ".join(f"{v / pivot:.2f}".rstrip("0").rstrip(".") for v in values)


def _rms_note(stats) -> str:
    if stats.mean == 0:
        return t("vector_lab.compare_equal_note")
    ratio = stats.rms / stats.std if stats.std > 0 else math.inf
    return t(
        "vector_lab.compare_rms_note",
        rms=format_number(stats.rms),
        std=format_number(stats.std),
        mean=format_number(stats.mean),
        ratio=format_number(ratio, 2),
    )


def precision(ex: VectorExplanation, typed_rows, fixed: VectorExplanation | None) -> None:
    """The precision story: storage rounding, overflow, and the float32 fix."""
    st.subheader(t("vector_lab.precision_title"))
    info = torch.finfo(DTYPES[ex.input_dtype])
    compute = ex.spec.compute_dtype
    st.markdown(
        t(
            "vector_lab.precision_summary",
            dtype=ex.input_dtype,
            max=format_number(info.max),
            digits=int(-math.log10(info.eps)) + 1,
            compute=compute,
        )
    )
    changed = [
        (a, b)
        for typed, stored in zip(typed_rows, ex.rows)
        for a, b in zip(typed, stored)
        if a != b
    ]
    if changed:
        st.info(
            t(
                "vector_lab.rounded_note",
                dtype=ex.input_dtype,
                count=len(changed),
                typed=repr(changed[0][0]),
                stored=repr(changed[0][1]),
            )
        )
    if ex.zero_variance:
        st.warning(t("vector_lab.zero_variance"), icon=":material/warning:")
        return
    if ex.overflow is None and ex.nonfinite_outputs == 0:
        st.success(t("vector_lab.all_finite", compute=compute))
        return
    if ex.overflow is not None:
        o = ex.overflow
        kind = ex.spec.kind if ex.spec.kind in ("rmsnorm", "layernorm") else "other"
        st.error(
            t(
                f"vector_lab.overflow_{o.quantity}",
                dtype=compute,
                value=format_number(o.exact_value),
                max=format_number(o.dtype_max),
                ratio=format_number(o.exact_value / o.dtype_max, 1),
            )
            + " "
            + t(f"vector_lab.overflow_consequence_{kind}")
        )
    if ex.nonfinite_outputs:
        st.warning(t("vector_lab.nonfinite_outputs", count=ex.nonfinite_outputs))
    if fixed is not None and fixed.nonfinite_outputs == 0:
        st.markdown(t("vector_lab.overflow_fix"))
        st.code(
            f"{compute}: y = {format_vector(ex.outputs[ex.row_index])}\n"
            f"float32: y = {format_vector(fixed.outputs[fixed.row_index])}",
            language=None,
        )


def outputs_table(ex: VectorExplanation) -> None:
    if len(ex.rows) < 2 or len(ex.rows[0]) > 64:
        return
    st.subheader(t("vector_lab.outputs_title"))
    frame = pd.DataFrame(ex.outputs, columns=[f"y{i + 1}" for i in range(len(ex.rows[0]))])
    frame.index = [f"#{i + 1}" for i in range(len(frame))]
    st.dataframe(frame.map(format_number), width="stretch")


def formula(ex: VectorExplanation) -> None:
    with st.expander(t("vector_lab.formula_title"), icon=":material/code:"):
        st.code(inspect.getsource(reference.FORMULAS[ex.spec.kind]), language="python")
