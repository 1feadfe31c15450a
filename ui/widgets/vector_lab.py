"""Vector Lab inputs: the vectors, the norm and its constants, the precision."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

from engine.config import MAX_ROWS, MAX_VECTOR_WIDTH, NormSpec, RandomSpec
from engine.norms.kinds import KIND_AXES
from engine.norms.precision_facts import DefaultEps
from engine.norms.precision_presets import PRESET_NAMES, PrecisionPreset
from engine.norms.precision_presets import PRESETS as PRECISION_PRESETS
from engine.norms.reference import DYT_ALPHA0, DYT_SOURCE
from ui.errors import input_error_text
from ui.formatting import count, format_number, grouped, number_text, true_minus
from ui.i18n import current_language, t
from ui.labels import label
from ui.text.vector_lab_precision import default_eps_sentence
from ui.url.pages import VECTOR_LAB as P
from ui.vector_input import (
    MAX_VECTOR_CELLS,
    Rows,
    VectorInputError,
    parse_eps,
    parse_parameter,
    parse_vectors,
    underflow_notes,
)
from ui.widgets import bound

# Examples fill the widgets through session state (which also rewrites the URL); every
# setting an example does not name goes back to its default, so the link names the example's
# state and nothing the previous one left behind.  These are typed; the others are the
# precision presets (``example_states``).
TYPED_STATES = {
    "textbook": {
        "vl_source": "text",
        "vl_text": "1, 2, 3, 4",
        "vl_norm": "layernorm",
        "vl_eps": "0",
        "vl_dtype": "float32",
        "vl_compute": "float32",
    },
    "tokens": {
        "vl_source": "text",
        "vl_text": "1, 2, 3, 4\n-3, -1, 1, 3\n10, 10, 10, 10.5",
        "vl_norm": "layernorm",
        "vl_eps": "1e-5",
        "vl_dtype": "float32",
        "vl_compute": "float32",
    },
    "mean_shift": {
        "vl_source": "text",
        "vl_text": "101, 102, 103, 104",
        "vl_norm": "rmsnorm",
        "vl_eps": "1e-5",
        "vl_dtype": "float32",
        "vl_compute": "float32",
    },
    "bf16_rounding": {
        "vl_source": "text",
        "vl_text": "1000, 1000.5, 1001, 1001.5",
        "vl_norm": "layernorm",
        "vl_eps": "1e-5",
        "vl_dtype": "bfloat16",
        "vl_compute": "float32",
    },
}
SHORT_ROW = 8  # a preset row up to this wide is written out in its label and typed
PRECISION_BY_NAME = {p.name: p for p in PRECISION_PRESETS}
# ``presets`` below: each precision preset's rows by name, as the page asks for them
# (``ui/requests/vector_lab.py``)


def _precision_preset_state(preset: PrecisionPreset, row: tuple[float, ...]) -> dict:
    """The widget values that show ``preset`` (engine/norms/precision_presets.py), whose row
    is ``row``: a short row typed out, a wide one named by its id (its link stays short)."""
    state = {
        "vl_norm": preset.kind,
        "vl_eps": number_text(preset.eps),
        "vl_dtype": preset.dtype,
        "vl_compute": preset.dtype,  # the worked steps: sum, then divide, in half
    }
    if preset.d > SHORT_ROW:
        return {"vl_source": "preset", "vl_preset": preset.name, **state}
    return {"vl_source": "text", "vl_text": ", ".join(map(number_text, row)), **state}


def example_states(presets: Mapping[str, Rows]) -> dict[str, dict]:
    """What each example of the menu sets, by name: the typed ones, then the presets."""
    precision = {p.name: _precision_preset_state(p, presets[p.name][0]) for p in PRECISION_PRESETS}
    return TYPED_STATES | precision


def preset_label_params(name: str, presets: Mapping[str, Rows]) -> dict:
    """The numbers an example's label quotes, read from the example itself, as the page writes
    numbers people read: a negative one with the true minus ("[−300, 300, …]"), four digits
    or more grouped ("4,096 entries", "one 1,000"); a short row keeps the typed form, whose
    commas separate its entries."""
    if name in PRESET_NAMES:
        p, row = PRECISION_BY_NAME[name], presets[name][0]
        special = p.overrides[0][1] if p.overrides else row[0]
        return {
            "d": count(p.d),
            "value": grouped(true_minus(number_text(special))),
            "base": grouped(number_text(abs(p.pattern[0]))),
            "row": true_minus(", ".join(map(number_text, row))) if p.d <= SHORT_ROW else "",
            "eps": number_text(p.eps),
            "dtype": p.dtype,
        }
    state = TYPED_STATES[name]
    rows = state["vl_text"].split("\n")
    return {
        "row": true_minus(rows[0]),
        "rows": len(rows),
        "eps": state["vl_eps"],
        "dtype": state["vl_dtype"],
    }


@dataclass(frozen=True)
class VectorLabConfig:
    """Everything the Vector Lab computes from: hashable, so results are cached on it."""

    rows: Rows  # [T, d]
    spec: NormSpec
    input_dtype: str
    weight: tuple[float, ...] | None  # one value (broadcast) or d values
    bias: tuple[float, ...] | None
    row_index: int


@dataclass(frozen=True)
class VectorChoice:
    """The rows the Vector Lab shows: typed (parsed here), or named for the page to ask for
    (``ui/requests/vector_lab.py``): a precision preset, or a random draw."""

    dtype: str  # the storage dtype
    computed_in: str
    rows: Rows | None = None  # typed
    preset: str | None = None
    random: RandomSpec | None = None
    errors: tuple[str, ...] = ()  # translated: the typed rows, or the draw's size, refused


MENU = "vl_menu"  # the examples menu: it fills the settings, it is not a setting itself


def preset_state(name: str, presets: Mapping[str, Rows]) -> dict:
    """Every Vector Lab setting once the example ``name`` is chosen: its values, and every
    other setting at its default."""
    return {param.key: param.default for param in P.params} | example_states(presets)[name]


def _apply_preset(presets: Mapping[str, Rows]) -> None:
    name = st.session_state.get(MENU)
    if name in example_states(presets):
        st.session_state.update(preset_state(name, presets))
    # back to its placeholder: a chosen example's long name was cut in the box, and the
    # settings it filled in say what is shown
    st.session_state[MENU] = None


def _preset_name(name: str, presets: Mapping[str, Rows]) -> str:
    return t(f"vector_lab.presets.{name}", **preset_label_params(name, presets))


def _preset_short_name(name: str, presets: Mapping[str, Rows]) -> str:
    """A wide example's name short enough for a select box on a phone."""
    return t(f"vector_lab.preset_short.{name}", **preset_label_params(name, presets))


def _read(errors: list[str], parse, *args, refused=None):
    """``parse(*args)``, or ``refused`` with the input's error noted in ``errors``."""
    try:
        return parse(*args)
    except VectorInputError as error:
        errors.append(input_error_text(error))
        return refused


def _vectors(source: str, dtype: str, presets: Mapping[str, Rows]) -> dict:
    """The fields of ``VectorChoice`` that name the rows."""
    if source == "preset":
        name = bound.selectbox(
            P["vl_preset"],
            t("vector_lab.preset_row"),
            format_func=lambda name: _preset_short_name(name, presets),
        )
        return {"preset": name}
    if source == "text":
        text = bound.text_area(
            P["vl_text"],
            t("vector_lab.vectors"),
            height=110,
            help=t("vector_lab.vectors_help", rows=MAX_ROWS, width=MAX_VECTOR_WIDTH),
        )
        return {"rows": parse_vectors(text, dtype)}
    # Each number box a row of its own: Streamlit drops a box's − and + buttons under 7.5rem
    # (more with a help icon), and half of the inputs column beside the results is ~7rem at
    # 1,280 px.  The distribution's too: "uniform U(−√3, √3)" is cut in half a column.
    d = bound.number(P["vl_d"], "d")
    rows = bound.number(P["vl_rows"], t("vector_lab.rows"))
    dist = bound.selectbox(P["vl_dist"], t("vector_lab.distribution"))
    seed = bound.number(P["vl_seed"], t("vector_lab.seed"))
    shift = bound.number(P["vl_shift"], t("vector_lab.shift"))
    scale = bound.number(P["vl_scale"], t("vector_lab.scale"))
    if int(rows) * int(d) > MAX_VECTOR_CELLS:
        raise VectorInputError(
            "too_many_cells", {"cells": int(rows) * int(d), "limit": MAX_VECTOR_CELLS}
        )
    return {"random": RandomSpec(int(rows), int(d), dist, shift, scale, int(seed))}


def vector_choice(presets: Mapping[str, Rows]) -> VectorChoice:
    """Draw the examples menu and the inputs of the vectors, and say which rows they name."""
    bound.named_in_page_language(MENU)
    st.selectbox(
        t("vector_lab.preset"),
        list(example_states(presets)),
        index=None,
        key=MENU,
        placeholder=t("vector_lab.preset_placeholder"),
        on_change=_apply_preset,
        args=(presets,),
        format_func=lambda name: _preset_name(name, presets),
    )
    source = bound.segmented(P["vl_source"], t("vector_lab.source"))
    c1, c2 = st.columns(2)
    dtype = bound.selectbox(
        P["vl_dtype"], t("vector_lab.stored_as"), c1, help=t("vector_lab.stored_as_help")
    )
    computed_in = bound.selectbox(
        P["vl_compute"], t("vector_lab.computed_in"), c2, help=t("vector_lab.computed_in_help")
    )
    # The norm is chosen further down; its value is already in the state (a link's or the
    # last run's): DyT takes no statistic, so "Statistics: … sum, then divide" is not said of it
    if st.session_state.get(P["vl_norm"].key, P["vl_norm"].default) == "dyt":
        st.caption(t("vector_lab.computed_in_caption_dyt", dtype=computed_in))
    else:
        st.caption(t("vector_lab.computed_in_caption", compute=label("compute", computed_in)))
    errors: list[str] = []
    named = _read(errors, _vectors, source, dtype, presets, refused={})
    return VectorChoice(dtype, computed_in, errors=tuple(errors), **named)


def norm_inputs(
    choice: VectorChoice, vectors, default_eps: dict[str, tuple[DefaultEps, ...]]
) -> tuple[VectorLabConfig | None, tuple[str, ...], tuple[str, ...]]:
    """Draw the norm's input widgets and return the config they describe with the rows (None
    where an input is refused), the translated refusals, and remarks on the input (values
    stored as 0).

    ``vectors``: the rows ``choice`` names and their refusal (``ui/requests/vector_lab.py``);
    ``default_eps``: ``engine.norms.precision_facts.default_eps_table`` for each storage
    dtype, quoted in the ε help (each kind's real default).
    """
    rows, errors = vectors[0], list(vectors[1])
    dtype, computed_in = choice.dtype, choice.computed_in
    st.divider()
    kind = bound.selectbox(P["vl_norm"], t("vector_lab.norm"))
    eps_default = default_eps_sentence(default_eps[dtype], kind, dtype, current_language())
    if kind == "dyt":  # DyT has no ε: its value kept for the next norm, not offered
        eps_text = st.session_state.get(P["vl_eps"].key, P["vl_eps"].default)
    else:
        eps_text = bound.text_input(
            P["vl_eps"], "ε", help=t("vector_lab.eps_help", default=eps_default)
        )
    c1, c2 = st.columns(2)
    gamma_text = bound.text_input(P["vl_gamma"], "γ", c1, help=t("vector_lab.gamma_help"))
    beta_text = None  # RMSNorm has no β: no field, no "+ βᵢ"
    if "beta" in KIND_AXES[kind].params:
        beta_text = bound.text_input(P["vl_beta"], "β", c2, help=t("vector_lab.beta_help"))
    else:  # its value is kept for the next norm that has a β
        c2.caption(t("vector_lab.no_beta", norm=label("norm", kind)))
    offset = bound.number(  # after γ, whose 1 + γ it is
        P["vl_offset"], t("vector_lab.offset"), step=1.0, help=t("vector_lab.offset_help")
    )
    groups, alpha = 1, 0.5
    if kind == "groupnorm":
        groups = int(bound.number(P["vl_groups"], t("vector_lab.groups")))
    if kind == "dyt":
        alpha_help = t("vector_lab.alpha_help", alpha0=format_number(DYT_ALPHA0), source=DYT_SOURCE)
        alpha = bound.number(P["vl_alpha"], "α", step=0.1, help=alpha_help)
    d = len(rows[0]) if rows else 0
    eps, weight, bias = _read(errors, parse_eps, eps_text, refused=0.0), None, None
    if d:
        weight = _read(errors, parse_parameter, gamma_text, d, "γ")
        if beta_text is not None:
            bias = _read(errors, parse_parameter, beta_text, d, "β")
        if kind == "groupnorm" and d % groups:
            divisors = ", ".join(str(k) for k in range(1, d + 1) if d % k == 0)
            errors.append(t("input.groups_invalid", groups=groups, d=d, divisors=divisors))
    row_index = 0
    if len(rows) > 1:
        row_index = int(bound.number(P["vl_row"], t("vector_lab.row_shown"), high=len(rows))) - 1
    else:  # one row: no box to pick it, but a link's row past it is said, not kept
        bound.clamp(P["vl_row"], 1, name=t("vector_lab.row_shown"))
    if errors or not rows:
        return None, tuple(errors), ()
    spec = NormSpec(
        kind=kind,
        eps=eps,
        offset=float(offset),
        groups=groups,
        alpha=float(alpha),
        compute_dtype=computed_in,
    )
    config = VectorLabConfig(rows, spec, dtype, weight, bias, min(row_index, len(rows) - 1))
    return config, (), underflow_notes(rows, dtype, drawn=choice.random is not None)
