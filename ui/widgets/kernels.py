"""Kernels page inputs: the shapes to time, and the shape to work the roofline out for."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from engine.perf.timing import PASSES
from ui.i18n import t

BIND = "query-params"
ROW_CHOICES = (256, 1024, 4096)
WIDTH_CHOICES = (256, 512, 1024, 2048, 4096, 8192)
TIMING_DTYPES = ("float32", "bfloat16", "float16")
BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@dataclass(frozen=True)
class TimingConfig:
    rows: int
    widths: tuple[int, ...]
    dtype: str
    passes: tuple[str, ...]


@dataclass(frozen=True)
class RooflineConfig:
    tokens: int
    d: int
    dtype: str


def pass_label(name: str) -> str:
    return t(f"kernels.pass_{name.replace('+', '_')}")


def timing_inputs() -> TimingConfig:
    c1, c2, c3 = st.columns([1, 2, 1])
    rows = c1.selectbox(t("kernels.rows"), ROW_CHOICES, index=1, key="kn_rows", bind=BIND)
    widths = c2.multiselect(
        t("kernels.widths"), WIDTH_CHOICES, default=[256, 1024, 4096], key="kn_widths", bind=BIND
    )
    dtype = c3.selectbox(t("kernels.dtype"), TIMING_DTYPES, key="kn_dtype", bind=BIND)
    passes = st.pills(
        t("kernels.passes"),
        PASSES,
        selection_mode="multi",
        default=list(PASSES),
        key="kn_passes",
        bind=BIND,
        format_func=pass_label,
    )
    return TimingConfig(int(rows), tuple(sorted(widths)), dtype, tuple(passes or ()))


def roofline_inputs() -> RooflineConfig:
    c1, c2, c3 = st.columns(3)
    tokens = c1.number_input(t("kernels.tokens"), 1, 1 << 24, 4096, key="kn_tokens", bind=BIND)
    d = c2.number_input("d", 1, 1 << 18, 4096, key="kn_d", bind=BIND)
    dtype = c3.selectbox(t("kernels.dtype"), TIMING_DTYPES, index=1, key="kn_rdtype", bind=BIND)
    return RooflineConfig(int(tokens), int(d), dtype)
