"""Model catalog inputs: the family to look at, and the config that fills the calculator.

A catalog example is named in the URL (``md_example``); a pasted config.json is user data: it
lives in this browser session's text box only, never in the URL or a cache other sessions
read (``ui/requests/models.py`` reads it with ``private=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from engine.models.families import Catalog, Family
from ui import presenting
from ui.i18n import current_language, t
from ui.text.models import localized
from ui.url.pages import MODELS as P
from ui.widgets import bound


@dataclass(frozen=True)
class CalculatorInputs:
    text: str  # the config.json to read ("": none yet)
    family_id: str | None  # the family it is read as; None: the one its model_type names
    pasted: bool  # the user's own text: read in this browser session only
    dtype: str | None  # None: the config's torch_dtype, else bfloat16 (calculator.norm_cost)
    tokens: int


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
            format_func=lambda i: localized(
                families.family(i).example, "label", current_language()
            ),
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
        height=200,  # no max_chars: the browser drops a longer paste without a word
        placeholder='{"model_type": "llama", "hidden_size": 4096, ...}',
    )
    st.caption(t("models.paste_private"))
    return text, None, True


def calculator_inputs(families: Catalog) -> CalculatorInputs:
    """The config to count (read by ``ui/requests/models.py``), its dtype and tokens."""
    config_column, cost_column = st.columns([3, 2], gap="large")
    with config_column:
        text, family_id, pasted = _config_text(families)
    with cost_column:
        dtype = bound.selectbox(
            P["md_dtype"], t("models.dtype"), format_func=_dtype_name, help=t("models.dtype_help")
        )
        tokens = bound.number(P["md_tokens"], t("models.tokens"), help=t("models.tokens_help"))
    dtype = None if dtype == "config" else dtype
    return CalculatorInputs(text, family_id, pasted, dtype, int(tokens))
