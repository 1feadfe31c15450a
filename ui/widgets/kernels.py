"""Kernels page inputs: the shapes to time, and the shape to work the roofline out for."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
import torch

from engine.config import DTYPES
from ui.i18n import t
from ui.url.pages import KERNELS as P
from ui.widgets import bound


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

    @property
    def bytes_per_element(self) -> int:
        return torch.empty(0, dtype=DTYPES[self.dtype]).element_size()


def timing_inputs() -> TimingConfig:
    c1, c2, c3 = st.columns([1, 2, 1])
    rows = bound.selectbox(P["kn_rows"], t("kernels.rows"), c1)
    widths = bound.multiselect(P["kn_widths"], t("kernels.widths"), c2)
    dtype = bound.selectbox(P["kn_dtype"], t("kernels.dtype"), c3)
    passes = bound.pills(P["kn_passes"], t("kernels.passes"))
    return TimingConfig(int(rows), tuple(sorted(widths)), dtype, tuple(passes or ()))


def roofline_inputs() -> RooflineConfig:
    c1, c2, c3 = st.columns(3)
    tokens = bound.number(P["kn_tokens"], t("kernels.tokens"), c1)
    d = bound.number(P["kn_d"], "d", c2)
    dtype = bound.selectbox(P["kn_rdtype"], t("kernels.dtype"), c3)
    return RooflineConfig(int(tokens), int(d), dtype)
