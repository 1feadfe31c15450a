"""Widgets drawn from a ``ui/url.py`` parameter: key, default, choices and range in one place.

Every page input that belongs in a share link is made here, so its URL key, accepted values
and default cannot drift from the contract (``ui/url.py``), and display names come from
``ui/labels.py`` (``vocabulary``), never from the page.
"""

from __future__ import annotations

import streamlit as st

from ui.formatting import literal
from ui.i18n import t
from ui.labels import label
from ui.url import PageParams, Param


def _names(param: Param):
    if param.vocabulary is None:
        return str
    return lambda value: label(param.vocabulary, value)


def keep_settings(page: PageParams, *other_keys: str) -> None:
    """Keep every setting of a page (and the widgets ``other_keys`` names, such as a pasted
    text kept out of the link) while its widget is not drawn (another section, another
    input mode): Streamlit forgets the state of a widget skipped in a run."""
    for key in (*(param.key for param in page.params), *other_keys):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def selectbox(param: Param, text: str, target=st, **kwargs):
    return target.selectbox(
        text,
        param.choices,
        index=param.choices.index(param.default),
        key=param.key,
        format_func=kwargs.pop("format_func", _names(param)),
        **kwargs,
    )


def multiselect(param: Param, text: str, target=st, **kwargs):
    return target.multiselect(
        text,
        param.choices,
        default=list(param.default),
        key=param.key,
        format_func=kwargs.pop("format_func", _names(param)),
        **kwargs,
    )


def pills(param: Param, text: str, target=st, **kwargs):
    return target.pills(
        text,
        param.choices,
        selection_mode="multi",
        default=list(param.default),
        key=param.key,
        format_func=_names(param),
        **kwargs,
    )


def segmented(param: Param, text: str, target=st, **kwargs):
    chosen = target.segmented_control(
        text,
        param.choices,
        default=param.default,
        key=param.key,
        format_func=kwargs.pop("format_func", _names(param)),
        **kwargs,
    )
    return param.default if chosen is None else chosen


def section(param: Param, text: str, names: str, **kwargs) -> str:
    """A page's switcher between its sections: the choices named by the keys ``names + id``
    (e.g. "axes.section_" + "batchnorm"), its label read by screen readers only."""
    kwargs.setdefault("width", "stretch")
    return segmented(
        param,
        text,
        format_func=lambda key: t(f"{names}{key}"),
        label_visibility="collapsed",
        **kwargs,
    )


def select_slider(param: Param, text: str, target=st, **kwargs):
    return target.select_slider(text, param.choices, value=param.default, key=param.key, **kwargs)


def number(param: Param, text: str, target=st, high=None, **kwargs):
    """An int or float input over the parameter's range (``high`` narrows it, e.g. rows)."""
    cast = int if param.kind == "int" else float
    top = param.high if high is None else min(param.high, high)
    if param.key in st.session_state and st.session_state[param.key] is not None:
        stored = st.session_state[param.key]
        if stored > top:  # a link's value past this view's end, or the range shrank under it
            st.warning(
                t("share.clamped", param=literal(param.key), value=stored, last=cast(top)),
                icon=":material/link_off:",
            )
            st.session_state[param.key] = cast(top)
    return target.number_input(
        text,
        min_value=cast(param.low),
        max_value=cast(top),
        value=min(cast(param.default), cast(top)),
        key=param.key,
        **kwargs,
    )


def toggle(param: Param, text: str, target=st, **kwargs):
    return target.toggle(text, value=param.default, key=param.key, **kwargs)


def text_input(param: Param, text: str, target=st, **kwargs):
    """A text box that takes no more than its link accepts (so every typed value can be shared)."""
    kwargs.setdefault("max_chars", param.max_chars)
    return target.text_input(text, value=param.default, key=param.key, **kwargs)


def text_area(param: Param, text: str, target=st, **kwargs):
    kwargs.setdefault("max_chars", param.max_chars)
    return target.text_area(text, value=param.default, key=param.key, **kwargs)


def slider(param: Param, text: str, target=st, **kwargs):
    """A slider over the parameter's whole range."""
    cast = int if param.kind == "int" else float
    return target.slider(
        text,
        min_value=cast(param.low),
        max_value=cast(param.high),
        value=cast(param.default),
        key=param.key,
        **kwargs,
    )
