"""How the locale texts write notation: scripts as scripts, no bracket stuck to inline maths,
an expression kept on one line."""

import re

import pytest

from tests.ui.test_i18n import _placeholders, _plausible
from ui.formatting import as_ascii, literal
from ui.i18n import LANGUAGES, catalog, translate

RAW_SCRIPT = re.compile(r"(?<![\w\\])[A-Za-zα-ω]_\{?\w|[\w)|‖]\^\{?[\w(−-]")


def test_the_raw_notation_check_finds_code_style_scripts():
    assert [_raw_scripts(t) for t in ("μ_c", "(−1, 1)^d", "y_train", "‖x‖^2")] == [True] * 4
    assert not any(_raw_scripts(t) for t in ("μ<sub>c</sub>", "$W_{{in}}$", "{b_small}", "ln_f"))
    assert not _raw_scripts("q_lora_rank (the compressed query)")


def _raw_scripts(text: str) -> bool:
    plain = re.sub(r"\$[^$]*\$|`[^`]*`|\{\w+\}|\w+_\w+_\w+", "", text)
    return bool(RAW_SCRIPT.search(plain))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_scripts_are_written_as_scripts(lang):
    raw = [key for key, text in catalog(lang).items() if _raw_scripts(text)]
    assert not raw, f"{lang}: write Unicode, <sub>/<sup> or $math$ in {raw}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_bracket_closes_right_after_inline_maths(lang):
    """Inline maths is a box the line may break after: "… and W_out ⏎ ). Theorem 1 …"."""
    stuck = [key for key, text in catalog(lang).items() if re.search(r"\$[)）\]」]", text)]
    assert not stuck, f"{lang}: reword {stuck} so no bracket follows the maths"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_expression_in_running_text_stays_on_one_line(lang):
    """The expression "σ = 1.1180" must not break after "=" (a presented lesson did): the
    spaces around an operator in running text are no-break spaces; inside maths or code they
    stay spaces."""
    idea = translate("lessons.worked_example.idea", lang, mean="2.5", var="1.25", std="1.1180")
    assert "σ\u00a0=\u00a01.1180" in idea and "σ = " not in idea
    assert "d\u00a0−\u00a01" in idea
    filled = translate("app.labelled", lang, label="d", value="4 × 16 = 64")  # made by code
    assert filled.endswith("4\u00a0×\u00a016\u00a0=\u00a064")
    for key, raw in catalog(lang).items():
        text = translate(key, lang, **{name: _plausible(name) for name in _placeholders(raw)})
        plain = re.sub(r"\$[^$]*\$|`[^`]*`", "", text)
        assert not re.search(r" [=−≈×<>≤≥] ", plain), text
        for maths in re.findall(r"\$[^$]*\$", text):
            assert "\u00a0" not in maths, text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_number_in_e_notation_stays_whole(lang):
    """A narrow column broke "1 − 1.1e-15" after "e-" (presenting the Geometry page): the
    exponent's hyphen is a non-breaking one in running text, ASCII in code, and reads back
    as typed."""
    filled = translate("app.labelled", lang, label="cos", value="1 − 1.1e-15, 2e+07")
    assert filled.endswith("1\u00a0−\u00a01.1e\u201115, 2e+07")
    assert "e-" not in translate("vector_lab.default_eps.literal", lang, apis="x", eps="1e-5")
    code = translate("app.labelled", lang, label="`eps=1e-5`", value="3")
    assert "`eps=1e-5`" in code  # copied as code
    assert as_ascii("1.1e\u201115") == "1.1e-15"
    for key, raw in catalog(lang).items():
        text = translate(key, lang, **{name: _plausible(name) for name in _placeholders(raw)})
        plain = re.sub(r"\$[^$]*\$|`[^`]*`", "", text)
        assert not re.search(r"\de-\d", plain), text


def test_a_code_span_of_any_fence_keeps_its_text_as_typed():
    """``literal`` fences a text holding a backtick with two (or more): what it holds is
    shown exactly as typed, its hyphen and spaces unbound, as in a one-backtick span."""
    typed = literal("2e-3 = `x")
    text = translate("input.eps_invalid", "en", token=typed)
    assert typed in text, text


def test_no_text_hedges_its_plural_and_powers_of_ten_are_written_one_way():
    """ "1 token(s)" reads wrong for every count: a count's text has a form for one, or says
    it without a plural ("Tokens in the text: 1").  A power of ten is "3.4×10³⁸" in every
    text, as the page's own numbers write it (``ui.formatting.scientific``)."""
    hedged = [key for key, text in catalog("en").items() if re.search(r"\w\(s\)", text)]
    assert not hedged, f"write the count's forms in {hedged}"
    for lang in LANGUAGES:
        dotted = [
            key for key, text in catalog(lang).items() if re.search(r"·\s*10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]", text)
        ]
        assert not dotted, f"{lang}: write ×10 in {dotted}"
