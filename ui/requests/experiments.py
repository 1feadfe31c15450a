"""The Experiments page's requests: the operator's models (and the refusal of a linked one
they do not hold), and the run of the chosen experiment, precomputed, or computed by any
session or on a click (through ``ui.compute``)."""

from __future__ import annotations

import os
from dataclasses import replace

from engine.config import MassiveSpec
from engine.dumps.live import live_model_blocks
from engine.dumps.local_files import MODEL_DIRS_VARIABLE, LocalModel, find_model, list_models
from engine.errors import EngineError
from engine.experiments.experiment import run_experiment
from engine.experiments.massive import check_windows, check_windows_read
from engine.experiments.runs import check_layers
from engine.experiments.stored import default_index, stored_run
from engine.experiments.text import token_ids
from ui import live_model
from ui.compute import compute, run_heavy
from ui.errors import error_text, showing_refusals
from ui.formatting import count
from ui.i18n import t
from ui.requests.linked import unlisted


def local_models():
    """The models in the operator's folders (listed once per process and setting)."""
    return compute(list_models, key=os.environ.get(MODEL_DIRS_VARIABLE, ""))


def model_refusal(wanted: str, models: tuple[LocalModel, ...]) -> EngineError | None:
    """Why the linked model id ``wanted`` is refused (None: none linked, or a listed one)."""
    return unlisted(find_model, wanted, models)


def within_model(chosen):
    """``chosen``, or refused (no spec, the engine's refusal added to its errors) where it
    names a block the chosen model lacks: known from the model's config before it loads,
    so a block past the model is refused as it is typed, not after a commit and a run
    (which refuses it too); so are windows of a mean the tokens read cannot fill twice, and
    a text too short to run (``_counted_refusal``).  Every block written out ("0-29") is the
    run of "all": the same request, its prediction and precomputed result."""
    if isinstance(chosen.spec, MassiveSpec) and chosen.text is not None:
        try:
            compute(check_windows_read, chosen.spec, chosen.text)
        except EngineError as error:
            return replace(chosen, spec=None, errors=(*chosen.errors, error_text(error)))
    refused = _counted_refusal(chosen)
    if refused is not None:
        return replace(chosen, spec=None, errors=(*chosen.errors, refused))
    layers = getattr(chosen.spec, "layers", None)
    if layers is None:
        return chosen
    blocks = compute(live_model_blocks, model_path(chosen), recent=True)
    if blocks is None:  # its config does not say: the run refuses it
        return chosen
    try:
        compute(check_layers, layers, blocks)
    except EngineError as error:
        why = t("experiments.param_refused", param=chosen.blocks_named, why=error_text(error))
        return replace(chosen, spec=None, errors=(*chosen.errors, why))
    if set(layers) == set(range(blocks)):
        return replace(chosen, spec=replace(chosen.spec, layers=None))
    return chosen


def _counted_refusal(chosen) -> str | None:
    """Why the chosen text is too short to run (fewer than 2 tokens; too few for two windows
    of a mean), where the model is loaded already and its tokenizer counts them as the text
    is typed; None otherwise (before the load, the run refuses it)."""
    live = live_model.loaded(model_path(chosen)) if chosen.text is not None else None
    if live is None:
        return None
    private = bool(chosen.text.prompt.strip())  # a typed text stays in its session
    loaded, key = live.loaded, (model_path(chosen), live.name, chosen.text)
    try:
        ids, _ = compute(
            token_ids, loaded.tokenizer, chosen.text, loaded.context, key=key, private=private
        )
        if isinstance(chosen.spec, MassiveSpec) and chosen.spec.setting == "mean":
            compute(check_windows, len(ids), chosen.spec.window)
    except EngineError as error:
        return error_text(error)
    return None


def precomputed(chosen):
    """The precomputed run of this request, or None (the built-in model's only; a user's own
    text is never looked up)."""
    if chosen.text.prompt.strip() or chosen.model is not None:
        return None
    folder, stamp = compute(default_index, recent=True)  # a new precompute: seen in seconds
    with showing_refusals():
        return compute(stored_run, folder, chosen.text, chosen.spec, stamp)
    return None


def model_path(chosen) -> str | None:
    """The chosen model's path; None: the built-in model."""
    return None if chosen.model is None else chosen.model.path


def run(chosen, live):
    """The run of this request on ``live`` (the loaded model), computed by any session or on
    a click; None until then."""
    private = bool(chosen.text.prompt.strip())  # a typed text stays in its session
    with showing_refusals():
        label = t(
            "experiments.running",
            experiment=t(f"experiments.names.{chosen.experiment}"),
            tokens=count(chosen.text.max_tokens),  # at most: a shorter text has fewer
            model=live.name,
        )
        found = run_heavy(
            run_experiment,
            [(live, chosen.text, chosen.spec)],
            [label],
            keys=[(model_path(chosen), live.name, chosen.text, chosen.spec)],
            private=private,
            button=t("experiments.run"),
            widget_key="ex_run",
            always_ask=True,
        )
        return None if found is None else found[0]
    return None
