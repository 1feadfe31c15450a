"""Dumps page sections about real activations (Streamlit): what the stream shows with a link
into the Vector Lab, the live model's state and capture, one norm on one token, and the
float32 / bfloat16 / float16 comparison.

The Vector Lab links carry a token's d numbers exactly as the dump stores them (``repr`` of
each stored value: a float16 value is a short exact decimal), so the lab computes on the
same numbers the model produced.  576 numbers with the norm's weight stay well under the
share-link limit (``ui/url/`` MAX_URL_CHARS).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import parse_qsl

import numpy as np
import pandas as pd
import streamlit as st

from engine.dumps.live_precision import PrecisionComparison
from engine.dumps.norm_step import NormStep
from engine.dumps.report import DumpReport
from engine.dumps.story import StreamStory
from engine.norms.kinds import ROW_KINDS
from ui.errors import error_text
from ui.figures import dumps_real as figures
from ui.formatting import format_number, literal
from ui.i18n import current_language, t
from ui.text import dumps_story as text
from ui.text.dumps import cell_writer, dump_norm, storage_dtype, token_text
from ui.text.dumps_story import ASSUMED_KIND
from ui.url.codec import MAX_URL_CHARS, query_string
from ui.url.pages import VECTOR_LAB
from ui.views.charts import show_chart

VECTOR_LAB_PAGE = "app_pages/vector_lab.py"


def numbers_text(values: np.ndarray) -> str:
    """Numbers as the Vector Lab reads them, each the stored value exactly."""
    return ", ".join(repr(float(v)) for v in np.asarray(values, dtype=np.float64))


def vector_lab_query(
    x: np.ndarray,
    kind: str,
    eps: float | None,
    dtype: str,
    compute: str,
    weight: np.ndarray | None = None,
) -> list[tuple[str, str]] | None:
    """The Vector Lab's parameters that open it on ``x``; None if the link would be too long."""
    dtypes = VECTOR_LAB["vl_dtype"]
    values = {
        "vl_source": "text",
        "vl_text": numbers_text(x),
        "vl_norm": kind if kind in ROW_KINDS else ASSUMED_KIND,
        "vl_eps": VECTOR_LAB["vl_eps"].default if eps is None else f"{eps:g}",
        "vl_dtype": dtype if dtype in dtypes.choices else dtypes.default,
        "vl_compute": compute,
    }
    if weight is not None:
        values["vl_gamma"] = numbers_text(weight)
    query = query_string(VECTOR_LAB, values, current_language())
    return parse_qsl(query) if len(query) <= MAX_URL_CHARS else None


def _lab_link(query: list[tuple[str, str]] | None, label: str, help_text: str) -> None:
    if query is None:
        st.caption(t("dumps.link_too_long", limit=f"{MAX_URL_CHARS:,}"))
        return
    st.page_link(
        VECTOR_LAB_PAGE,
        label=label,
        icon=":material/calculate:",
        query_params=query,
        help=help_text,
    )


def story(
    found: StreamStory, tokens: Sequence[str] | None, row: np.ndarray | None, rep: DumpReport
) -> None:
    """What the stream shows, and the largest entry's token (``row``) opened in the Vector
    Lab computed in float16 (where its square overflows), with the dump's norm: stored in
    float16, or in float32 where its largest entry does not fit float16 (the Vector Lab
    refuses to store it there)."""
    st.subheader(t("dumps.story_title"))
    for sentence in text.story_sentences(found, tokens, current_language()):
        st.markdown(f"- {sentence}")
    if row is None or found.largest_at is None or not found.fits_float32:
        return
    layer, batch, token, _ = found.largest_at
    stored = "float16" if found.fits_float16 else "float32"
    query = vector_lab_query(row, *dump_norm(rep), stored, "float16")
    words = {"d": row.shape[0], "batch": batch, "token": token, "layer": layer}
    _lab_link(
        query,
        t("dumps.story_link" if found.fits_float16 else "dumps.story_link_wide", **words),
        t("dumps.story_link_help"),
    )


def live_status(load, retry: Callable[[], None]):
    """The live model's state: loaded (returned), loading (progress), or not available."""
    state = load.state
    if state == "ready":
        st.caption(
            t("dumps.live_ready", model=literal(load.live.name), seconds=round(load.elapsed))
        )
        return load.live
    if state == "loading":
        _loading(load)
        return None
    if state == "missing":
        st.warning(error_text(load.error), icon=":material/download:")
    else:
        detail = error_text(load.error) if load.error is not None else literal(load.failure)
        st.error(t("dumps.live_failed", detail=detail), icon=":material/error:")
    st.caption(t("dumps.live_elsewhere"))
    st.button(
        t("dumps.live_retry"), key="dumps_live_retry", on_click=retry, icon=":material/refresh:"
    )
    return None


@st.fragment(run_every=1.0)
def _loading(load) -> None:
    """Redrawn every second until the load ends, then the whole page runs again."""
    if load.state != "loading":
        st.rerun()
    st.progress(
        load.fraction,
        text=t("dumps.live_loading", model=literal(load.name), seconds=round(load.elapsed)),
    )
    st.caption(t(f"dumps.{_loading_note(load)}"))


def _loading_note(load) -> str:
    """What loading this model does and when it began: the built-in model's GGUF file, with
    the server's start or on a page's asking; an operator's GGUF file or folder, on asking."""
    if load.path is None:
        return "live_loading_note" if load.by_server else "live_loading_asked"
    return "live_loading_gguf" if load.from_gguf else "live_loading_folder"


LRM = "\u200e"


def live_summary(capture) -> None:
    """The prompt's tokens, the next token the model predicts, and the capture's time."""
    tokens = capture.info.tokens[0]
    # each followed by a left-to-right mark: right-to-left tokens (Arabic, Hebrew) stay in the
    # prompt's order, where the spaces between them made one run the browser drew reversed
    chips = " ".join(f"{literal(token_text(tok))}{LRM}" for tok in tokens)
    counted = "dumps.live_tokens_one" if len(tokens) == 1 else "dumps.live_tokens"
    st.markdown(t(counted, count=len(tokens), tokens=chips))
    st.markdown(
        t(
            "dumps.live_next",
            token=literal(token_text(capture.next_token)),
            seconds=format_number(capture.seconds, 2),
        )
    )


def norm_io(step: NormStep, tokens: Sequence[str] | None, rep: DumpReport, layer_name: str) -> None:
    """One token through one captured norm: the numbers, the chart, the Vector Lab link."""
    io = step.io
    lang = current_language()
    storage = storage_dtype(rep)
    st.markdown(text.norm_step_sentence(step, tokens, storage, lang))
    # a token's text in quotes ("token “The”: …"), a position without any ("token 12: …")
    token = f"“{token_text(tokens[io.token])}”" if tokens is not None else str(io.token)
    show_chart(figures.norm_io_figure(step, layer_name, token, lang), "dumps_io")
    query = vector_lab_query(io.x, io.kind, io.eps, storage or "float32", "float32", io.weight)
    words = text.io_link_text(io.x.shape[0], io.kind, io.eps, lang)
    _lab_link(query, words, t("dumps.io_link_help"))


def precision_intro() -> None:
    st.subheader(t("dumps.precision_title"))
    st.markdown(t("dumps.precision_intro"))


def precision(comparison: PrecisionComparison) -> None:
    lang = current_language()
    for sentence in text.precision_sentences(comparison, lang):
        st.markdown(f"- {sentence}")
    show_chart(figures.precision_figure(comparison, lang), "dumps_precision_chart")
    rows = text.overflow_rows(comparison, lang)
    if not rows:
        return
    st.markdown(f"**{t('dumps.overflow_table_title')}**")
    frame = pd.DataFrame(rows)
    headers = {c: t(f"dumps.overflow_col.{c}") for c in frame.columns}
    largest = cell_writer(frame["max_abs"].to_numpy(), 6)  # as the sentences write it ...
    st.dataframe(  # ... sorted by value (``ui.views.dumps_tables.engine_table``)
        frame.rename(columns=headers).style.format({headers["max_abs"]: largest}),
        hide_index=True,
        width="stretch",
        height=36 + 35 * min(len(frame), 12),
        key="dumps_overflow",
    )
