"""Widgets drawn from a ``ui/url/`` parameter: key, default, choices and range in one place.

Every page input that belongs in a share link is made here, so its URL key, accepted values
and default cannot drift from the contract (``ui/url/``, itself made from the engine's
specs), and display names come from ``ui/labels.py`` (``vocabulary``), never from the page.
Each keeps its value while a page does not draw it (another section, another input mode:
``persist_state="page"``), so a hidden setting survives and stays in the share link.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from engine.errors import EngineError
from ui import presenting
from ui.errors import error_text
from ui.formatting import count, format_reading, literal, true_minus
from ui.i18n import current_language, t
from ui.labels import label
from ui.url.address_bar import drawn, from_link
from ui.url.codec import Param

KEEP = "page"  # Streamlit's persist_state: kept while hidden, dropped on a page switch


def _names(param: Param):
    if param.vocabulary is None:
        return _number_name
    return lambda value: label(param.vocabulary, value)


def _number_name(value) -> str:
    """An option that is a whole number, as the page's sentences write it: 1024 -> "1,024"."""
    if isinstance(value, int) and not isinstance(value, bool):
        return count(value)
    return str(value)


def spec_from(spec: type, /, worded: dict[str, str] | None = None, **values):
    """``spec(**values)`` and no errors, or None and the engine's refusal translated: what a
    spec accepts is checked by the spec alone (a field left out takes the spec's default,
    which is its parameter's).  ``worded`` maps a refusal's key to a page's own message for
    it (the live prompt's "config.empty" names the text box, not the field ``prompt``)."""
    try:
        return spec(**values), ()
    except EngineError as error:
        own = (worded or {}).get(error.key)
        return None, (t(own) if own else error_text(error),)


def clamp(
    param: Param,
    last,
    key: str = "share.clamped",
    name: str | None = None,
    step=1,
    option: Callable[[int], str] | None = None,
    **params,
):
    """A value past what this view holds is said, then shown as ``last``: never clamped
    silently.  A link's value with the message ``key``, which names the link's key; where
    the widget named ``name`` has been drawn since (a value typed, or left past the end by
    another box's change), in the widget's own words, and not at all for one ``step`` past
    the ``last`` its box showed (its + button there).  A select box of indices names its
    options with ``option``: its value was one of options now gone (a smaller dump), said
    with the name of the option shown instead.  (A select box may hold the label of an
    option that is gone, when new options replace the old: the widget itself resets it.)"""
    value = st.session_state.get(param.key)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > last:
        pressed = st.session_state.get(_held(param)) == last and value - last <= step * (1 + 1e-9)
        if name is None or from_link(param.key):
            message = t(key, param=literal(param.key), value=value, last=last, **params)
            st.warning(message, icon=":material/link_off:")
        elif option is not None:
            said = t("app.option_past_view", name=name, last=literal(option(last)))  # a dump's
            st.warning(said, icon=":material/straighten:")
        elif not pressed:
            words = {"value": _exact_text(value), "last": _exact_text(last)}
            st.warning(t("app.number_past_view", name=name, **words), icon=":material/straighten:")
        st.session_state[param.key] = last


def named_in_page_language(key: str) -> None:
    """Call before drawing a select box, multiselect or radio whose options are named in the
    page's language.  Streamlit sends these widgets their value as the option's name and, for
    a keyed widget, keeps the name it showed when only the names change: after a language
    switch a select box went on showing "Plain Gaussian" on a Chinese page, and a radio lost
    its pick.  Where the language changed since the widget was last drawn, its value is set
    again, which sends the name in the page's language."""
    lang, drawn_in = current_language(), f"{key}.drawn_in"
    if st.session_state.get(drawn_in, lang) != lang and st.session_state.get(key) is not None:
        st.session_state[key] = st.session_state[key]
    st.session_state[drawn_in] = lang


def selectbox(param: Param, text: str, target=st, options=None, **kwargs):
    """``options`` replaces the parameter's choices where the page offers what it found (a
    dump's layers, a server's models); the parameter's default is among them."""
    options = param.choices if options is None else options
    named_in_page_language(param.key)
    kwargs.setdefault("placeholder", t("app.choose_one"))  # Streamlit's own is English
    drawn(param.key)  # drawn in this run: a later clamp of its value is not the link's
    return target.selectbox(
        text,
        options,
        index=options.index(param.default),
        key=param.key,
        format_func=kwargs.pop("format_func", _names(param)),
        persist_state=KEEP,
        **kwargs,
    )


def multiselect(param: Param, text: str, target=st, **kwargs):
    named_in_page_language(param.key)
    if current_language() != "en":  # Streamlit writes its "Select all" in English only
        kwargs.setdefault("select_all", False)
    return target.multiselect(
        text,
        param.choices,
        default=list(param.default),
        key=param.key,
        format_func=kwargs.pop("format_func", _names(param)),
        persist_state=KEEP,
        placeholder=kwargs.pop("placeholder", t("app.choose_many")),  # Streamlit's: English
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
        persist_state=KEEP,
        **kwargs,
    )


def segmented(param: Param, text: str, target=st, **kwargs):
    chosen = target.segmented_control(
        text,
        kwargs.pop("options", param.choices),
        default=param.default,
        key=param.key,
        format_func=kwargs.pop("format_func", _names(param)),
        persist_state=KEEP,
        **kwargs,
    )
    return param.default if chosen is None else chosen


def section(param: Param, text: str, names: str, **kwargs) -> str:
    """A page's switcher between its sections: the choices named by the keys ``names + id``
    (e.g. "axes.section_" + "batchnorm"), its label read by screen readers only.  It is
    navigation, not an input: ``present=results`` keeps it."""
    kwargs.setdefault("width", "stretch")
    with presenting.navigation(param.key):
        return segmented(
            param,
            text,
            format_func=lambda key: t(f"{names}{key}"),
            label_visibility="collapsed",
            **kwargs,
        )


def select_slider(param: Param, text: str, target=st, **kwargs):
    return target.select_slider(
        text, param.choices, value=param.default, key=param.key, persist_state=KEEP, **kwargs
    )


def _bound_text(value: int | float) -> str:
    """A range's end as the help writes it: 1,048,576 (whole), −10,000, 0.5."""
    return true_minus(f"{value:,}") if isinstance(value, int) else format_reading(value)


# A float widget's value as typed or linked, to 10 significant digits: Streamlit's default
# "%0.2f" showed a momentum of 0.004 as "0.00" while the page computed with 0.004.
FLOAT_FORMAT = "%.10g"


def _exact_text(value: int | float) -> str:
    """A typed number and the ends it passed, to 10 significant digits and grouped
    (1,000,001 past 1,000,000): four digits wrote both as "1e+06"."""
    return true_minus(f"{value:,}" if isinstance(value, int) else f"{value:,.10g}")


def _within(param: Param, text: str, low, top, step) -> None:
    """A value typed past either end of ``[low, top]`` is said in the page's language and
    set to that end before its box is drawn, so the box shows the number the page computes
    with; one step past the end the box already showed (its − or + button there) is set back
    without a word.  The box has no ``min_value`` / ``max_value`` for that reason: with them
    the browser refused such a value itself: the box turned red and went on showing it while
    the page computed with the last one, its only word an English tooltip.  Where the low end
    is refused itself (``param.positive``: a momentum of 0), a value at or below it is set to
    the value the box held before, or else the default: the end was clamped to, then refused."""
    value = st.session_state.get(param.key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return
    below = value < low or (param.positive and value <= low)
    if not below and value <= top:
        return
    held = st.session_state.get(_held(param))
    nearest = top if not below else low
    if below and param.positive:
        kept = isinstance(held, int | float) and low < held <= top
        nearest = held if kept else type(low)(param.default)
    if not (held == nearest and abs(value - nearest) <= step * (1 + 1e-9)):
        said = {"value": value, "low": low, "high": top, "nearest": nearest}
        words = {k: _exact_text(v) for k, v in said.items()}
        key = "app.number_outside_above" if param.positive else "app.number_outside"
        st.warning(t(key, name=text, **words), icon=":material/straighten:")
    st.session_state[param.key] = nearest


def number(param: Param, text: str, target=st, high=None, **kwargs):
    """An int or float input over the parameter's range (``high`` narrows it, e.g. rows);
    a value past either end is said and replaced by that end (``_within``).  Its help ends
    with the range it accepts."""
    cast = int if param.kind == "int" else float
    low, top = cast(param.low), cast(param.high if high is None else min(param.high, high))
    step = kwargs.get("step") or (1 if cast is int else 0.01)
    if top < param.high:  # a value past this view's end: a link's, typed, or left there
        clamp(param, top, name=text, step=step)
    _within(param, text, low, top, step)
    if cast is float:
        kwargs.setdefault("format", FLOAT_FORMAT)
    key = "app.number_range_above" if param.positive else "app.number_range"  # 0 refused
    accepted = t(key, low=_bound_text(low), high=_bound_text(top))
    kwargs["help"] = f"{kwargs['help']}\n\n{accepted}" if kwargs.get("help") else accepted
    value = target.number_input(
        text,
        value=min(cast(param.default), top),
        key=param.key,
        persist_state=KEEP,
        **kwargs,
    )
    st.session_state[_held(param)] = value
    drawn(param.key)
    return value


def _held(param: Param) -> str:
    """The state key of the value ``param``'s box showed when last drawn."""
    return f"{param.key}.held"


def toggle(param: Param, text: str, target=st, **kwargs):
    return target.toggle(text, value=param.default, key=param.key, persist_state=KEEP, **kwargs)


def text_input(param: Param, text: str, target=st, **kwargs):
    """A one-line box without ``max_chars`` (as ``text_area``: the browser dropped a longer
    paste without a word): a text longer than its link accepts is refused here, with its
    length and the limit, and the parameter's default is used, as the message says (the box
    keeps the text: a block list past 200 characters ran on every block, unsaid)."""
    typed = target.text_input(
        text, value=param.default, key=param.key, persist_state=KEEP, **kwargs
    )
    if param.max_chars is None or len(typed) <= param.max_chars:
        return typed
    words = {"name": text, "chars": count(len(typed)), "limit": count(param.max_chars)}
    if param.default:
        said = t("errors.config.too_long_default", **words, default=literal(param.default))
    else:
        said = t("errors.config.too_long_unused", **words)
    st.warning(said, icon=":material/straighten:")
    return param.default


def text_area(param: Param, text: str, target=st, **kwargs):
    """A text box without ``max_chars``: the browser drops a longer paste without a word (and
    counts an emoji as two), leaving the previous text in use; the engine's own limit refuses
    a longer text with its length and the limit (``parse_vectors``, ``TextSpec``, the live
    prompt)."""
    return target.text_area(text, value=param.default, key=param.key, persist_state=KEEP, **kwargs)


def slider(param: Param, text: str, target=st, **kwargs):
    """A slider over the parameter's whole range."""
    cast = int if param.kind == "int" else float
    if cast is float:
        kwargs.setdefault("format", FLOAT_FORMAT)
    return target.slider(
        text,
        min_value=cast(param.low),
        max_value=cast(param.high),
        value=cast(param.default),
        key=param.key,
        persist_state=KEEP,
        **kwargs,
    )
