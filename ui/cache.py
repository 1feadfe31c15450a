"""Cached engine calls: ``st.cache_data`` keyed on frozen configs (results are pickled copies).

Both Streamlit caches are process-global: tests clear them between cases.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace

import streamlit as st

from engine.norms.worked import VectorExplanation, explain_vectors


@st.cache_data(max_entries=256, show_spinner=False)
def vector_explanation(config, compute_dtype: str | None = None) -> VectorExplanation:
    """``engine.norms.worked.explain_vectors`` for a ``VectorLabConfig`` (optionally another
    compute precision, for the "what float32 would give" comparison)."""
    spec = (
        config.spec if compute_dtype is None else replace(config.spec, compute_dtype=compute_dtype)
    )
    return explain_vectors(
        config.rows, spec, config.input_dtype, config.weight, config.bias, config.row_index
    )


class ResultStore:
    """A bounded, thread-safe, process-wide map from a frozen spec to a finished result.

    For computations that report progress while they run (the depth simulator, the training
    lab): ``st.cache_data`` would replay their progress bars, so the page checks the store,
    computes with its own progress callback on a miss, and puts the result back.  Shared by
    every session, so a workshop's thirty identical clicks compute once.
    """

    def __init__(self, max_entries: int) -> None:
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._max_entries = max_entries

    def get(self, key):
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
            return None

    def put(self, key, value) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)


@st.cache_resource
def result_store(name: str, max_entries: int = 64) -> ResultStore:
    """The process-wide ``ResultStore`` called ``name``."""
    return ResultStore(max_entries)
