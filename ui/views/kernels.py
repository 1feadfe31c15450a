"""Kernels page sections (Streamlit): backend, timings, recorded results, roofline."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from engine.backend import BackendInfo
from engine.config.kernels import MAX_FUSED_N, WIDE_ROW_FUSED_PASSES, WIDE_ROW_PASSES
from engine.perf.roofline import (
    FLOPS_PER_ELEMENT,
    FUSED_PASSES,
    GPU_NAME,
    UNFUSED_ADD_NORM_PASSES,
    UNFUSED_PASSES,
    NormTraffic,
)
from engine.perf.timing import (
    MAX_SPREAD,
    PAPER_CLAIM,
    SOURCE_CLAIM_MODEL,
    SOURCE_CLAIM_RATIO,
    NormTimings,
)
from ui import presenting
from ui.figures.kernels import recorded_bandwidth_figure, timing_figure
from ui.formatting import bytes_text, bytes_texts, count, format_number, format_reading
from ui.i18n import catalog, current_language, join, t
from ui.labels import label
from ui.text.kernels import busy_places
from ui.text.models import seconds_text
from ui.views.charts import show_chart

_OPS = ("row_forward", "row_backward", "fused", "channel", "other")
# what ``benchmarks/bench_kernels.py --out benchmarks/results`` writes on a GPU machine
# a parameter share from which the activations' bytes and times are said to leave them out
PARAMETERS_SAID = 0.01
RECORDED = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "bench_kernels.csv"


def backend(info: BackendInfo) -> None:
    st.subheader(t("kernels.backend_title"))
    c1, c2, c3 = st.columns(3)
    c1.metric(t("kernels.backend_engine"), info.engine)
    c2.metric(t("kernels.backend_device"), info.device)
    c3.metric(
        t("kernels.backend_versions"),
        f"torch {info.torch_version}",
        delta=f"Triton {info.triton_version or '—'} · Python {info.python_version}",
        delta_color="off",
        delta_arrow="off",  # a second line of versions, not a change
    )
    interpreter = t("kernels.on") if info.interpreter else t("kernels.off")
    st.caption(t("app.labelled", label=t("kernels.backend_interpreter"), value=interpreter))
    st.markdown(f"**{t('kernels.where_title')}**")
    frame = pd.DataFrame(
        {
            t("kernels.where_gpu"): [t(f"kernels.gpu_{op}") for op in _OPS],
            t("kernels.where_cpu"): [t(f"kernels.cpu_{op}") for op in _OPS],
        },
        index=[t(f"kernels.op_{op}") for op in _OPS],
    )
    frame.index.name = t("kernels.where_op")
    st.container(key="kn_where").table(frame)


def _claims() -> dict:
    """The claims the timing tests, from engine/perf/timing.py.  The paper's percentages are
    whole-model running time: they are quoted, never turned into a ratio of the norm op."""
    low, high = PAPER_CLAIM
    return {
        "paper_low": format_number(round(100 * low, 6)),
        "paper_high": format_number(round(100 * high, 6)),
        "source_ratio": format_number(SOURCE_CLAIM_RATIO),
        "source_model": SOURCE_CLAIM_MODEL,
    }


def timing_intro() -> None:
    st.markdown(t("kernels.timing_intro", **_claims()))


def memory_intro() -> None:
    st.markdown(
        t(
            "kernels.memory_intro",
            ln_flops=FLOPS_PER_ELEMENT["layernorm"],
            rms_flops=FLOPS_PER_ELEMENT["rmsnorm"],
        )
    )


def timings(timed: NormTimings) -> None:
    first = timed.rows[0]
    st.caption(
        t(
            "kernels.measured_at",
            time=first["measured_at"],
            device=first["device"],
            provider=first["provider"],
        )
    )
    show_chart(timing_figure(timed.rows, current_language()), "kn_timing_chart")
    st.caption(t("kernels.timing_bars"))  # said here: in the axis title it was cut at the top
    st.markdown(f"**{t('kernels.ratio_title')}**")
    ratios = pd.DataFrame(timed.ratios)
    ratios["shown"] = [
        format_number(r.ratio, 2) if r.verdict == "ranked" else t(f"kernels.verdict_{r.verdict}")
        for r in ratios.itertuples()
    ]
    busy = busy_places(timed.ratios, current_language())
    if busy:
        st.warning(t("kernels.busy_warning", widths=busy), icon=":material/hourglass_top:")
    table = ratios.pivot(index="width", columns="pass", values="shown")
    table.columns = [label("pass", p) for p in table.columns]
    table.index = [count(int(width)) for width in table.index]  # "4,096", as the chart writes it
    table.index.name = t("kernels.axis_width")  # not the column id "width"
    presenting.table(table, len(table))
    st.caption(t("kernels.ratio_rule", max_spread=format_number(100 * MAX_SPREAD)))
    st.caption(t("kernels.ratio_note", **_claims()))


def _recorded_words(value):
    """A recorded cell in the reader's words where the file writes one of ours ("forward",
    "budget", "ours"); anything else (numbers, dtypes, a provider's name) as written."""
    key = f"kernels.recorded_value.{value}"
    return t(key) if isinstance(value, str) and key in catalog(current_language()) else value


def recorded() -> None:
    """The GPU figures ``benchmarks/bench_kernels.py`` recorded, when a GPU run left them."""
    st.subheader(t("kernels.recorded_title"))
    try:
        frame = pd.read_csv(RECORDED) if RECORDED.is_file() else pd.DataFrame()
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        why = type(error).__name__  # a file cut short or damaged: an operator's to rewrite
        shown = f"`benchmarks/results/{RECORDED.name}`"
        st.warning(t("kernels.recorded_unreadable", file=shown, why=why), icon=":material/error:")
        return
    if frame.empty:
        st.info(t("kernels.recorded_none"), icon=":material/info:")
        return
    frame = frame.map(_recorded_words)
    if {"device", "measured_at"} <= set(frame.columns):
        devices, dates = (
            join(frame[c].dropna().astype(str).unique(), current_language())
            for c in ("device", "measured_at")
        )
        st.caption(t("kernels.recorded_source", devices=devices, dates=dates))
    else:
        st.caption(t("kernels.recorded_unsourced"))
    show_chart(
        recorded_bandwidth_figure(frame.to_dict("records"), current_language()), "kn_recorded_chart"
    )
    floats = {c: format_number for c in frame if frame[c].dtype.kind == "f"}
    words = catalog(current_language())
    headers = {
        c: words[f"kernels.recorded_column.{c}"]
        for c in frame
        if f"kernels.recorded_column.{c}" in words
    }
    writers = {headers.get(c, c): write for c, write in floats.items()}
    presenting.table(frame.rename(columns=headers), len(frame), index=False, writers=writers)


def roofline(ln: NormTraffic, rms: NormTraffic) -> None:
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(t("kernels.memory_bytes"), bytes_text(ln.bytes_moved))
    # one metric per norm: "1.75 / 1" under one label read like a ratio 1.75 : 1 (the unit
    # short, FLOP/B as on the Model catalog, so that four values fit their columns)
    for column, kind, traffic in ((c2, "layernorm", ln), (c3, "rmsnorm", rms)):
        column.metric(
            t("kernels.memory_intensity", norm=label("norm", kind)),
            t("kernels.intensity_value", value=format_number(traffic.intensity, 3)),
        )
    c4.metric(
        t("kernels.memory_ridge", gpu=GPU_NAME),
        t("kernels.intensity_value", value=f"{ln.ridge:.1f}"),
    )
    st.markdown(
        t(
            "kernels.memory_verdict",
            gpu=GPU_NAME,
            intensity=format_number(ln.intensity, 3),
            rms_intensity=format_number(rms.intensity, 3),
            factor=f"{ln.ridge / ln.intensity:.0f}",
            ridge=f"{ln.ridge:.1f}",
            memory=seconds_text(ln.memory_time_s),  # 4.2 µs, 2.05 ps: never "2e-06 µs"
            compute=seconds_text(ln.compute_time_s),
        )
    )
    elements = ln.tokens * ln.d
    st.markdown(
        t(
            "kernels.memory_params_note",
            params=f"{ln.parameters:,}",
            elements=f"{elements:,}",
            ratio=format_reading(100 * ln.parameter_share, 3),
        )
    )
    if ln.parameter_share >= PARAMETERS_SAID:  # a few tokens: the times above leave out much
        moved = bytes_text(ln.bytes_moved + ln.parameter_bytes)
        time = seconds_text(ln.memory_time_with_parameters_s)
        st.markdown(t("kernels.memory_params_time", bytes=moved, time=time))
    if ln.d > MAX_FUSED_N:  # this project's kernel streams such a row twice
        passes = {"passes": WIDE_ROW_PASSES, "fused": WIDE_ROW_FUSED_PASSES}
        ideal = {"ideal": sum(UNFUSED_ADD_NORM_PASSES["norm"]), "ideal_fused": FUSED_PASSES}
        st.caption(t("kernels.memory_wide_rows", limit=count(MAX_FUSED_N), **passes, **ideal))
    add_reads, add_writes = UNFUSED_ADD_NORM_PASSES["add"]
    norm_reads, norm_writes = UNFUSED_ADD_NORM_PASSES["norm"]
    saved = ln.unfused_add_norm_bytes - ln.fused_add_norm_bytes
    unfused, fused, saved_text = bytes_texts(
        [ln.unfused_add_norm_bytes, ln.fused_add_norm_bytes, saved]
    )
    st.markdown(
        t(
            "kernels.memory_fusion",
            unfused_passes=UNFUSED_PASSES,
            fused_passes=FUSED_PASSES,
            unfused=unfused,
            fused=fused,
            saved=saved_text,
            percent=format_number(100 * saved / ln.unfused_add_norm_bytes, 1),
            add_reads=add_reads,
            add_writes=add_writes,
            norm_reads=norm_reads,
            norm_writes=norm_writes,
            saving=format_number(ln.fusion_saving, 2),
        )
    )
