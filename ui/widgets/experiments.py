"""Experiments page inputs: which experiment, which text, its settings (one frozen spec each),
and the learner's committed prediction.

Every setting is a ``ui/url/`` parameter (EXPERIMENTS_PAGE), so a link opens the same
experiment; a prediction is not: it is this browser's, kept in session state per request
(experiment, text and settings), so a new setting asks for a new prediction.
"""

from __future__ import annotations

import hashlib
import re
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
from engine.dumps.local_files import LocalModel
from engine.errors import EngineError
from engine.experiments.experiment import OPTIONS, SAME
from ui.errors import error_text
from ui.formatting import as_ascii, literal
from ui.i18n import current_language, t
from ui.text.experiments import option_text
from ui.url.address_bar import drawn, from_link
from ui.url.pages import EXPERIMENTS_PAGE as P
from ui.widgets import bound

PREDICTIONS = "ex_predictions"  # session state: {request id: committed option}
JUDGED = "_ex_judged"  # request -> the prediction committed when its result was first shown


@dataclass(frozen=True)
class ExperimentInputs:
    experiment: str
    text: TextSpec | None
    spec: Any  # the experiment's spec, or None when refused
    errors: tuple[str, ...]
    model: LocalModel | None = None  # None: the built-in model
    blocks_named: str = ""  # how a refusal names the box of blocks (``blocks_named``)

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


MAX_BLOCK = 10**4 - 1  # the specs take block numbers below 10⁴ (the model bounds them further)
EVERY = ("all", "全部", "-1")  # every block ("-1": what links wrote before sets existed)
_SEPARATORS = re.compile(r"[\s,，、;；]+")
_RANGE = re.compile(r"(\d+)\s*[-–—~～]\s*(\d+)")


def parse_blocks(text: str) -> tuple[int, ...] | None:
    """The blocks typed: None for every block ("all"), else the sorted numbers of items
    such as ``12`` and ranges such as ``0-5``, separated by commas or spaces (what a Chinese
    keyboard types too: full-width digits and punctuation, ``、``).  ``ValueError(item)`` names
    the first item that is neither, or is "" for an empty text."""
    text = as_ascii(text).strip()
    if text.lower() in EVERY:
        return None
    text = _RANGE.sub(lambda m: f"{m[1]}-{m[2]}", text)  # "0 - 5" is one item
    blocks: set[int] = set()
    for item in filter(None, _SEPARATORS.split(text)):
        low, dash, high = item.partition("-")
        if not all(part.isascii() and part.isdigit() for part in (low, high if dash else low)):
            raise ValueError(item)
        first, last = int(low), int(high or low)
        if last > MAX_BLOCK or first > last:
            raise ValueError(item)
        blocks.update(range(first, last + 1))
    if not blocks:
        raise ValueError("")
    return tuple(sorted(blocks))


def blocks_named(experiment: str) -> str:
    """How a refusal names the experiment's box of blocks ("" where it has none): by the
    link's key for a value the link gave, until the box is first drawn; else by the box's
    name (its label without the hint the Chinese label carries)."""
    if experiment not in ("swap", "freeze"):
        return ""
    key = f"ex_{experiment}_block"
    return literal(key) if from_link(key) else t(f"experiments.{experiment}.block_name")


def _blocks(key: str, said: str, target) -> tuple[tuple[int, ...] | None, tuple[str, ...]]:
    """The blocks a text box names, or (None, the refusal naming the box as ``said``:
    ``blocks_named``); ``()`` for an empty box (the final norm alone, where its toggle is on:
    ``_some_norm``)."""
    label = t(f"experiments.{key.split('_')[1]}.block")
    typed = bound.text_input(P[key], label, target, help=t("experiments.block_help"))
    drawn(key)  # from now on the box's own value
    try:
        return parse_blocks(typed), ()
    except ValueError as bad:
        item = str(bad)
        if not item:
            return (), ()
        low, _, high = item.partition("-")
        if low.isdigit() and high.isdigit() and int(low) > int(high):  # "5-2": runs downward
            upward = literal(f"{int(high)}-{int(low)}")
            why = t("experiments.blocks_downward", param=said, item=literal(item), upward=upward)
        else:
            why = t("experiments.blocks_refused", param=said, item=literal(item))
        return None, (why,)


def _some_norm(said: str, blocks, final: bool, final_text: str) -> tuple[str, ...]:
    """The refusal of an empty block box (named as ``said``) with the final norm left out:
    nothing to change."""
    if blocks == () and not final:
        return (t("experiments.blocks_empty", param=said, final=final_text),)
    return ()


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


def settings(experiment: str, said: str, target=st) -> tuple[Any, tuple[str, ...]]:
    """The experiment's spec from its widgets (or None and the refusal); ``said``: how a
    refusal names its box of blocks (``blocks_named``)."""
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
        # a window matters to "mean" alone: another setting's run is the same whatever it says
        windowed = {"window": window} if setting == "mean" else {}
        return bound.spec_from(MassiveSpec, setting=setting, **windowed)
    if experiment == "swap":
        blocks, refused = _blocks("ex_swap_block", said, left)
        final_text = t("experiments.swap.final")
        final = bound.toggle(P["ex_swap_final"], final_text, right)
        refused = refused or _some_norm(said, blocks, final, final_text)
        if refused:
            return None, refused
        return bound.spec_from(SwapSpec, layers=blocks, final=final)
    if experiment in ("freeze", "sweep"):
        if experiment == "freeze":
            blocks, refused = _blocks("ex_freeze_block", said, left)
            final_text = t("experiments.freeze.final")
            final = bound.toggle(P["ex_freeze_final"], final_text, left)
            refused = refused or _some_norm(said, blocks, final, final_text)
        exempt = bound.selectbox(
            P["ex_exempt" if experiment == "freeze" else "ex_sweep_exempt"],
            t("experiments.freeze.exempt"), right if experiment == "freeze" else left,
            format_func=_named("exempt"),
        )  # fmt: skip
        if experiment == "sweep":
            return bound.spec_from(FreezeSweepSpec, exempt=exempt)
        if refused:
            return None, refused
        return bound.spec_from(FreezeSpec, layers=blocks, final=final, exempt=exempt)
    if experiment == "fold":
        return bound.spec_from(
            FoldSpec, final=bound.toggle(P["ex_fold_final"], t("experiments.fold.final"), left)
        )
    if experiment == "lens":
        top_k = bound.number(P["ex_top_k"], t("experiments.lens.top_k"), left)
        return bound.spec_from(LensSpec, top_k=top_k)
    upcast = bound.toggle(P["ex_upcast"], t("experiments.half.upcast"), left)
    return bound.spec_from(HalfSpec, upcast=upcast)


def linked_model() -> str:
    """The model id the link names ("": the built-in model)."""
    return st.session_state.get("ex_model", "")


def model_choice(models: tuple[LocalModel, ...], refused: EngineError | None) -> LocalModel | None:
    """The operator's model chosen (None: the built-in one); drawn only where the server
    lists some.  A linked id the server does not list (``refused``: the engine's refusal of
    ``linked_model()``, ``ui/requests/experiments.py``) is refused by name."""
    if refused is not None:
        message = t("experiments.param_refused", param="`ex_model`", why=error_text(refused))
        st.warning(message, icon=":material/link_off:")
        st.session_state["ex_model"] = ""
    if not models:
        return None
    chosen = bound.selectbox(
        P["ex_model"],
        t("experiments.model"),
        options=["", *(m.id for m in models)],
        format_func=lambda i: i or t("experiments.builtin"),
        help=t("experiments.model_help"),
    )
    return next((m for m in models if m.id == chosen), None)


def inputs(models: tuple[LocalModel, ...], refused: EngineError | None) -> ExperimentInputs:
    model = model_choice(models, refused)
    experiment = experiment_choice()
    text, text_errors = text_choice()
    st.markdown(f"**{t('experiments.settings')}**")
    named = blocks_named(experiment)
    spec, errors = settings(experiment, named)
    return ExperimentInputs(experiment, text, spec, text_errors + errors, model, named)


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
    choices = OPTIONS[experiment]
    bound.named_in_page_language(f"ex_pick_{request}")
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


def judged(request: str, committed: str) -> str:
    """The prediction a result is judged against: the one committed when the result was first
    shown.  A prediction changed after it (the answer in view) is not judged as made before."""
    return st.session_state.setdefault(JUDGED, {}).setdefault(request, committed)


def _question(chosen: ExperimentInputs) -> str:
    tolerance = getattr(chosen.spec, "tolerance", SAME)
    massive = chosen.spec if isinstance(chosen.spec, MassiveSpec) else MassiveSpec()
    return t(
        f"experiments.question.{chosen.experiment}",
        tolerance=f"{100 * tolerance:g}",
        massive_abs=f"{massive.massive_abs:,g}",
        massive_ratio=f"{massive.massive_ratio:,g}",
    )
