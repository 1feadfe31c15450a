"""Model catalog: how real model families normalize, with sources, and a norm calculator."""

import streamlit as st

from engine.models.calculator import norm_budget, norm_cost
from engine.models.loader import catalog
from ui import presenting
from ui.compute import compute
from ui.errors import showing_refusals
from ui.i18n import t
from ui.views import models as view
from ui.widgets.models import calculator_inputs, family_choice

st.title(t("models.title"))
st.caption(t("models.intro"))

st.subheader(t("models.catalog_title"))
view.catalog_table(compute(catalog).families)

st.subheader(t("models.detail_title"))
choice_column, link_column = st.columns([3, 2], vertical_alignment="bottom")
with choice_column:
    family = family_choice()
with link_column:
    view.simulate_link(family)
view.family_detail(family)

st.subheader(t("models.calculator_title"))
st.markdown(t("models.calculator_intro"))
with presenting.controls("md"):
    inputs = calculator_inputs()
for message in inputs.errors:
    st.error(message, icon=":material/error:")
if inputs.shape is None and not inputs.errors:
    st.info(t("models.paste_prompt"), icon=":material/content_paste:")
if inputs.shape is not None:
    view.read_as(inputs.shape, inputs.read_as, inputs.shared_with)
    with showing_refusals():  # a fact the catalog lacks, a kind without a cost model
        # private: the shape may come from a config.json someone pasted, which is theirs
        view.budget(compute(norm_budget, inputs.shape, private=True))
        result = compute(norm_cost, inputs.shape, inputs.dtype, inputs.tokens, private=True)
        view.cost(result, inputs.dtype, inputs.shape.dtype)
