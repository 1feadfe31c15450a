"""Model catalog: how real model families normalize, with sources, and a norm calculator."""

import streamlit as st

from engine.models.calculator import norm_budget, norm_cost
from engine.models.loader import catalog
from ui import presenting
from ui.compute import compute
from ui.errors import show_errors, showing_refusals
from ui.i18n import t
from ui.requests import models as requests
from ui.sections import section
from ui.views import models as view
from ui.widgets.models import calculator_inputs, family_choice


@section  # a family picked reruns its detail alone
def detail() -> None:
    choice_column, link_column = st.columns([3, 2], vertical_alignment="bottom")
    with choice_column:
        family = family_choice(compute(catalog))
    with link_column:
        view.simulate_link(family)
    view.family_detail(family, compute(catalog))


@section  # a shape, dtype or token count reruns the calculator alone
def calculator() -> None:
    with presenting.controls("md"):
        inputs = calculator_inputs(compute(catalog))
    shape, read_as, shared_with, errors = requests.read_config(inputs, compute(catalog))
    show_errors(errors)
    if shape is None and not errors:
        st.info(t("models.paste_prompt"), icon=":material/content_paste:")
    if shape is not None:
        view.read_as(shape, read_as, shared_with)
        with showing_refusals():  # a fact the catalog lacks, a kind without a cost model
            # private: the shape may come from a config.json someone pasted, which is theirs
            view.budget(compute(norm_budget, shape, private=True), compute(catalog))
            result = compute(norm_cost, shape, inputs.dtype, inputs.tokens, private=True)
            view.cost(result, inputs.dtype, shape)


st.title(t("models.title"))
st.caption(t("models.intro"))
st.subheader(t("models.catalog_title"))
view.catalog_table(compute(catalog).families)
st.subheader(t("models.detail_title"))
detail()
st.subheader(t("models.calculator_title"))
st.markdown(t("models.calculator_intro"))
calculator()
