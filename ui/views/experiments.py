"""Experiments page sections (Streamlit): the verdict on the learner's prediction, the
measured effect and each experiment's own view (the run: ``ui/requests/experiments.py``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.figures import experiments as figures
from ui.formatting import count, format_number, literal
from ui.i18n import current_language, t
from ui.text import experiments as text
from ui.views.charts import show_chart
from ui.views.dumps_real import VECTOR_LAB_PAGE, vector_lab_query


def precomputed(stored) -> None:
    """Where a precomputed run comes from: the day it was made, and its model."""
    date = stored.created.split("T")[0]
    st.caption(t("experiments.precomputed", date=date, model=literal(stored.model)))


def ran(done) -> None:
    """What a run just computed took: its tokens (the whole text's, or its first ones) and
    its time."""
    whole = done.tokens >= done.text_tokens
    st.caption(
        t(
            "experiments.ran_whole" if whole else "experiments.ran",
            tokens=count(done.tokens),
            text_tokens=count(done.text_tokens),  # 2,982, as every count on the page
            seconds=format_number(done.seconds, 1),
        )
    )


def verdict(experiment: str, committed: str, found, judged: str | None = None) -> None:
    """Whether the prediction ``judged`` (the one made before the result was shown; by
    default ``committed``) holds; a prediction changed since is said as such, not judged."""
    lang = current_language()
    judged = committed if judged is None else judged
    if judged != committed:
        st.caption(
            t(
                "experiments.revised",
                chosen=text.option_text(experiment, committed, lang),
                first=text.option_text(experiment, judged, lang),
            )
        )
    committed = judged
    truth = found.answer
    if truth is None:  # no answer fits: nothing was changed (no massive entry to set)
        reason = t("experiments.nothing_changed")
        st.info(t("experiments.no_option", why=reason), icon=":material/help:")
    elif truth == committed:
        st.success(
            t("experiments.right", option=text.option_text(experiment, truth, lang)),
            icon=":material/check_circle:",
        )
    else:
        st.error(
            t(
                "experiments.wrong",
                chosen=text.option_text(experiment, committed, lang),
                option=text.option_text(experiment, truth, lang),
            ),
            icon=":material/cancel:",
        )


def metrics(found) -> None:
    effect = getattr(found.result, "effect", None)
    if effect is None:
        return
    values = (
        ("baseline", text.number(effect.reference_perplexity)),
        ("changed", text.number(effect.perplexity)),
        ("ratio", f"×{text.number(effect.perplexity_ratio)}"),
        ("kl", text.number(effect.mean_kl)),
        ("top1", f"{100 * effect.top1_agreement:.1f}\u00a0%"),
    )
    # each as wide as its value, wrapping to a second row whole: in five equal columns a
    # value such as "×4.589×10⁴" broke inside at 1,280 px, its exponent read as a number
    with st.container(key="ex_metrics", horizontal=True, gap="medium"):
        for key, value in values:
            st.metric(t(f"experiments.{key}"), value, width="content")


def results(found) -> None:
    lang = current_language()
    st.subheader(t("experiments.result"), anchor=False)
    metrics(found)
    for sentence in text.sentences(found, lang):
        st.markdown(f"- {sentence}")
    experiment = found.experiment
    if experiment == "sweep":
        st.caption(t("experiments.sweep_chart_note"))
        show_chart(figures.sweep_figure(found, lang), "ex_sweep")
    elif experiment == "lens":
        show_chart(figures.lens_figure(found, lang), "ex_lens")
        position = found.result.positions[-1]
        k = found.result.spec.top_k
        st.markdown(
            t(
                "experiments.lens_result.top_one" if k == 1 else "experiments.lens_result.top",
                k=count(k),
                position=position,
                token=text.token_label(found.token_texts, position),
            )
        )
        with st.container(key="ex_lens_table"):  # its first column stays one line (CSS)
            st.table(
                pd.DataFrame(figures.lens_table(found, lang)).set_index(
                    t("experiments.lens_result.point")
                )
            )
    if experiment == "massive":
        show_chart(figures.massive_figure(found, lang), "ex_massive")
    if getattr(found.result, "effect", None) is not None:
        if experiment == "half":
            show_chart(figures.half_figure(found, lang), "ex_half")
            _half_link(found)
        show_chart(figures.effect_figure(found, lang), "ex_effect")
        if (left_out := text.left_out_sentence(found, lang)) is not None:
            st.caption(left_out)


def _half_link(found) -> None:
    io = found.result.first_failure
    if io is None:
        return
    query = vector_lab_query(io.x, io.kind, io.eps, "float16", "float16", io.weight)
    if query is None:
        return
    st.page_link(
        VECTOR_LAB_PAGE,
        label=t("experiments.half_result.link", token=io.token, norm=io.label),
        icon=":material/calculate:",
        query_params=query,
        help=t("experiments.half_result.link_help"),
    )
