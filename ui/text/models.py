"""The model catalog page's words: table cells, a family's facts, the calculator's sums.

Pure: every function takes the language and returns strings; ``engine.models`` supplies the
facts.  A fact the catalog leaves empty (None) is written "unknown" in the reader's language,
never left blank and never guessed.  Family and example names are proper nouns (English).

References: the ``source`` of each family in ``engine/models/catalog.toml``; GPT-3's count
(Brown et al. 2020, arXiv:2005.14165, Table 2.1) as in ``engine/models/calculator.py``.
"""

from __future__ import annotations

import math

from engine.models.calculator import NormBudget
from engine.models.families import Example, Family
from engine.perf.roofline import GPU_NAME, H200_BANDWIDTH, H200_FP32_FLOPS, norm_traffic
from ui.formatting import count, format_number, format_power, significant
from ui.i18n import join, sentence_joiner, translate
from ui.labels import NORM_NAMES, label

EPS_DIGITS = 6  # significant digits of a catalog ε: more than any released config writes


def unknown(lang: str) -> str:
    return translate("models.unknown", lang)


def yes_no(value: bool | None, lang: str) -> str:
    if value is None:
        return unknown(lang)
    return translate("app.yes" if value else "app.no", lang)


def eps_text(value: float | None, lang: str) -> str:
    """1e-05 as "10⁻⁵" (as the sliders and charts write ε), 0.001 as "0.001", None as
    "unknown"; every digit the catalog holds is kept."""
    if value is None:
        return unknown(lang)
    return format_power(value, EPS_DIGITS)


def tokens_text(tokens: int, lang: str) -> str:
    """The calculator's count of positions in one pass: "1 token", "4,096 tokens"."""
    key = "models.tokens_counted_one" if tokens == 1 else "models.tokens_counted"
    return translate(key, lang, n=count(tokens))


def group_note(budget: NormBudget, lang: str) -> str:
    """Under the norm groups' table: what each column counts, and what ``{i}`` in a module
    name stands for where a name holds one (a family whose names are unknown has none)."""
    bias = translate("models.with_bias" if budget.bias else "models.without_bias", lang)
    note = translate("models.group_note", lang, bias=bias)
    if any("{i}" in (group.module or "") for group in budget.groups):
        note += sentence_joiner(lang) + translate("models.group_note_index", lang)
    return note


def gain_text(family: Family, lang: str) -> str:
    """How the norm's gain is parameterised and initialised."""
    if family.weight_init is None:
        return unknown(lang)
    if family.weight_init == "none":
        return translate("models.gain_none", lang)
    offset = family.weight_offset
    init = "0" if family.weight_init == "zeros" else "1"
    if offset:  # Gemma: (1 + w), w initialised to zero
        return translate("models.gain_offset", lang, offset=eps_text(offset, lang), init=init)
    return translate("models.gain_plain", lang, init=init)


def norm_text(family: Family) -> str:
    return NORM_NAMES[family.norm_kind]


def _names(family: Family) -> tuple[list[str], list[str]]:
    """The norm modules of one layer and the final norms, of every stack (T5: the encoder's
    and the decoder's), each name once."""
    modules = dict.fromkeys(n for s in family.stacks for n in s.norm_modules())
    return list(modules), [s.final for s in family.stacks if s.final]


def catalog_cells(family: Family, lang: str) -> dict[str, str]:
    """One row of the catalog table: its columns in order (headers: ``models.col.<id>``)."""
    modules, finals = _names(family)
    names = ", ".join(modules) or unknown(lang)
    final = ", ".join(finals) or yes_no(family.final_norm, lang)
    return {
        "family": family.name,
        "norm": norm_text(family),
        "eps_released": eps_text(family.eps_released, lang),
        "eps_default": eps_text(family.eps_default, lang),
        "eps_field": family.eps_field or unknown(lang),
        "placement": label("placement", family.placement, lang),
        "per_layer": " / ".join(str(n) for n in family.norms_per_layer()),
        "modules": names,
        "final": final,
        "qk_norm": yes_no(family.qk_norm, lang),
        "gain": gain_text(family, lang),
        "bias": yes_no(family.bias, lang),
        "source": ("；" if lang == "zh" else "; ").join(localized(family, "source", lang)),
    }


def family_facts(family: Family, lang: str) -> list[tuple[str, str]]:
    """(what, value) pairs of one family, for its detail view (Markdown in the values)."""

    def code(text: str | None) -> str:
        return f"`{text}`" if text else unknown(lang)

    def fact(key: str, value: str) -> tuple[str, str]:
        return translate(f"models.fact.{key}", lang), value

    placement = label("placement", family.placement, lang)
    kind = norm_text(family)
    norm = kind if family.norm_class is None else f"{kind} (`{family.norm_class}`)"
    released = eps_text(family.eps_released, lang)
    if family.eps_released is not None:
        released += " " + translate("models.recalled_mark", lang)
    module_names, finals = _names(family)
    modules = ", ".join(f"`{m}`" for m in module_names) or unknown(lang)
    per_layer = " / ".join(str(n) for n in family.norms_per_layer())
    if len(family.stacks) > 1:
        stacks = " / ".join(label("stack", s.name, lang) for s in family.stacks)
        per_layer += f" ({stacks})"
    final = ", ".join(code(f) for f in finals) or yes_no(family.final_norm, lang)
    known_classes = [c for c in (family.config_class, family.model_class) if c]
    classes = " / ".join(code(c) for c in known_classes) or unknown(lang)
    types = ", ".join(f"`{m}`" for m in family.model_types)
    # each clause its own code, so the cell can break between them (DeepNet's, whole, ran
    # the facts' table past its column)
    update = ", ".join(code(c.strip()) for c in family.placement_entry.update.split(", "))
    return [
        fact("norm", norm),
        fact("eps_field", code(family.eps_field)),
        fact("eps_default", eps_text(family.eps_default, lang)),
        fact("eps_released", released),
        fact("placement", f"{placement}: {update}"),
        fact("per_layer", per_layer),
        fact("modules", modules),
        fact("final", final),
        fact("qk_norm", yes_no(family.qk_norm, lang)),
        fact("gain", gain_text(family, lang)),
        fact("bias", yes_no(family.bias, lang)),
        fact("classes", classes),
        fact("model_types", types or translate("models.no_model_type", lang)),
    ]


def extra_norms(family: Family, lang: str) -> list[str]:
    """The norms the placement does not draw: embedding, QK-norm, latent, a second stack."""
    lines = []
    if family.embedding_norm:
        lines.append(translate("models.extra_embedding", lang, module=family.embedding_norm))
    for stack in family.stacks:
        for extra in stack.extra:
            lines.append(
                translate(
                    "models.extra_module",
                    lang,
                    role=label("norm_role", extra.role, lang),
                    module=extra.module,
                    width=translate(f"models.width.{extra.width}", lang),
                )
            )
        if len(stack.branches) > 2:  # T5's decoder: a cross-attention branch
            names = [label("norm_role", f"{b.branch}.before", lang) for b in stack.branches]
            lines.append(
                translate(
                    "models.extra_branches",
                    lang,
                    stack=label("stack", stack.name, lang),
                    count=len(stack.branches),
                    branches=join(names, lang),
                )
            )
    if len(family.stacks) > 1:
        lines.append(
            translate(
                "models.extra_stacks",
                lang,
                stacks=" + ".join(label("stack", s.name, lang) for s in family.stacks),
            )
        )
    return lines


def localized(item: Family | Example, field: str, lang: str):
    """``item.field`` glossed in ``lang``: the catalog keeps each gloss beside the English as
    ``<field>_zh`` (``source``, ``eps_released_source``, ``note``; citations as published)."""
    return getattr(item, f"{field}_zh" if lang == "zh" else field)


def cost_note(dtype: str, bytes_per_element: int, lang: str) -> str:
    """Why a norm is memory-bound, with the FLOPs per byte of the chosen ``dtype``."""
    rms = norm_traffic(1, 1, bytes_per_element, "rmsnorm")
    ln = norm_traffic(1, 1, bytes_per_element, "layernorm")
    return translate(
        "models.cost_note",
        lang,
        dtype=dtype,
        rms=format_number(rms.intensity, 3),
        ln=format_number(ln.intensity, 3),
        ridge=format_number(ln.ridge, 1),
        gpu=GPU_NAME,
        bandwidth=format_number(H200_BANDWIDTH / 1e12, 1),
        peak=format_number(H200_FP32_FLOPS / 1e12, 1),
    )


def percent(fraction: float) -> str:
    """A share as a percentage with two significant digits: 2.7165e-5 -> "0.0027 %", its
    space a no-break one (as before every "%" on the pages: "%" never starts a line)."""
    value = 100 * fraction
    if value == 0:
        return "0\u00a0%"
    decimals = max(0, 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}\u00a0%"


def short_count(n: int, lang: str) -> str:
    """A large count in words: 174,604,259,328 -> "174.6 billion" / "1,746 亿"; past ten
    thousand of the largest word, its power of ten (1.2×10¹⁶, never "1.2×10¹⁶ trillion")."""
    if lang == "zh":
        scales = ((1e12, "\u00a0万亿"), (1e8, "\u00a0亿"), (1e4, "\u00a0万"))
    else:  # the number and its word on one line (no-break space): a phone's metric broke it
        scales = ((1e12, "\u00a0trillion"), (1e9, "\u00a0billion"), (1e6, "\u00a0million"))
    if n >= 1e4 * scales[0][0]:
        return significant(n)
    for size, unit in scales:
        if n >= size:
            return f"{significant(n / size)}{unit}"
    return count(n)


def budget_sum(budget: NormBudget) -> str:
    """The count as a sum over groups: "96 × 24,576 + 96 × 24,576 + 1 × 24,576 = 4,743,168"."""
    terms = [f"{count(g.count)} × {count(g.parameters_each)}" for g in budget.groups]
    return " + ".join(terms) + f" = {count(budget.norm_parameters)}"


def seconds_text(seconds: float) -> str:
    """A short duration: 10.2 ns, 3.41 µs, 1.2 ms, 2.5 s; a one-token norm's 2.05 ps."""
    if not math.isfinite(seconds) or seconds <= 0:
        return f"{seconds:g} s".replace("nan", "NaN").replace("inf", "∞")
    if seconds >= 999.5:
        return f"{seconds:,.0f} s"
    for unit, size in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        shown = f"{seconds / size:.3g}"
        if float(shown) >= 1:  # the unit of the rounded value: 9.996e-7 s is "1 µs"
            return f"{shown} {unit}"
    return f"{seconds / 1e-12:.3g} ps"
