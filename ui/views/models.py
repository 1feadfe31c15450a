"""Model catalog sections (Streamlit): the table, one family in detail, the calculator.

The family's block is drawn by the Depth page's wiring diagram from the same placement table
(``engine/depth/placements.py``), labelled with the family's own module names.
"""

from __future__ import annotations

from unicodedata import east_asian_width
from urllib.parse import parse_qsl

import pandas as pd
import streamlit as st

from engine.config import DTYPES, ModelShape
from engine.models.calculator import NormBudget, NormCost
from engine.models.families import Catalog, Family
from ui import presenting
from ui.formatting import bytes_text, bytes_texts, format_number, literal
from ui.i18n import current_language, join, sentence_joiner, t
from ui.labels import label, placement_label
from ui.text import models as text
from ui.url.codec import query_string
from ui.url.pages import DEPTH
from ui.views.charts import sideways
from ui.views.depth import wiring_chart

DEPTH_PAGE = "app_pages/depth.py"
# px a character takes in the tables' 14 px Source Sans, rounded up from Chromium's
# measure: 7 px for every character made the module table 856 px wide, wider than the
# 820 px column of a 1,280 px window, where it fits (its "Parameters" column was cut)
NARROW_PX, WIDE_PX, CAPITAL_PX, CJK_PX, OTHER_PX = 4.5, 12, 9, 14, 7.5
NARROW = set(" !'\"(),-./:;I[]fijlrt{|}·")  # 2.8 to 4.9 px
WIDE = set("%@MWmw")  # 10 to 12 px
CELL_PADDING = 20  # px: a cell's padding either side
HEADER_PADDING = 28  # px: a header's padding, and its sort and help icons
WIDEST_COLUMN = 640  # px: a longer source (prose, read in full in the family's detail) is cut


def _text_px(text: str) -> float:
    """The width of ``text`` in a table cell, px, never under what Chromium draws."""

    def px(char: str) -> float:
        if east_asian_width(char) in "WF":
            return CJK_PX
        if char in NARROW:
            return NARROW_PX
        if char in WIDE:
            return WIDE_PX
        return CAPITAL_PX if char.isupper() else OTHER_PX

    return sum(px(char) for char in text)


def _column_width(header: str, cells, most: float = float("inf")) -> int:
    """Pixels that show ``header`` and the longest of ``cells`` whole, at ``most`` px: the
    table cut "ε field" and module names with fixed widths that fitted English at one font,
    and a 640 px cap on every column cut Gemma 3's QK-norms off its modules."""
    widest = max((_text_px(str(cell)) for cell in cells), default=0)
    return round(min(most, max(_text_px(header) + HEADER_PADDING, widest + CELL_PADDING)))


def catalog_table(families: tuple[Family, ...]) -> None:
    lang = current_language()
    frame = pd.DataFrame([text.catalog_cells(f, lang) for f in families])
    # Presenting, HTML: the data grid reads its font from the page's root when it first draws,
    # before or after the projector's stylesheet applies, and sizes its columns in px; at
    # 1,920 × 1,080 its 26 px text overflowed columns sized for 17.5 px ("LayerNor")
    if presenting.presenting():
        with st.container(key="md_table_html"):  # wider than any screen's column
            st.caption(t("app.chart.table_scroll_hint"))
            headers = {c: t(f"models.col.{c}") for c in frame}
            presenting.table(frame.rename(columns=headers), len(frame), False)
        st.caption(t("models.table_note"))
        return
    widths = {
        c: _column_width(
            t(f"models.col.{c}"),
            frame[c].astype(str),
            WIDEST_COLUMN if c == "source" else float("inf"),
        )
        for c in frame
    }
    config = {
        column: st.column_config.TextColumn(
            t(f"models.col.{column}"),
            help=t(f"models.col_help.{column}"),
            width=widths[column],
            pinned=column == "family",
        )
        for column in frame.columns
    }
    with sideways("md_table", sum(widths.values()) + 2, t("app.chart.table_scroll_hint")):
        st.dataframe(
            frame,
            column_config=config,
            hide_index=True,
            width="stretch",
            height=36 + 35 * len(families),
            key="md_table",
        )
    st.caption(t("models.table_note"))


def _attention_text(family: Family) -> str:
    """The wiring diagram's attention box: with QK-norm, or MLA's latent norms, counted."""
    latent = sum(e.role == "latent_norm" for s in family.stacks for e in s.extra)
    if latent:
        return t("models.mla_attention", n=latent)
    return t("depth.wiring_attention") + (" + QK-norm" if family.qk_norm else "")


def depth_query(family: Family, lang: str) -> list[tuple[str, str]]:
    """The Depth page's parameters that simulate this family's placement and norm."""
    values = {"dp_placements": [family.placement], "dp_norm": family.depth_norm}
    if family.final_norm is not None:
        values["dp_final"] = family.final_norm
    return parse_qsl(query_string(DEPTH, values, lang))


def simulate_link(family: Family) -> None:
    """The Depth page set to this family's placement and norm (disabled: a norm it lacks)."""
    norm, simulated = text.norm_text(family), family.depth_norm is not None
    st.page_link(
        DEPTH_PAGE,
        label=t("models.simulate"),
        icon=":material/stacked_line_chart:",
        disabled=not simulated,
        query_params=depth_query(family, current_language()) if simulated else None,
        help=t("models.simulate_help", placement=placement_label(family.placement), norm=norm)
        if simulated
        else None,
    )
    if not simulated:
        st.caption(t("models.simulate_disabled", norm=norm))


def _shared_model_type(family: Family, families: Catalog) -> None:
    for model_type in family.model_types:
        sharing = families.sharing_model_type(model_type)
        if len(sharing) > 1:
            st.caption(
                t(
                    "models.shares_model_type",
                    model_type=model_type,
                    names=join((f.name for f in sharing), current_language()),
                    first=sharing[0].name,
                )
            )


def family_detail(family: Family, families: Catalog) -> None:
    lang = current_language()
    # stacked under 48rem of content width (ui/styles/base.css): beside the story, the
    # facts' table had ~260 px of an 800 px window
    facts, story = st.container(key="md_detail").columns([3, 2], gap="large")
    with facts:
        rows = [f"| {t('models.fact_what')} | {t('models.fact_value')} |", "|---|---|"]
        rows += [f"| {what} | {value} |" for what, value in text.family_facts(family, lang)]
        # its identifiers stay whole; the table scrolls sideways (ui/styles/base.css)
        st.container(key="md_facts").markdown("\n".join(rows))
        if family.eps_released is not None:
            st.caption(
                t(
                    "models.recalled_note",
                    mark=t("models.recalled_mark"),
                    source=text.localized(family, "eps_released_source", lang),
                )
            )
    with story:
        note = text.localized(family, "note", lang)
        st.markdown(f"**{t('models.departures')}**")
        st.markdown(note or t("models.no_departures"))
        extras = text.extra_norms(family, lang)
        if extras:
            st.markdown(f"**{t('models.extra_title')}**")
            st.markdown("\n".join(f"- {line}" for line in extras))
        _shared_model_type(family, families)
        st.markdown(f"**{t('models.sources')}**")
        st.markdown("\n".join(f"- {source}" for source in text.localized(family, "source", lang)))
    wiring_chart(
        "md_wiring",
        family.placement,
        bool(family.final_norm),
        modules=family.module_names,
        norm=text.norm_text(family),
        attention=_attention_text(family),
    )
    stack = family.stacks[0]
    st.caption(t("models.wiring_note", stack=label("stack", stack.name)))


def read_as(shape: ModelShape, family: Family, shared_with: tuple[Family, ...]) -> None:
    """Which family the config was read as, and the numbers read from it."""
    name = t("models.generic") if shape.read_by == "generic" else family.name
    facts = t(
        "models.read_as",
        family=name,
        hidden=text.count(shape.hidden),
        layers=text.count(shape.layers),
        eps=text.eps_text(shape.eps, current_language()),
    )
    if shape.decoder_layers:
        facts += sentence_joiner(current_language()) + t(
            "models.read_decoder", layers=text.count(shape.decoder_layers)
        )
    fixed = [  # those this config has (q_a_layernorm: only with a q_lora_rank)
        extra
        for stack in family.stacks
        for extra in stack.extra
        if extra.eps is not None and getattr(shape, extra.width, True) is not None
    ]
    if fixed:  # DeepSeek-V3's latent norms: an ε of their own, whatever the config says
        modules = join(dict.fromkeys(f"`{extra.module}`" for extra in fixed), current_language())
        eps = text.eps_text(fixed[0].eps, current_language())
        facts += sentence_joiner(current_language()) + t(
            "models.read_fixed_eps", modules=modules, eps=eps
        )
    st.caption(facts)
    if shape.read_by == "generic":  # counted by another family's rules: said, not small
        st.warning(t("models.read_generic", family=family.name), icon=":material/help:")
    elif shared_with:
        names = join((f.name for f in shared_with), current_language())
        st.caption(t("models.read_as_shared", family=family.name, names=names))


def budget(result: NormBudget, families: Catalog) -> None:
    lang = current_language()
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(t("models.norm_parameters"), text.count(result.norm_parameters))
    share = text.unknown(lang) if result.share is None else text.percent(result.share)
    c2.metric(t("models.share"), share, help=t("models.share_help"))
    if result.total_parameters is None:
        c3.metric(t("models.total_parameters"), text.unknown(lang), help=t("models.no_total_help"))
    else:
        c3.metric(
            t("models.total_parameters"),
            text.short_count(result.total_parameters, lang),
            help=t("models.total_help", exact=text.count(result.total_parameters)),
        )
    c4.metric(t("models.norm_modules"), text.count(result.norm_modules))
    st.markdown(t("models.budget_sum", sum=text.budget_sum(result)))
    if result.total_parameters is None:
        st.caption(t("models.no_total", family=families.family(result.family).name))
    frame = pd.DataFrame(
        {
            t("models.group.role"): [
                f"{label('norm_role', g.role)} · {label('stack', g.stack)}"
                if len({g.stack for g in result.groups}) > 1
                else label("norm_role", g.role)
                for g in result.groups
            ],
            t("models.group.module"): [g.module or text.unknown(lang) for g in result.groups],
            t("models.group.width"): [g.width for g in result.groups],
            t("models.group.count"): [g.count for g in result.groups],
            t("models.group.each"): [g.parameters_each for g in result.groups],
            t("models.group.total"): [g.parameters for g in result.groups],
        }
    )
    shown = {c: [v if isinstance(v, str) else f"{v:,}" for v in frame[c]] for c in frame}
    widths = {c: _column_width(c, texts) for c, texts in shown.items()}
    helps = {t(f"models.group.{n}"): t(f"models.group_help.{n}") for n in ("each", "total")}
    config = {
        c: st.column_config.NumberColumn(format="localized", width=widths[c], help=helps.get(c))
        if pd.api.types.is_numeric_dtype(frame[c])
        else st.column_config.TextColumn(width=widths[c])
        for c in frame
    }
    if presenting.as_html(len(frame)):  # as the catalog: the grid's px widths fit 14 px text
        presenting.table(pd.DataFrame(shown), len(frame), index=False)
    else:
        with sideways("md_groups", sum(widths.values()) + 2, t("app.chart.table_scroll_hint")):
            st.dataframe(
                frame, column_config=config, hide_index=True, width="stretch", key="md_groups"
            )
    st.caption(text.group_note(result, lang))


def _dtype_origin(chosen: str | None, shape: ModelShape) -> str:
    if chosen is not None:
        return t("models.dtype_chosen")
    if shape.dtype:
        return t("models.dtype_from_config")
    if shape.unread_dtype is not None:  # named by the field the config writes it in
        named = f"{shape.dtype_field} {literal(shape.unread_dtype)}"
        return t("models.dtype_unread", named=named, read=", ".join(DTYPES))
    return t("models.dtype_assumed")


def cost(result: NormCost, chosen: str | None, shape: ModelShape) -> None:
    """``chosen``: the dtype picked on the page (None: the config's, ``shape.dtype``; where
    it names none, or one the calculator does not count, ``shape.unread_dtype``)."""
    call = result.per_call
    saved = result.fused_bytes_saved
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(
        t("models.bytes_per_call"),
        bytes_text(call.bytes_moved),
        help=t("models.bytes_per_call_help"),
    )
    c2.metric(t("models.flops_per_call"), text.count(call.flops))
    c3.metric(
        t("models.intensity"),
        f"{format_number(call.intensity, 2)}\u00a0FLOP/B",  # one line in a narrow column
        delta=t("models.ridge", ridge=f"{call.ridge:.1f}"),
        delta_color="off",
        delta_arrow="off",
    )
    # to be subtracted in the sentence below: one unit, one decimal (the metric says the same)
    unfused, fused, saved_text = bytes_texts(
        [result.unfused_add_norm_bytes, result.fused_add_norm_bytes, saved]
    )
    c4.metric(
        t("models.fused_saves"),
        saved_text,
        delta=text.percent(saved / result.unfused_add_norm_bytes) if saved else None,
        delta_color="off",
        delta_arrow="off",
        help=t("models.fused_help"),
    )
    st.markdown(
        t(
            "models.cost_text",
            tokens=text.tokens_text(result.tokens, current_language()),
            dtype=result.dtype,
            origin=_dtype_origin(chosen, shape),
            size=result.bytes_per_element,
            d=text.count(call.d),
            calls=text.count(result.calls),
            extra=t(
                # one role names its kind; a family with both would get the plain words
                "models.cost_extra"
                + (f"_{result.extra_roles[0]}" if len(result.extra_roles) == 1 else ""),
                count=text.count(result.extra_calls),
                values=text.count(result.extra_values),
            )
            if result.extra_calls
            else "",
            bytes=bytes_text(result.bytes_moved),
            flops=text.count(result.flops),
            time=text.seconds_text(result.memory_time_s),
            pairs=t(
                "models.cost_pairs_one" if result.add_norm_pairs == 1 else "models.cost_pairs",
                pairs=text.count(result.add_norm_pairs),
                unfused=unfused,
                fused=fused,
                saved=saved_text,
            ),
        )
    )
    st.caption(text.cost_note(result.dtype, result.bytes_per_element, current_language()))
