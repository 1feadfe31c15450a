"""Activation-dump sections (Streamlit): what was inferred, non-finite values, the residual
stream, massive activations, LayerNorm vs RMSNorm, channels, DyT, downloads.

The tables shown are the engine's own (``engine.dumps.tables.report_tables``) with translated
headers, so the page, the downloads and ``python -m engine.dumps report`` show the same
numbers; the report is computed in ``ui/requests/dumps.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from engine.config import DumpSpec
from engine.dumps.capture import PARTIAL_CHARACTER
from engine.dumps.norm_views import DyTFit, TokenNorms
from engine.dumps.partials import LARGE_CAP
from engine.dumps.report import DumpReport
from ui import presenting
from ui.errors import own_words
from ui.figures import dumps as figures
from ui.figures import dumps_channels as channel_figures
from ui.formatting import (
    format_number,
    format_reading,
    literal,
    plot_text,
    significant,
)
from ui.i18n import current_language, join, sentence_joiner, t
from ui.landing import landmark
from ui.projected import type_scale
from ui.text import dumps as text
from ui.text import dumps_notes as notes
from ui.text import dumps_story as story_text
from ui.text.dumps import token_text
from ui.views.charts import built, show_chart, show_fitting_chart
from ui.views.dumps_real import live_summary
from ui.views.dumps_tables import engine_table

DYT_DIGITS = 5  # α, γ and r² of a least-squares fit: 5 significant digits, 9 columns in view


def inferred(rep: DumpReport) -> None:
    lang = current_language()
    rows = text.layout_facts(rep, lang)
    table = text.facts_table(rows, (t("dumps.fact_what"), t("dumps.fact_value")))
    # names stay whole, the table scrolls sideways (ui/styles/base.css)
    st.container(key="dumps_facts").markdown(table)
    prompts = text.prompt_list(rep, lang)
    if prompts:  # read as sentences, not code (ui/styles/base.css)
        st.container(key="dumps_prompts").markdown(prompts)
    if rep.layout.skipped:
        with st.expander(t("dumps.skipped_title", count=len(rep.layout.skipped))):
            skipped = rep.layout.skipped
            listed = [
                (own_words(s.key), t(f"errors.{s.message_key}", detail=s.detail)) for s in skipped
            ]
            frame = pd.DataFrame(listed, columns=["entry", "why"])  # ids: engine_table names them
            engine_table(frame, "dumps_skipped")


def nonfinite(rep: DumpReport, tables: dict[str, pd.DataFrame]) -> None:
    found, sentence = text.nonfinite_summary(rep.stats.nonfinite, rep.values, current_language())
    if not found:
        st.caption(sentence)
        return
    st.warning(sentence, icon=":material/warning:")
    per_layer = tables["layers"][["layer", "entry", "nan", "posinf", "neginf"]]
    per_layer = per_layer[(per_layer[["nan", "posinf", "neginf"]] > 0).any(axis=1)]
    engine_table(per_layer, "dumps_nonfinite")


def read_summary(rep: DumpReport, tables: dict[str, pd.DataFrame], facts, capture) -> None:
    """What was read (in ``facts``, with the live capture's tokens), then why a part of the
    report is missing (a dump of one layer) and the non-finite values."""
    with facts:
        inferred(rep)
        if (note := text.tokens_note(rep, current_language())) is not None:
            st.caption(note)
        if capture is not None:
            live_summary(capture)
    # why some of the report is missing: said on the page (facts are a closed box presenting)
    if (note := text.one_layer_note(rep, current_language())) is not None:
        st.info(note, icon=":material/info:")
    nonfinite(rep, tables)


def residual_intro() -> None:
    landmark("residual")  # where the real-models lesson's link lands
    st.subheader(t("dumps.residual_title"))
    st.markdown(t("dumps.residual_intro"))


def residual(
    rep: DumpReport,
    tables: dict[str, pd.DataFrame],
    batch: int,
    log: bool,
    tokens: Sequence[str] | None = None,
    shared: bool = False,
) -> None:
    """The stream's RMS per layer and token; ``shared``: the dump is shared data, so its
    figures are kept (``built``)."""
    res = rep.residual
    marks = [
        (int(tok), int(layer))
        for b, tok, layer in zip(res.outlier_batch, res.outlier_token, res.outlier_max_layer)
        if b == batch
    ]
    lang = current_language()
    token_names = None if tokens is None else [plot_text(token_text(tok)) for tok in tokens]
    rms = res.rms[:, batch, :]
    projected = presenting.presenting()  # larger tick text: wider layouts
    heatmaps = built(
        figures.rms_heatmaps,
        *(rms, rep.labels, lang, log, marks, token_names),
        projected=projected,
        shared=shared,
    )
    if len(heatmaps) > 1:  # a narrow column: the layout whose token names fit it
        scale = type_scale() if projected else 1.0  # text grown with the screen's
        show_fitting_chart([(f, round(w * scale)) for f, w in heatmaps], "dumps_heatmap")
    else:
        show_chart(heatmaps[0][0], "dumps_heatmap")
    marked = [tok for tok, _ in marks]
    show_chart(built(figures.rms_lines, res, batch, lang, marked, shared=shared), "dumps_lines")
    if rep.layout.stream.startswith("hidden_states"):
        st.caption(text.hidden_states_note(res.rms_median_token, lang))
    if tokens is not None and PARTIAL_CHARACTER in tokens:
        st.caption(t("dumps.partial_tokens", mark=token_text(PARTIAL_CHARACTER)))  # as labelled
    st.markdown(text.growth_text(res.growth, lang))
    st.markdown(f"**{t('dumps.outliers_title', ratio=format_reading(rep.spec.outlier_ratio))}**")
    if len(tables["outlier_tokens"]):
        engine_table(tables["outlier_tokens"], "dumps_outlier_tokens")
        _listed(len(tables["outlier_tokens"]), res.outlier_total)
    else:
        st.caption(t("dumps.no_outliers", ratio=format_reading(rep.spec.outlier_ratio)))


def _listed(listed: int, total: int) -> None:
    """Under a table cut to its most extreme rows: how many there are in all."""
    if total > listed:
        st.caption(t("dumps.outliers_listed", listed=listed, total=text.count(total)))


def massive(
    rep: DumpReport,
    tables: dict[str, pd.DataFrame],
    tokens: Sequence[Sequence[str]] | None = None,
    shared: bool = False,
) -> None:
    mas = rep.massive
    st.subheader(t("dumps.massive_title"))
    intro = t(
        "dumps.massive_intro",
        abs=format_reading(rep.spec.massive_abs),
        ratio=format_reading(rep.spec.massive_ratio),
    )
    approximate = notes.median_approximate(rep)
    if approximate:  # not float16 data: the median is read on bfloat16's grid
        intro += sentence_joiner(current_language()) + t(
            "dumps.median_on_grid", dtype=rep.layout.dtype
        )
    st.markdown(intro)
    show_chart(
        built(figures.massive_figure, mas, current_language(), shared=shared), "dumps_massive"
    )
    total = int(mas.count.sum())
    if total == 0:
        st.caption(t("dumps.no_massive"))
        return
    layers = np.flatnonzero(mas.count)  # the layers counted, as the total is
    channels = mas.channels  # every one, not only the listed entries' (256 a layer)
    # one activation, several on one layer, or several layers: each its own sentence
    variant = "_one" if total == 1 else "_one_layer" if len(layers) == 1 else ""
    st.markdown(
        t(
            f"dumps.massive_found{variant}",
            count=text.count(total),
            layers=len(layers),
            layer_list=int(layers[0]),
            channels=t(
                "dumps.channel_list_one" if len(channels) == 1 else "dumps.channel_list",
                list=join(
                    [str(int(c)) for c in channels[:8]] + (["…"] if len(channels) > 8 else []),
                    current_language(),
                ),
            ),
            largest=format_reading(float(np.abs(mas.value).max()), 1) if mas.value.size else "—",
        )
    )
    carriers = story_text.massive_tokens_sentence(rep, tokens, current_language())
    if carriers is not None:
        st.markdown(carriers)
    columns = frozenset({"abs_over_median"} if approximate else ())
    engine_table(tables["massive_activations"], "dumps_massive_table", approximate=columns)
    if total > len(mas.value):
        listed = {"cap": text.count(LARGE_CAP), "listed": text.count(len(mas.value))}
        st.caption(t("dumps.massive_listed", **listed, total=text.count(total)))


def centering(rep: DumpReport, shared: bool = False) -> None:
    st.subheader(t("dumps.centering_title"))
    st.markdown(t("dumps.centering_intro"))
    lang = current_language()
    left, right = st.columns(2)
    share_figure = built(
        figures.centering_figure, rep.centering, rep.comparison, lang, shared=shared
    )
    show_chart(share_figure, "dumps_share", left)
    difference = built(figures.difference_figure, rep.comparison, lang, shared=shared)
    show_chart(difference, "dumps_difference", right)
    share, token_share = rep.centering.mu2_share, rep.centering.token_share
    finite = np.isfinite(share).any() and np.isfinite(token_share).any()
    st.caption(
        t(
            "dumps.centering_note",
            share=format_number(100 * float(np.nanmax(share)), 2) if finite else "—",
            layer=int(np.nanargmax(share)) if finite else 0,
            token_share=format_number(100 * float(np.nanmax(token_share)), 2) if finite else "—",
        )
    )
    if (scale := text.difference_scale(rep.comparison, lang)) is not None:
        st.caption(scale)


def token_detail(norms: TokenNorms, rep: DumpReport, shared: bool = False) -> None:
    """One token's LayerNorm and RMSNorm outputs (``engine.dumps.norm_views.compare_norms``)."""
    batch, token = divmod(int(norms.rows[0]), rep.layout.tokens)
    st.markdown(notes.token_detail_text(norms, batch, token, rep.layout.d, current_language()))
    figure = built(figures.token_norms_figure, norms, current_language(), shared=shared)
    show_chart(figure, "dumps_token")


def channels(rep: DumpReport, shared: bool = False) -> None:
    st.subheader(t("dumps.channels_title"))
    st.markdown(t("dumps.channels_intro", ratio=format_reading(rep.spec.outlier_ratio)))
    lang = current_language()
    heatmap = built(channel_figures.channel_heatmap, rep.channels.ratio, lang, shared=shared)
    show_chart(heatmap, "dumps_channels")


def channel_detail(
    rep: DumpReport, tables: dict[str, pd.DataFrame], layer: int, shared: bool = False
) -> None:
    lang = current_language()
    label = rep.labels[layer]
    figure = built(channel_figures.channel_detail, rep.channels, layer, label, lang, shared=shared)
    show_chart(figure, "dumps_channel_detail")
    st.markdown(f"**{t('dumps.outlier_channels_title')}**")
    if len(tables["outlier_channels"]):
        engine_table(tables["outlier_channels"], "dumps_outlier_channels")
        _listed(len(tables["outlier_channels"]), rep.channels.outlier_total)
    else:
        st.caption(t("dumps.no_outlier_channels", ratio=format_reading(rep.spec.outlier_ratio)))


def dyt_intro(rep: DumpReport) -> bool:
    """Say what the norm section shows; False when the dump holds no norm input/output pair."""
    st.subheader(t("dumps.dyt_title_section"))
    if not rep.layout.norm_pairs:
        st.info(t("dumps.no_pairs"), icon=":material/info:")
        return False
    st.markdown(t("dumps.dyt_intro", count=len(rep.layout.norm_pairs)))
    return True


def dyt(fit: DyTFit, tables: dict[str, pd.DataFrame], spec: DumpSpec, shared: bool = False) -> None:
    """The DyT curve of the chosen norm and how to read it (``spec``: the page's massive
    activation thresholds); the table of every fit when the report made them."""
    lang = current_language()
    st.markdown(f"**{t('dumps.dyt_heading', norm=literal(fit.label))}**")
    figure = built(channel_figures.dyt_figure, fit, lang, shared=shared)
    show_chart(figure, "dumps_dyt")
    if (reading := story_text.dyt_reading(fit, spec, lang)) is not None:
        st.markdown(reading)
    st.caption(
        t(
            "dumps.dyt_note",
            norm=literal(fit.label),
            shown=text.count(len(fit.x)),
            points=text.count(fit.points),
        )
    )
    if fit.outliers:
        st.caption(
            t(
                "dumps.dyt_note_outliers",
                count=text.count(fit.outliers),
                limit=significant(fit.bulk_limit),
                r2=format_number(fit.r2, 3),
                r2_all=format_number(fit.r2_all, 3),
            )
        )
    if len(tables["dyt_fits"]):
        engine_table(tables["dyt_fits"], "dumps_dyt_table", DYT_DIGITS)
    else:
        st.caption(t("dumps.dyt_one_at_a_time"))


def downloads(tables: dict[str, pd.DataFrame], summary: Callable[[], str], file_name: str) -> None:
    """Every table as CSV and the report as JSON (``summary`` writes it), written when
    clicked (not on every rerun).

    The deferred writers hold the tables only, never the report: the report reads from the
    uploaded bytes, and Streamlit keeps a download's writer until it sweeps orphaned ones.
    """
    st.subheader(t("dumps.downloads_title"))
    st.caption(t("dumps.downloads_note"))
    row = st.container(horizontal=True, wrap=True)  # buttons as wide as their labels, wrapped
    for name, frame in tables.items():
        row.download_button(
            t(
                "dumps.download_table_one" if len(frame) == 1 else "dumps.download_table",
                table=t(f"dumps.table.{name}"),
                rows=text.count(len(frame)),
            ),
            data=lambda frame=frame: frame.to_csv(index=False),
            file_name=text.download_name(file_name, name, "csv"),
            mime="text/csv",
            key=f"dumps_download_{name}",
            on_click="ignore",
            icon=":material/download:",
        )
    st.download_button(
        t("dumps.download_json"),
        data=summary,
        file_name=text.download_name(file_name, "report", "json"),
        mime="application/json",
        key="dumps_download_json",
        on_click="ignore",
        icon=":material/data_object:",
        type="primary",
    )
