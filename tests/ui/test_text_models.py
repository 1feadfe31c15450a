"""ui.text.models: the catalog's facts in words, unknown facts as "unknown", the calculator's
numbers written as people read them (checked against hand arithmetic)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from engine.models.calculator import norm_budget
from engine.models.config_json import parse_config
from engine.models.loader import catalog
from tests.plain_text import plain
from tests.untranslated import problems
from ui.formatting import bytes_text, bytes_texts
from ui.text import models as text

LANGS = ("en", "zh")


@pytest.mark.parametrize("lang", LANGS)
def test_every_cell_of_every_family_is_filled_in_both_languages(lang):
    for family in catalog().families:
        cells = text.catalog_cells(family, lang)
        assert all(isinstance(v, str) and v.strip() for v in cells.values()), family.id


def test_unknown_facts_are_written_unknown_never_guessed():
    gpt3 = catalog().family("gpt3")  # no released config: ε, its field and modules unknown
    cells = text.catalog_cells(gpt3, "en")
    assert cells["eps_released"] == cells["eps_default"] == cells["eps_field"] == "unknown"
    assert cells["modules"] == "unknown"
    assert cells["final"] == "yes"  # Sec. 2.1: GPT-2's final norm, though unnamed
    blank = replace(gpt3, qk_norm=None, bias=None, weight_init=None)
    zh = text.catalog_cells(blank, "zh")
    assert zh["qk_norm"] == zh["bias"] == zh["gain"] == "未知"


def test_eps_is_written_as_the_sliders_write_it():
    assert text.eps_text(1e-5, "en") == "10⁻⁵"
    assert text.eps_text(1e-12, "en") == "10⁻¹²"
    assert text.eps_text(1.5e-6, "en") == "1.5×10⁻⁶"
    assert text.eps_text(0.0, "en") == "0"
    assert text.eps_text(0.001, "en") == "0.001"
    assert text.eps_text(None, "zh") == "未知"


def test_gain_text_follows_init_and_offset():
    families = {f.id: f for f in catalog().families}
    assert text.gain_text(families["llama3"], "en") == "γ, initialized to 1"
    assert text.gain_text(families["gemma2"], "en") == "(1 + γ), γ initialized to 0"
    assert text.gain_text(families["ngpt"], "en") == "none (no learnable gain)"


def test_released_eps_carries_the_from_memory_mark_only_where_known():
    facts = dict(text.family_facts(catalog().family("llama2"), "en"))
    assert facts["ε, released checkpoint"] == "10⁻⁵ †"
    assert facts["ε, config class default"] == "10⁻⁶"
    facts = dict(text.family_facts(catalog().family("olmo2"), "en"))
    assert facts["ε, released checkpoint"] == "unknown"


def test_a_family_of_two_stacks_names_both_final_norms_and_every_stacks_modules():
    """T5's facts named only the encoder's final norm and modules."""
    facts = dict(text.family_facts(catalog().family("t5"), "en"))
    finals = [value for what, value in facts.items() if "final" in what.casefold()]
    assert finals == ["`encoder.final_layer_norm`, `decoder.final_layer_norm`"]
    assert "`layer.2.layer_norm`" in " ".join(facts.values())  # the decoder's cross-attention


def test_extra_norms_name_the_modules_the_diagram_does_not_draw():
    deepseek = " ".join(text.extra_norms(catalog().family("deepseek_v3"), "en"))
    assert "self_attn.q_a_layernorm" in deepseek and "self_attn.kv_a_layernorm" in deepseek
    assert "kv_lora_rank" in deepseek
    bert = text.extra_norms(catalog().family("bert"), "en")
    assert bert == [
        "Embedding norm: `embeddings.LayerNorm`, on the embeddings before the first layer"
    ]
    t5 = " ".join(text.extra_norms(catalog().family("t5"), "zh"))
    assert "3 条残差分支" in t5 and "交叉注意力" in t5
    assert text.extra_norms(catalog().family("llama3"), "en") == []


def test_gpt3_budget_is_written_as_seed_000s_sum():
    shape = parse_config(catalog().family("gpt3").example.config_json, family="gpt3")
    budget = norm_budget(shape)
    d, layers = 12_288, 96
    assert budget.norm_parameters == 2 * 2 * d * layers + 2 * d == 4_743_168
    assert text.budget_sum(budget) == "96 × 24,576 + 96 × 24,576 + 1 × 24,576 = 4,743,168"
    assert text.percent(budget.share) == "0.0027\u00a0%"


def test_the_group_note_explains_i_only_where_a_module_name_holds_it():
    """GPT-3's module names are unknown: no "{i}" to explain; Llama 3's hold it."""
    for family, named in (("gpt3", False), ("llama3", True)):
        shape = parse_config(catalog().family(family).example.config_json, family=family)
        budget = norm_budget(shape)
        assert any("{i}" in (g.module or "") for g in budget.groups) == named
        for lang in ("en", "zh"):
            assert ("{i}" in text.group_note(budget, lang)) == named, (family, lang)


@pytest.mark.parametrize(
    "fraction, expected",
    [
        (4_743_168 / 174_604_259_328, "0.0027\u00a0%"),
        (0.5, "50\u00a0%"),
        (0.0123, "1.2\u00a0%"),
        (0, "0\u00a0%"),
    ],
)
def test_percent_keeps_two_significant_digits(fraction, expected):
    assert text.percent(fraction) == expected


@pytest.mark.parametrize(
    "n, lang, expected",
    [
        (174_604_259_328, "en", "174.6 billion"),
        (174_604_259_328, "zh", "1,746 亿"),
        (124_439_808, "en", "124.4 million"),
        (38_400, "zh", "3.84 万"),
        (999, "en", "999"),
        (2_500_000_000_000, "zh", "2.5 万亿"),
        (9_999 * 10**12, "en", "9,999 trillion"),
        (3_306 * 10**25, "en", "3.306×10²⁸"),  # never "3.306×10¹⁶ trillion"
        (3_306 * 10**25, "zh", "3.306×10²⁸"),
    ],
)
def test_short_count(n, lang, expected):
    """The number and its word joined by a no-break space (a phone's metric broke them)."""
    assert text.short_count(n, lang) == expected.replace(" ", "\u00a0")


@pytest.mark.parametrize(
    "n, expected",
    [
        (512, "512 B"),
        (3_072, "3,072 B"),
        (76_144, "76.1 kB"),
        (200 * 10**6, "200 MB"),  # powers of 1000, as the upload limit (200,000,000 bytes)
        (49_152, "49.2 kB"),
        (999_999, "1 MB"),
        (9_486_336, "9.49 MB"),
        (2 * 10**9, "2 GB"),
        (2 * 2**42, "8.8 TB"),
        (1_234_567 * 10**9, "1,235 TB"),
    ],
)
def test_bytes_text(n, expected):
    """The number and its unit joined by a no-break space (a phone's metric broke them)."""
    assert bytes_text(n) == expected.replace(" ", "\u00a0")


def test_seconds_text():
    assert text.seconds_text(1.024e-8) == "10.2 ns"
    assert text.seconds_text(1.98e-6) == "1.98 µs"
    assert text.seconds_text(2.048e-12) == "2.05 ps"  # not "0.00205 ns"
    assert text.seconds_text(9.996e-7) == "1 µs"  # the unit of the rounded value, not "1e+03 ns"
    assert text.seconds_text(1234.5) == "1,234 s" and text.seconds_text(0.0) == "0 s"
    assert text.seconds_text(2.5) == "2.5 s"


@pytest.mark.parametrize(
    "dtype, size, rms, ln", [("bfloat16", 2, "1", "1.75"), ("float32", 4, "0.5", "0.875")]
)
def test_cost_note_states_the_flops_per_byte_of_the_chosen_dtype(dtype, size, rms, ln):
    """4 and 7 FLOPs per element over a read and a write of ``size`` bytes each."""
    assert 4 / (2 * size) == float(rms) and 7 / (2 * size) == float(ln)
    note = text.cost_note(dtype, size, "en")
    assert f"In {dtype} a norm does {rms} (RMSNorm) to {ln} (LayerNorm) FLOPs per byte" in note
    assert "14.0 FLOPs per byte an H200" in note and "1 to 2" not in note
    assert f"{rms}（RMSNorm）到 {ln}（LayerNorm）" in text.cost_note(dtype, size, "zh")


def test_the_chinese_catalog_holds_no_english_sentence():
    """Every family's cells, facts, notes and sources, and every example's source, in zh:
    citations, code and model names stay; the glosses around them are Chinese."""
    found = {}
    for family in catalog().families:
        shown = [
            *text.catalog_cells(family, "zh").values(),
            *(value for pair in text.family_facts(family, "zh") for value in pair),
            *text.extra_norms(family, "zh"),
            text.localized(family, "note", "zh") or "",
            *text.localized(family, "source", "zh"),
            text.localized(family, "eps_released_source", "zh") or "",
        ]
        if family.example is not None:
            shown.append(text.localized(family.example, "source", "zh"))
        wrong = [problem for part in shown for problem in problems(part)]
        if wrong:
            found[family.id] = wrong
    assert not found
    gpt3 = catalog().family("gpt3")
    assert "assumed here" in gpt3.example.source  # the English stays for English readers
    assert "assumed here" not in text.localized(gpt3.example, "source", "zh")


@pytest.mark.parametrize("lang", LANGS)
def test_deepnorms_constants_are_written_as_the_lesson_writes_them(lang):
    """α = ⁴√(2N) and β = 1/⁴√(8N), as the DeepNorm lesson writes roots: no caret, no ASCII
    hyphen for a minus, no Greek letter spelled out."""
    source = text.catalog_cells(catalog().family("deepnet"), lang)["source"]
    assert "α = ⁴√(2N)" in source and "β = 1/⁴√(8N)" in source and "xₗ₊₁ = LN(α·xₗ" in source
    assert "^(" not in source and "beta" not in source


@pytest.mark.parametrize("family_id", ["deepnet", "llama3"])
def test_the_placement_fact_codes_each_clause_apart_so_the_cell_can_break(family_id):
    """DeepNet's update in one unbreakable code ran the facts' table past its column."""
    family = catalog().family(family_id)
    (value,) = [v for k, v in text.family_facts(family, "en") if "←" in v]
    spans = value.split("`")[1::2]
    assert ", ".join(spans) == ", ".join(
        c.strip() for c in family.placement_entry.update.split(", ")
    )
    assert all(len(span) <= 24 for span in spans)


def test_the_chinese_glosses_quote_titles_with_chinese_quotes():
    """zh listed 'The Llama 3 Herd of Models' in ASCII quotes; an apostrophe (Meta's) stays."""
    quoted = re.compile(r"(?<![A-Za-z])'[^']+'")
    glosses = []
    for family in catalog().families:
        for field in ("source", "note", "eps_released_source"):
            value = text.localized(family, field, "zh")
            glosses += list(value) if isinstance(value, tuple) else [value or ""]
        if family.example is not None:
            glosses.append(text.localized(family.example, "source", "zh"))
    assert not [gloss for gloss in glosses if quoted.search(gloss)]
    llama3 = text.localized(catalog().family("llama3"), "source", "zh")[0]
    assert "“The Llama 3 Herd of Models”" in llama3


def test_bytes_added_in_one_sentence_share_a_unit_and_their_decimals():
    """Kernels' fusion sentence: 5 passes, 4 passes and their difference, to be subtracted."""
    unfused, fused = 5 * 2**25, 4 * 2**25  # [4096, 4096] in bfloat16: 2**25 bytes a pass
    texts = [unfused, fused, unfused - fused], [3_072, 1_024], [2_000 * 10**12, 10**12]
    assert [[plain(t) for t in bytes_texts(values)] for values in texts] == [
        ["167.8 MB", "134.2 MB", "33.6 MB"],
        ["3,072 B", "1,024 B"],
        ["2,000.0 TB", "1.0 TB"],
    ]


def test_the_calculators_token_count_is_singular_at_one():
    assert text.tokens_text(1, "en") == "1 token"
    assert text.tokens_text(4096, "en") == "4,096 tokens"
    assert text.tokens_text(4096, "zh") == "4,096 个 token"
