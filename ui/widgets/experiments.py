"""Experiments page inputs: which experiment, which text, its settings (one frozen spec each),
and the learner's committed prediction.

Every setting is a ``ui/url/`` parameter (EXPERIMENTS_PAGE), so a link opens the same
experiment; a prediction is not: it is this browser's, kept in session state per request
(experiment, text and settings), so a new setting asks for a new prediction.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import streamlit as st

from engine.config import (
    FoldSpec,
    FreezeSpec,
    FreezeSweepSpec,
    HalfSpec,
    LensSpec,
    MassiveSpec,
    SwapSpec,
    TextSpec,
)
from engine.dumps.local_files import LocalModel, find_model
from engine.errors import EngineError
from engine.experiments.experiment import SAME, options
from ui.errors import error_text
from ui.i18n import current_language, t
from ui.text.experiments import option_text
from ui.url.pages import EVERY_BLOCK
from ui.url.pages import EXPERIMENTS_PAGE as P
from ui.widgets import bound

PREDICTIONS = "ex_predictions"  # session state: {request id: committed option}


@dataclass(frozen=True)
class ExperimentInputs:
    experiment: str
    text: TextSpec | None
    spec: Any  # the experiment's spec, or None when refused
    errors: tuple[str, ...]
    model: LocalModel | None = None  # None: the built-in model

    @property
    def request(self) -> str:
        """This request's id: what a prediction is committed for."""
        model = None if self.model is None else self.model.id
        digest = hashlib.blake2b(repr((model, self.text, self.spec)).encode(), digest_size=8)
        return f"{self.experiment}_{digest.hexdigest()}"


def experiment_choice() -> str:
    return bound.selectbox(
        P["ex_experiment"], t("experiments.experiment"), format_func=_named("names")
    )


def _named(table: str):
    return lambda value: t(f"experiments.{table}.{value}")


def _blocks(block: int) -> tuple[int, ...] | None:
    return None if block == EVERY_BLOCK else (block,)


def _block(key: str, text: str, target) -> int:
    return bound.number(P[key], text, target, help=t("experiments.block_help"))


def text_choice(target=st) -> tuple[TextSpec | None, tuple[str, ...]]:
    left, right = target.columns([2, 1])
    text = bound.selectbox(P["ex_text"], t("experiments.text"), left, format_func=_named("texts"))
    tokens = bound.number(
        P["ex_tokens"], t("experiments.tokens"), right, help=t("experiments.tokens_help")
    )
    prompt = bound.text_area(
        P["ex_prompt"],
        t("experiments.prompt"),
        target,
        help=t("experiments.prompt_help"),
        height=80,
    )
    return bound.spec_from(TextSpec, text=text, prompt=prompt, max_tokens=tokens)


def settings(experiment: str, target=st) -> tuple[Any, tuple[str, ...]]:
    """The experiment's spec from its widgets (or None and the refusal)."""
    left, right = target.columns(2)
    if experiment == "massive":
        setting = bound.selectbox(
            P["ex_setting"], t("experiments.setting.label"), left,
            format_func=lambda v: t(f"experiments.setting.{v}"),
        )  # fmt: skip
        window = bound.number(
            P["ex_window"], t("experiments.setting.window"), right,
            help=t("experiments.setting.window_help"), disabled=setting != "mean",
        )  # fmt: skip
        return bound.spec_from(MassiveSpec, setting=setting, window=window)
    if experiment == "swap":
        block = _block("ex_swap_block", t("experiments.swap.block"), left)
        final = bound.toggle(P["ex_swap_final"], t("experiments.swap.final"), right)
        return bound.spec_from(SwapSpec, layers=_blocks(block), final=final)
    if experiment in ("freeze", "sweep"):
        if experiment == "freeze":
            block = _block("ex_freeze_block", t("experiments.freeze.block"), left)
            final = bound.toggle(P["ex_freeze_final"], t("experiments.freeze.final"), left)
        exempt = bound.selectbox(
            P["ex_exempt" if experiment == "freeze" else "ex_sweep_exempt"],
            t("experiments.freeze.exempt"), right if experiment == "freeze" else left,
            format_func=_named("exempt"),
        )  # fmt: skip
        if experiment == "sweep":
            return bound.spec_from(FreezeSweepSpec, exempt=exempt)
        return bound.spec_from(FreezeSpec, layers=_blocks(block), final=final, exempt=exempt)
    if experiment == "fold":
        return bound.spec_from(
            FoldSpec, final=bound.toggle(P["ex_fold_final"], t("experiments.fold.final"), left)
        )
    if experiment == "lens":
        top_k = bound.number(P["ex_top_k"], t("experiments.lens.top_k"), left)
        return bound.spec_from(LensSpec, top_k=top_k)
    upcast = bound.toggle(P["ex_upcast"], t("experiments.half.upcast"), left)
    return bound.spec_from(HalfSpec, upcast=upcast)


def model_choice(models: tuple[LocalModel, ...]) -> LocalModel | None:
    """The operator's model chosen (None: the built-in one); drawn only where the server
    lists some.  A linked id the server does not list is refused by name."""
    wanted = st.session_state.get("ex_model", "")
    if wanted and wanted not in {m.id for m in models}:
        try:
            find_model(wanted, models)
        except EngineError as error:
            message = t("experiments.model_refused", param="`ex_model`", why=error_text(error))
            st.warning(message, icon=":material/link_off:")
        st.session_state["ex_model"] = ""
    if not models:
        return None
    ids = ["", *(m.id for m in models)]
    chosen = st.selectbox(
        t("experiments.model"),
        ids,
        key="ex_model",
        format_func=lambda i: i or t("experiments.builtin"),
        help=t("experiments.model_help"),
        persist_state=bound.KEEP,
    )
    return next((m for m in models if m.id == chosen), None)


def inputs(models: tuple[LocalModel, ...] = ()) -> ExperimentInputs:
    model = model_choice(models)
    experiment = experiment_choice()
    text, text_errors = text_choice()
    st.markdown(f"**{t('experiments.settings')}**")
    spec, errors = settings(experiment)
    return ExperimentInputs(experiment, text, spec, text_errors + errors, model)


def _commit(request: str) -> None:
    picked = st.session_state.get(f"ex_pick_{request}")
    if picked is not None:
        st.session_state.setdefault(PREDICTIONS, {})[request] = picked


def _forget(request: str) -> None:
    st.session_state.setdefault(PREDICTIONS, {}).pop(request, None)


def prediction(chosen: ExperimentInputs) -> str | None:
    """The committed prediction for this request; draws the answers and Commit until then."""
    request, experiment = chosen.request, chosen.experiment
    committed = st.session_state.get(PREDICTIONS, {}).get(request)
    st.markdown(f"**{t('experiments.predict')}** · {_question(chosen)}")
    choices = options(experiment)
    picked = st.radio(
        t("experiments.predict"),
        choices,
        index=None if committed is None else choices.index(committed),
        key=f"ex_pick_{request}",
        format_func=lambda option: option_text(experiment, option, current_language()),
        disabled=committed is not None,
        label_visibility="collapsed",
    )
    if committed is None:
        st.button(
            t("experiments.commit"),
            key=f"ex_commit_{request}",
            type="primary",
            icon=":material/lock:",
            disabled=picked is None,
            help=t("experiments.commit_help"),
            on_click=_commit,
            args=(request,),
        )
        st.caption(t("experiments.predict_first"))
    else:
        st.button(
            t("experiments.change"),
            key=f"ex_change_{request}",
            icon=":material/replay:",
            on_click=_forget,
            args=(request,),
        )
    return committed


def _question(chosen: ExperimentInputs) -> str:
    tolerance = getattr(chosen.spec, "tolerance", SAME)
    massive = chosen.spec if isinstance(chosen.spec, MassiveSpec) else MassiveSpec()
    return t(
        f"experiments.question.{chosen.experiment}",
        tolerance=f"{100 * tolerance:g}",
        massive_abs=f"{massive.massive_abs:,g}",
        massive_ratio=f"{massive.massive_ratio:,g}",
    )
