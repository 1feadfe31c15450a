"""Vector Lab inputs: the vectors, the norm and its constants, the precision."""

from __future__ import annotations

from dataclasses import astuple, dataclass

import streamlit as st

from engine.config import MAX_ROWS, MAX_VECTOR_WIDTH, NormSpec, RandomSpec
from engine.norms.kinds import KIND_AXES
from engine.norms.precision_facts import DefaultEps
from engine.norms.precision_presets import PRESET_NAMES, PrecisionPreset
from engine.norms.precision_presets import PRESETS as PRECISION_PRESETS
from engine.norms.precision_presets import preset as precision_preset
from engine.norms.random_inputs import random_vectors
from engine.norms.reference import DYT_ALPHA0, DYT_SOURCE
from ui.compute import compute
from ui.errors import input_error_text
from ui.formatting import format_number, number_text
from ui.i18n import current_language, t
from ui.labels import label
from ui.text.vector_lab_precision import default_eps_sentence
from ui.url.pages import VECTOR_LAB as P
from ui.vector_input import (
    MAX_VECTOR_CELLS,
    VectorInputError,
    check_representable,
    parse_eps,
    parse_parameter,
    parse_vectors,
    underflow_notes,
)
from ui.widgets import bound

# Presets fill the widgets through session state (which also rewrites the URL); every
# setting a preset does not name goes back to its default, so the link names the preset's
# state and nothing the previous one left behind.
PRESET_STATES = {
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


def _precision_preset_state(preset: PrecisionPreset) -> dict:
    """The widget values that show ``preset`` (engine/norms/precision_presets.py): a short row
    typed out, a wide one named by its id (its link stays short)."""
    row = preset.rows()[0]
    state = {
        "vl_norm": preset.kind,
        "vl_eps": number_text(preset.eps),
        "vl_dtype": preset.dtype,
        "vl_compute": preset.dtype,  # the worked steps: sum, then divide, in half
    }
    if preset.d > SHORT_ROW:
        return {"vl_source": "preset", "vl_preset": preset.name, **state}
    return {"vl_source": "text", "vl_text": ", ".join(map(number_text, row)), **state}


PRESET_STATES.update({p.name: _precision_preset_state(p) for p in PRECISION_PRESETS})


def preset_label_params(name: str) -> dict:
    """The numbers a preset's label quotes, read from the preset itself."""
    if name in PRESET_NAMES:
        p = precision_preset(name)
        row = p.rows()[0]
        special = p.overrides[0][1] if p.overrides else row[0]
        return {
            "d": p.d,
            "value": number_text(special),
            "base": number_text(abs(p.pattern[0])),
            "row": ", ".join(map(number_text, row)) if p.d <= SHORT_ROW else "",
            "eps": number_text(p.eps),
            "dtype": p.dtype,
        }
    state = PRESET_STATES[name]
    rows = state["vl_text"].split("\n")
    return {"row": rows[0], "rows": len(rows), "eps": state["vl_eps"], "dtype": state["vl_dtype"]}


@dataclass(frozen=True)
class VectorLabConfig:
    """Everything the Vector Lab computes from: hashable, so results are cached on it."""

    rows: tuple[tuple[float, ...], ...]  # [T, d]
    spec: NormSpec
    input_dtype: str
    weight: tuple[float, ...] | None  # one value (broadcast) or d values
    bias: tuple[float, ...] | None
    row_index: int


@dataclass(frozen=True)
class VectorLabInputs:
    config: VectorLabConfig | None
    errors: tuple[str, ...]  # translated messages; config is None when non-empty
    notes: tuple[str, ...] = ()  # translated remarks on the input (values stored as 0)


MENU = "vl_menu"  # the examples menu: it fills the settings, it is not a setting itself


def preset_state(name: str) -> dict:
    """Every Vector Lab setting once the example ``name`` is chosen: its values, and every
    other setting at its default."""
    return {param.key: param.default for param in P.params} | PRESET_STATES[name]


def _apply_preset() -> None:
    name = st.session_state.get(MENU)
    if name in PRESET_STATES:
        st.session_state.update(preset_state(name))
    # back to its placeholder: a chosen example's long name was cut in the box, and the
    # settings it filled in say what is shown
    st.session_state[MENU] = None


def _preset_name(name: str) -> str:
    return t(f"vector_lab.presets.{name}", **preset_label_params(name))


def _preset_short_name(name: str) -> str:
    """A wide example's name short enough for a select box on a phone."""
    return t(f"vector_lab.preset_short.{name}", **preset_label_params(name))


def _vectors(source: str, dtype: str) -> tuple[tuple[float, ...], ...]:
    if source == "preset":
        name = bound.selectbox(
            P["vl_preset"], t("vector_lab.preset_row"), format_func=_preset_short_name
        )
        rows = precision_preset(name).rows()
        check_representable(rows, dtype)
        return rows
    if source == "text":
        text = bound.text_area(
            P["vl_text"],
            t("vector_lab.vectors"),
            height=110,
            help=t("vector_lab.vectors_help", rows=MAX_ROWS, width=MAX_VECTOR_WIDTH),
        )
        return parse_vectors(text, dtype)
    c1, c2 = st.columns(2)
    d = bound.number(P["vl_d"], "d", c1)
    rows = bound.number(P["vl_rows"], t("vector_lab.rows"), c2)
    # a row of its own: "uniform U(−√3, √3)" is cut in half a column
    dist = bound.selectbox(P["vl_dist"], t("vector_lab.distribution"))
    c1, c2 = st.columns(2)
    seed = bound.number(P["vl_seed"], t("vector_lab.seed"), c1)
    shift = bound.number(P["vl_shift"], t("vector_lab.shift"), c2)
    scale = bound.number(P["vl_scale"], t("vector_lab.scale"), c1)
    if int(rows) * int(d) > MAX_VECTOR_CELLS:
        raise VectorInputError(
            "too_many_cells", {"cells": int(rows) * int(d), "limit": MAX_VECTOR_CELLS}
        )
    spec = RandomSpec(int(rows), int(d), dist, shift, scale, int(seed))
    values = compute(random_vectors, *astuple(spec)).tolist()
    check_representable(values, dtype)
    return tuple(tuple(row) for row in values)


def vector_lab_inputs(default_eps: dict[str, tuple[DefaultEps, ...]]) -> VectorLabInputs:
    """Draw the Vector Lab's input widgets and return the config they describe.

    ``default_eps``: ``engine.norms.precision_facts.default_eps_table`` for each storage dtype,
    quoted in the ε help (each kind's real default).
    """
    errors: list[str] = []

    def read(parse, *args, refused=None):
        """``parse(*args)``, or ``refused`` with the input's error noted."""
        try:
            return parse(*args)
        except VectorInputError as error:
            errors.append(input_error_text(error))
            return refused

    bound.named_in_page_language(MENU)
    st.selectbox(
        t("vector_lab.preset"),
        list(PRESET_STATES),
        index=None,
        key=MENU,
        placeholder=t("vector_lab.preset_placeholder"),
        on_change=_apply_preset,
        format_func=_preset_name,
    )
    source = bound.segmented(P["vl_source"], t("vector_lab.source"))
    c1, c2 = st.columns(2)
    dtype = bound.selectbox(
        P["vl_dtype"], t("vector_lab.stored_as"), c1, help=t("vector_lab.stored_as_help")
    )
    computed_in = bound.selectbox(
        P["vl_compute"], t("vector_lab.computed_in"), c2, help=t("vector_lab.computed_in_help")
    )
    st.caption(t("vector_lab.computed_in_caption", compute=label("compute", computed_in)))
    rows: tuple[tuple[float, ...], ...] = read(_vectors, source, dtype, refused=())

    st.divider()
    kind = bound.selectbox(P["vl_norm"], t("vector_lab.norm"))
    c1, c2 = st.columns(2)
    eps_default = default_eps_sentence(default_eps[dtype], kind, dtype, current_language())
    eps_text = bound.text_input(
        P["vl_eps"], "ε", c1, help=t("vector_lab.eps_help", default=eps_default)
    )
    offset = bound.number(
        P["vl_offset"], t("vector_lab.offset"), c2, step=1.0, help=t("vector_lab.offset_help")
    )
    gamma_text = bound.text_input(P["vl_gamma"], "γ", c1, help=t("vector_lab.gamma_help"))
    beta_text = None  # RMSNorm has no β: no field, no "+ βᵢ"
    if "beta" in KIND_AXES[kind].params:
        beta_text = bound.text_input(P["vl_beta"], "β", c2, help=t("vector_lab.beta_help"))
    else:  # its value is kept for the next norm that has a β
        c2.caption(t("vector_lab.no_beta", norm=label("norm", kind)))
    groups, alpha = 1, 0.5
    if kind == "groupnorm":
        groups = int(bound.number(P["vl_groups"], t("vector_lab.groups")))
    if kind == "dyt":
        alpha_help = t("vector_lab.alpha_help", alpha0=format_number(DYT_ALPHA0), source=DYT_SOURCE)
        alpha = bound.number(P["vl_alpha"], "α", step=0.1, help=alpha_help)
    d = len(rows[0]) if rows else 0
    eps, weight, bias = read(parse_eps, eps_text, refused=0.0), None, None
    if d:
        weight = read(parse_parameter, gamma_text, d, "γ")
        if beta_text is not None:
            bias = read(parse_parameter, beta_text, d, "β")
        if kind == "groupnorm" and d % groups:
            divisors = ", ".join(str(k) for k in range(1, d + 1) if d % k == 0)
            errors.append(t("input.groups_invalid", groups=groups, d=d, divisors=divisors))
    row_index = 0
    if len(rows) > 1:
        row_index = int(bound.number(P["vl_row"], t("vector_lab.row_shown"), high=len(rows))) - 1
    if errors or not rows:
        return VectorLabInputs(None, tuple(errors))
    spec = NormSpec(
        kind=kind,
        eps=eps,
        offset=float(offset),
        groups=groups,
        alpha=float(alpha),
        compute_dtype=computed_in,
    )
    config = VectorLabConfig(rows, spec, dtype, weight, bias, min(row_index, len(rows) - 1))
    return VectorLabInputs(config, (), underflow_notes(rows, dtype))
