"""The Experiments page's requests: the operator's models, and the run of the chosen
experiment, precomputed, computed by any session, or on a click (through ``ui.compute``)."""

from __future__ import annotations

import os

import streamlit as st

from engine.dumps.local_files import MODEL_DIRS_VARIABLE, list_models
from engine.experiments.experiment import run_experiment
from engine.experiments.stored import default_index, stored_run
from ui import live_model
from ui.compute import compute, run_heavy
from ui.errors import showing_refusals
from ui.formatting import format_number, literal
from ui.i18n import t
from ui.views.dumps_real import live_status


def local_models():
    """The models in the operator's folders (listed once per process and setting)."""
    return compute(list_models, key=os.environ.get(MODEL_DIRS_VARIABLE, ""))


def precomputed(chosen):
    """The precomputed run of this request, or None (the built-in model's only; a user's own
    text is never looked up)."""
    if chosen.text.prompt.strip() or chosen.model is not None:
        return None
    folder, stamp = compute(default_index, recent=True)  # a new precompute: seen in seconds
    with showing_refusals():
        return compute(stored_run, folder, chosen.text, chosen.spec, stamp)
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
