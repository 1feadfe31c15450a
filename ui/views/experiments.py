"""Experiments page sections (Streamlit): the run (precomputed, shared, or clicked for), the
verdict on the learner's prediction, the measured effect and each experiment's own view."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.dumps.local_files import list_models, named_folders
from engine.experiments.experiment import answer, run_experiment
from engine.experiments.stored import default_folder, index_stamp, stored_run
from ui import live_model
from ui.compute import compute, run_heavy
from ui.errors import showing_refusals
from ui.figures import experiments as figures
from ui.formatting import format_number, literal
from ui.i18n import current_language, t
from ui.text import experiments as text
from ui.views.charts import show_chart
from ui.views.dumps_real import VECTOR_LAB_PAGE, live_status, vector_lab_query


def local_models():
    """The models in the operator's folders (listed once per process)."""
    return compute(list_models, named_folders())


def precomputed(chosen):
    """The precomputed run of this request, or None (the built-in model's only; a user's own
    text is never looked up)."""
    if chosen.text.prompt.strip() or chosen.model is not None:
        return None
    folder = default_folder()
    with showing_refusals():
        return compute(stored_run, str(folder), chosen.text, chosen.spec, index_stamp(folder))
    return None


def run(chosen):
    """The run for this request: precomputed, computed by any session, or on a click; None
    until then (or while the model loads)."""
    stored = precomputed(chosen)
    if stored is not None:
        date = stored.created.split("T")[0]
        st.caption(t("experiments.precomputed", date=date, model=literal(stored.model)))
        return stored.run
    path = None if chosen.model is None else chosen.model.path
    live = live_status(live_model.model_load(path), live_model.forget)
    if live is None:
        return None
    private = bool(chosen.text.prompt.strip())  # a typed text stays in its session
    with showing_refusals():
        label = t(
            "experiments.running",
            experiment=t(f"experiments.names.{chosen.experiment}"),
            tokens=chosen.text.max_tokens,
            model=live.name,
        )
        found = run_heavy(
            run_experiment,
            [(live, chosen.text, chosen.spec)],
            [label],
            keys=[(path, live.name, chosen.text, chosen.spec)],
            private=private,
            button=t("experiments.run"),
            widget_key="ex_run",
            always_ask=True,
        )
        if found is not None:
            done = found[0]
            st.caption(
                t(
                    "experiments.ran",
                    tokens=done.tokens,
                    text_tokens=done.text_tokens,
                    seconds=format_number(done.seconds, 1),
                )
            )
            return done
    return None


def verdict(experiment: str, committed: str, found) -> None:
    lang = current_language()
    truth = answer(found)
    if truth is None:
        reason = text.no_option_reason(found, lang)
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
    columns = st.columns(5)
    values = (
        ("baseline", text.number(effect.reference_perplexity)),
        ("changed", text.number(effect.perplexity)),
        ("ratio", f"×{text.ratio_text(effect.perplexity_ratio)}"),
        ("kl", text.number(effect.mean_kl)),
        ("top1", f"{100 * effect.top1_agreement:.1f} %"),
    )
    for column, (key, value) in zip(columns, values):
        column.metric(t(f"experiments.{key}"), value)


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
        st.markdown(
            t(
                "experiments.lens_result.top",
                position=position,
                token=literal(found.token_texts[position]),
            )
        )
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
