"""Cached engine calls: ``st.cache_data`` keyed on frozen configs (results are pickled copies).

Both Streamlit caches are process-global: tests clear them between cases.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from engine.explain import VectorExplanation, explain_vectors


@st.cache_data(max_entries=256, show_spinner=False)
def vector_explanation(config, compute_dtype: str | None = None) -> VectorExplanation:
    """``engine.explain.explain_vectors`` for a ``VectorLabConfig`` (optionally another
    compute precision, for the "what float32 would give" comparison)."""
    spec = (
        config.spec if compute_dtype is None else replace(config.spec, compute_dtype=compute_dtype)
    )
    return explain_vectors(
        config.rows, spec, config.input_dtype, config.weight, config.bias, config.row_index
    )
