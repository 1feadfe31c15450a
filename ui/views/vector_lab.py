"""The Vector Lab's result sections (Streamlit); text comes from ``ui/text/vector_lab_*``."""

from __future__ import annotations

import inspect
import math
from urllib.parse import parse_qsl

import numpy as np
import pandas as pd
import streamlit as st

from engine.config import HALF_DTYPES, PRECISION_KINDS
from engine.norms import reference
from engine.norms.kinds import PER_TOKEN_KINDS
from engine.norms.precision import PrecisionStory
from engine.norms.precision_facts import DefaultEps
from engine.norms.worked import VectorExplanation
from ui import presenting
from ui.figures.vector_lab import input_output_figure
from ui.formatting import (
    count,
    format_cosine,
    format_number,
    format_power,
    format_reading,
    format_vector,
    number_text,
    true_minus,
)
from ui.i18n import current_language, sentence_joiner, t
from ui.labels import NORM_NAMES, label
from ui.text.vector_lab_compare import comparison_notes, ratios, undefined_cell
from ui.text.vector_lab_precision import (
    DtypeFacts,
    constant_row_note,
    default_eps_sentence,
    dtype_facts,
    overview,
    path_messages,
    steps_path,
    summary,
)
from ui.text.vector_lab_steps import worked_steps
from ui.url.codec import query_string
from ui.url.pages import GEOMETRY
from ui.views.charts import show_chart


def layout():
    """The lab's places, (inputs, steps, results), in one container that stacks its columns
    on a narrow screen (ui/styles/base.css).  On a screen, the inputs take the left third and
    the steps and results run down the other two; presenting, the inputs sit closed in their
    box above, and the steps run beside the results: the left third held only that box, and
    the chart came three screens down."""
    box = st.container(key="vl_layout")
    if presenting.presenting():
        inputs = box.container(key="controls_vl_place")  # only controls: results hides it
        steps_column, results = box.columns(2, gap="large")
        return inputs, steps_column, results
    inputs, results = box.columns([1, 2], gap="large")
    return inputs, results, results


def steps(ex: VectorExplanation) -> None:
    st.subheader(t("vector_lab.steps_title"))
    engine_name = f"Triton · {ex.device}" if ex.backend == "triton" else "PyTorch"
    st.caption(t("vector_lab.computed_by", backend=engine_name))
    for step in worked_steps(ex, current_language()):
        st.caption(step.caption)
        st.latex(step.latex)
    # γ = 1e-320 scales by 0 in float32; β = 70,000 shifts by ∞ in float16
    for said, found in (("lost", ex.parameters_lost), ("overflow", ex.parameters_overflowed)):
        _parameter_notes(ex, said, found)
    if ex.spec.kind not in PER_TOKEN_KINDS:  # pooled statistics: a table of them
        _statistics_table(ex)
    if ex.one_value_per_channel:  # BatchNorm's, InstanceNorm's or GroupNorm's own words
        key = {"instancenorm": "one_value_instancenorm", "groupnorm": "one_value_groupnorm"}
        said = key.get(ex.spec.kind, "one_value_per_channel")
        st.info(t(f"vector_lab.{said}", groups=ex.spec.groups), icon=":material/info:")


def _parameter_notes(ex: VectorExplanation, said: str, found) -> None:
    """γ or β values the statistics' dtype turns into 0 ("lost") or ±∞ ("overflow")."""
    for name, value, entries in found:
        symbol = {"weight": "γ", "bias": "β"}[name]
        st.info(
            t(
                f"vector_lab.parameter_{said}",
                name=symbol,
                value=true_minus(number_text(value)),
                count=entries,
                dtype=ex.statistics_dtype,
            ),
            icon=":material/info:",
        )


def _statistics_table(ex: VectorExplanation) -> None:
    st.caption(t("vector_lab.stats_title"))
    frame = pd.DataFrame(
        {"μ": ex.statistics_mean, "σ²": ex.statistics_var, "rstd": ex.statistics_rstd}
    )
    # counted from 1, as the page counts rows and channels (the index was 0, 1, …)
    each = "group" if ex.spec.kind == "groupnorm" else "channel"
    frame.index = pd.RangeIndex(1, len(frame) + 1, name=t(f"vector_lab.stats_index_{each}"))
    presenting.table(frame, rows=8, writers=dict.fromkeys(frame.columns, format_number))


def chart(ex: VectorExplanation) -> None:
    st.subheader(t("vector_lab.chart_title"))
    row = ex.row_index
    series = [(NORM_NAMES[ex.spec.kind], ex.outputs[row], ex.spec.kind)]
    if ex.spec.kind != "layernorm":
        series.append(("LayerNorm (γ=1, β=0)", ex.comparison.layernorm, "layernorm"))
    if ex.spec.kind != "rmsnorm":
        series.append(("RMSNorm (γ=1, β=0)", ex.comparison.rmsnorm, "rmsnorm"))
    show_chart(input_output_figure(ex.rows[row], series, current_language()), "vl_chart")


def comparison(ex: VectorExplanation) -> None:
    st.subheader(t("vector_lab.compare_title"))
    st.caption(t("vector_lab.compare_caption"))
    c = ex.comparison
    columns = {}
    for kind, values, l2, ones, cos in (
        ("layernorm", c.layernorm, c.layernorm_l2, c.layernorm_ones, c.layernorm_cos_input),
        ("rmsnorm", c.rmsnorm, c.rmsnorm_l2, c.rmsnorm_ones, c.rmsnorm_cos_input),
    ):
        gap = c.layernorm_cos_gap if kind == "layernorm" else c.rmsnorm_cos_gap
        columns[NORM_NAMES[kind]] = [
            format_vector(values),
            format_reading(l2),
            format_reading(ones),  # beside a cosine that writes its gap as ×10ⁿ
            undefined_cell(ex, kind, format_cosine(cos, gap)),  # no direction: no cosine
            ratios(values),
        ]
    frame = pd.DataFrame(
        columns,
        index=[
            "y",
            t("vector_lab.compare_l2", sqrt_d=format_number(c.sqrt_d)),
            t("vector_lab.compare_ones"),
            t("vector_lab.compare_cos"),
            t("vector_lab.compare_ratios"),
        ],
    )
    st.table(frame)
    notes = comparison_notes(ex, current_language())
    st.markdown("\n".join(f"- {note}" for note in notes))
    _geometry_link(ex)


GEOMETRY_WIDTHS = (2, 3)  # rows the Geometry page draws as a picture


def _geometry_link(ex: VectorExplanation) -> None:
    """A row of 2 or 3 numbers opens on the Geometry page, followed step by step."""
    row = ex.rows[ex.row_index]
    if len(row) not in GEOMETRY_WIDTHS:
        return
    # float32's shortest repr: the Geometry page reads it back as the same float32 numbers
    text = ", ".join(str(np.float32(value)).removesuffix(".0") for value in row)
    values = {"ge_section": "vector", "ge_vector": text}
    eps = ex.spec.eps if ex.spec.eps in GEOMETRY["ge_eps"].choices else GEOMETRY["ge_eps"].default
    values["ge_eps"] = eps
    query = query_string(GEOMETRY, values, current_language())
    said = [t("vector_lab.geometry_link_help", eps=format_power(eps, 4))]
    if eps != ex.spec.eps:  # not on Geometry's menu: said, not changed silently
        said.append(t("vector_lab.geometry_link_eps", own=format_power(ex.spec.eps, 4)))
    half = next((d for d in (ex.input_dtype, ex.statistics_dtype) if d in HALF_DTYPES), None)
    if half is not None:  # the row itself is carried; its outputs' half rounding is not
        said.append(t("vector_lab.geometry_link_float32", dtype=half))
    st.page_link(
        "app_pages/geometry.py",
        label=t("vector_lab.geometry_link"),
        icon=":material/public:",
        help=sentence_joiner(current_language()).join(said),
        query_params=parse_qsl(query),
    )


def precision(
    ex: VectorExplanation,
    typed_rows,
    facts: DtypeFacts,
    default_eps: dict[str, tuple[DefaultEps, ...]],
) -> None:
    """The precision story: storage rounding (of ``typed_rows``, None where nobody saw the
    values before they were stored: a random draw), then every real half-precision path."""
    lang = current_language()
    st.subheader(t("vector_lab.precision_title"))
    st.markdown(summary(facts, lang))
    if ex.input_dtype in HALF_DTYPES or ex.spec.compute_dtype in HALF_DTYPES:  # else: all float32
        compute = label("compute", ex.spec.compute_dtype)
        st.caption(t("vector_lab.precision.steps_path", compute=compute))
    changed = [  # rounded, not flushed to 0: that has its own note (``underflow_notes``)
        (a, b)
        for typed, stored in zip(typed_rows or (), ex.rows)
        for a, b in zip(typed, stored)
        if a != b and b != 0
    ]
    if changed:
        st.info(
            t(
                "vector_lab.rounded_note",
                dtype=ex.input_dtype,
                count=count(len(changed)),
                # exact, as a box reads it (1e4 -> 10000), with the minus a page writes
                typed=true_minus(number_text(changed[0][0])),
                stored=true_minus(number_text(changed[0][1])),
            )
        )
    if ex.zero_variance or ex.underflowed is not None:  # rstd = 1/√0: why, and what ε is for
        dtype = ex.input_dtype
        default = default_eps_sentence(default_eps[dtype], ex.spec.kind, dtype, lang)
        kind = "rmsnorm" if ex.spec.kind == "rmsnorm" else "layernorm"
        if ex.zero_variance:
            lost = ""  # ε > 0 typed, 0 in the statistics' dtype
            if ex.spec.eps != 0:
                lost = t(
                    "vector_lab.eps_lost", eps=number_text(ex.spec.eps), dtype=ex.statistics_dtype
                )
            said = lost + t(f"vector_lab.zero_variance_{kind}", default=default)
        else:  # not constant, yet its statistic is 0
            deviation, smallest = (format_reading(v) for v in ex.underflowed)
            said = t(
                f"vector_lab.underflow_{kind}",
                dtype=ex.statistics_dtype,
                deviation=deviation,
                smallest=smallest,
                default=default,
            )
        st.warning(said, icon=":material/warning:")
    elif ex.nonfinite_outputs:  # the steps' y, γ and β included
        one = "_one" if ex.nonfinite_outputs == 1 else ""
        st.warning(t(f"vector_lab.nonfinite_outputs{one}", count=ex.nonfinite_outputs))
    if ex.precision is None:
        _no_story(ex)
    else:
        _story(ex, ex.precision, facts, lang)


def _no_story(ex: VectorExplanation) -> None:
    half = ex.input_dtype in HALF_DTYPES or ex.spec.compute_dtype in HALF_DTYPES
    if half and ex.spec.kind not in PRECISION_KINDS:
        said = t("vector_lab.precision.not_covered", norm=NORM_NAMES[ex.spec.kind])
        if math.isfinite(ex.float64_error):  # its rounding, measured against float64
            said += sentence_joiner(current_language()) + t(
                "vector_lab.precision.float64_error",
                norm=NORM_NAMES[ex.spec.kind],
                dtype=ex.statistics_dtype,
                error=format_reading(ex.float64_error),
            )
        st.caption(said)
    elif not half and ex.spec.kind in PRECISION_KINDS:
        st.caption(t("vector_lab.precision.float32_only", norm=NORM_NAMES[ex.spec.kind]))


def _story(ex: VectorExplanation, story: PrecisionStory, facts: DtypeFacts, lang: str) -> None:
    """Every real path on the worked row: an overview table, then each path's code and story."""
    row = ex.row_index
    kind = story.spec.kind
    st.markdown(
        t(
            "vector_lab.precision.story_intro",
            count=len(story.paths),
            norm=NORM_NAMES[kind],
            dtype=story.spec.dtype,
            row=row + 1,
        )
    )
    names, columns = overview(story, row, lang, steps_path(ex))
    # a table that wraps its cells: a data grid hid its last column (y) at 1400 px; its
    # cells keep a Chinese word whole (ui/styles/base.css)
    with st.container(key="vl_precision_table"):
        st.table(pd.DataFrame(columns, index=names))
    st.caption(t("vector_lab.precision.from_rstd"))
    for message in path_messages(story, row, lang):
        expanded = message.level != "ok" and not ex.zero_variance
        with st.expander(message.title, expanded=expanded):
            st.code(message.code, language="python", wrap_lines=True)
            if ex.zero_variance:
                continue  # the warning above says it once for every path
            show = {"ok": st.success, "warning": st.warning, "error": st.error}[message.level]
            show(message.text)
    note = constant_row_note(story, row, lang)
    if note is not None:
        st.info(note, icon=":material/info:")
    facts_text = dtype_facts(facts, lang)
    if facts_text is not None:
        st.caption(facts_text)


def outputs_table(ex: VectorExplanation) -> None:
    if len(ex.rows) < 2 or len(ex.rows[0]) > 64:
        return
    st.subheader(t("vector_lab.outputs_title"))
    frame = pd.DataFrame(ex.outputs, columns=[f"y{i + 1}" for i in range(len(ex.rows[0]))])
    frame.index = [f"#{i + 1}" for i in range(len(frame))]
    presenting.table(frame, rows=10, writers=dict.fromkeys(frame.columns, format_number))


def formula(ex: VectorExplanation) -> None:
    # Filled only once opened (a rerun): a code block makes the browser fetch and run the
    # syntax highlighter (a large script), which a first view of the page does not need.
    box = st.expander(
        t("vector_lab.formula_title"), icon=":material/code:", key="formula_open", on_change="rerun"
    )
    if box.open:
        box.code(inspect.getsource(reference.FORMULAS[ex.spec.kind]), language="python")
