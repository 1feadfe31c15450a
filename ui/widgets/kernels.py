"""Kernels page inputs: the shapes to time, and the shape to work the roofline out for, as
the engine's specs."""

from __future__ import annotations

import streamlit as st

from engine.config import RooflineSpec, TimingSpec
from ui.i18n import t
from ui.url.pages import KERNELS as P
from ui.widgets import bound


def timing_inputs() -> TimingSpec:
    c1, c2, c3 = st.columns([1, 2, 1])
    rows = bound.selectbox(P["kn_rows"], t("kernels.rows"), c1)
    widths = bound.multiselect(P["kn_widths"], t("kernels.widths"), c2)
    dtype = bound.selectbox(P["kn_dtype"], t("kernels.dtype"), c3)
    passes = bound.pills(P["kn_passes"], t("kernels.passes"))
    return TimingSpec(int(rows), tuple(sorted(widths)), dtype, tuple(passes or ()))


def roofline_inputs() -> RooflineSpec:
    c1, c2, c3 = st.columns(3)
    tokens = bound.number(P["kn_tokens"], t("kernels.tokens"), c1)
    d = bound.number(P["kn_d"], "d", c2)
    dtype = bound.selectbox(P["kn_rdtype"], t("kernels.dtype"), c3)
    return RooflineSpec(int(tokens), int(d), dtype)
