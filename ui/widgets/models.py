"""Model catalog inputs: the family to look at, and the config that fills the calculator.

A catalog example is named in the URL (``md_example``); a pasted config.json is user data: it
lives in this browser session's text box only, never in the URL or a cache other sessions
read (the page computes with ``private=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from engine.config import ModelShape
from engine.errors import EngineError
from engine.models.config_json import parse_config
from engine.models.families import Catalog, Family
from ui import presenting
from ui.compute import compute
from ui.errors import error_text
from ui.i18n import current_language, t
from ui.text.models import localized
from ui.url.pages import MODELS as P
from ui.widgets import bound

MAX_CONFIG_CHARS = 200_000  # a config.json is a few kB; a multimodal one with label maps, ~100 kB


@dataclass(frozen=True)
class CalculatorInputs:
    shape: ModelShape | None  # None until a config is read
    dtype: str | None  # None: the config's torch_dtype, else bfloat16 (calculator.norm_cost)
    tokens: int
    pasted: bool
    read_as: Family | None  # the catalog family the config was read as
    shared_with: tuple[Family, ...]  # other families whose configs carry the same model_type
    errors: tuple[str, ...]


def family_choice(families: Catalog) -> Family:
    """The family shown in detail: navigation, shown in every presentation mode."""
    with presenting.navigation("md_family"):
        chosen = bound.selectbox(
            P["md_family"], t("models.family"), format_func=lambda i: families.family(i).name
        )
    return families.family(chosen)


def _dtype_name(dtype: str) -> str:
    return t("models.dtype_config") if dtype == "config" else dtype


PASTE_KEY = "md_config_text"  # the pasted config: this session's only, never in the link


def _config_text(families: Catalog) -> tuple[str, str | None, bool]:
    """(config.json text, the family it is read as or None for its model_type, pasted)."""
    mode = bound.segmented(P["md_input"], t("models.input"))
    if mode == "example":
        family_id = bound.selectbox(
            P["md_example"],
            t("models.example"),
            format_func=lambda i: families.family(i).example.label,
        )
        example = families.family(family_id).example
        source = localized(example, "source", current_language())
        st.caption(t("models.example_source", source=source))
        with st.expander(t("models.example_json")):
            st.json(example.config, expanded=True)
        return example.config_json, family_id, False
    text = st.text_area(
        t("models.paste"),
        key=PASTE_KEY,
        persist_state=bound.KEEP,  # a paste survives a look at the example and back
        height=200,
        max_chars=MAX_CONFIG_CHARS,
        placeholder='{"model_type": "llama", "hidden_size": 4096, ...}',
    )
    st.caption(t("models.paste_private"))
    return text, None, True


def calculator_inputs(families: Catalog) -> CalculatorInputs:
    """The config to count, as a ModelShape, or the translated reason it cannot be read."""
    config_column, cost_column = st.columns([3, 2], gap="large")
    with config_column:
        text, family_id, pasted = _config_text(families)
    with cost_column:
        dtype = bound.selectbox(
            P["md_dtype"], t("models.dtype"), format_func=_dtype_name, help=t("models.dtype_help")
        )
        tokens = bound.number(P["md_tokens"], t("models.tokens"), help=t("models.tokens_help"))
    dtype = None if dtype == "config" else dtype
    if not text.strip():
        return CalculatorInputs(None, dtype, int(tokens), pasted, None, (), ())
    try:
        shape = compute(parse_config, text, family_id, private=pasted)
    except EngineError as error:
        return CalculatorInputs(None, dtype, int(tokens), pasted, None, (), (error_text(error),))
    family = families.family(shape.family)
    shared = {f.id: f for m in family.model_types for f in families.sharing_model_type(m)}
    others = tuple(f for f in shared.values() if f.id != family.id) if pasted else ()
    return CalculatorInputs(shape, dtype, int(tokens), pasted, family, others, ())
