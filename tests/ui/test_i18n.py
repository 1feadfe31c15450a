import ast
import re
import string
import tomllib
from pathlib import Path

import pytest

from tests.untranslated import english_runs, halfwidth_punctuation, problems
from ui.i18n import LANGUAGES, catalog, join, language_from_locale, translate
from ui.i18n import _flatten as _flatten_table


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_language_has_the_same_keys():
    english = set(catalog("en"))
    for lang in LANGUAGES:
        assert set(catalog(lang)) == english, f"{lang} differs from en"


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_placeholders_match_english(lang):
    for key, text in catalog(lang).items():
        assert _placeholders(text) == _placeholders(catalog("en")[key]), key


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_a_percent_sign_is_held_to_its_number(lang):
    """10.9 % with a no-break space: at a projector's width "%" was alone on the next line."""
    loose = [key for key, text in catalog(lang).items() if re.search(r"[\d}] ?%", text)]
    assert not loose


def _closing_dollars(text: str) -> list[int]:
    """Where each inline formula of ``text`` ends: every second unescaped "$"."""
    return [m.start() for m in re.finditer(r"(?<!\\)\$", text)][1::2]


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_punctuation_after_a_formula_is_written_inside_it(lang):
    """A formula is drawn as one box and the browser may break the line after it, even before
    "、" or "." (a word joiner did not stop Chromium): the depth sweep's note began a line
    with "、".  Punctuation that follows a formula is written inside it (``\\text{、}``)."""
    loose = [
        key
        for key, text in catalog(lang).items()
        if any(re.match(r"[.,:;、，。；：]", text[end + 1 :]) for end in _closing_dollars(text))
    ]
    assert not loose and not [key for key, text in catalog(lang).items() if "$$" in text]


def test_chinese_strings_are_translated_not_copied():
    zh = catalog("zh")
    han = re.compile(r"[\u4e00-\u9fff]")
    translated = [key for key, text in zh.items() if han.search(text)]
    assert len(translated) > 0.8 * len(zh)


def test_a_number_and_its_unit_of_time_or_bytes_stay_on_one_line():
    """ "1.75 µs。" broke before "µs。" in a narrow Chinese column: a number's unit of time or
    bytes follows it after a no-break space; a word after a number keeps its space."""
    from ui.i18n import _bound

    assert _bound("about 1.75 µs。 and 2.11 MB, 3 s, 7,808 B") == (
        "about 1.75\u00a0µs。 and 2.11\u00a0MB, 3\u00a0s, 7,808\u00a0B"
    )
    assert _bound("3 steps, 4 Blocks, 2 sequences") == "3 steps, 4 Blocks, 2 sequences"
    # a phone's Kernels metric showed "1.75" above "FLOP/B"
    assert translate("kernels.intensity_value", "zh", value="1.75") == "1.75\u00a0FLOP/B"
    assert "0.60\u00a0s in all" in translate("depth.timing", "en", count=2, seconds="0.60")


def test_translate_fills_parameters_and_falls_back():
    assert translate("input.too_many_rows", "en", rows=70, limit=64).startswith("70 rows")
    assert "70" in translate("input.too_many_rows", "zh", rows=70, limit=64)
    assert translate("no.such.key", "zh") == "no.such.key"


@pytest.mark.parametrize(
    "locale, expected",
    [("zh-CN", "zh"), ("zh-TW", "zh"), ("en-US", "en"), ("de-DE", "en"), (None, "en")],
)
def test_language_from_browser_locale(locale, expected):
    assert language_from_locale(locale) == expected


# --- every text renders, and every call passes what its text needs ---------------------------

ROOT = Path(__file__).resolve().parents[2]
# Plausible values by placeholder name (anything else gets a number): the texts must read as
# sentences with them, in both languages.
PLAUSIBLE = {
    "dtype": "float16",
    "compute": "float16 (sum, then divide)",
    "norm": "RMSNorm",
    "name": "Pre-Norm",
    "api": "LlamaRMSNorm",
    "apis": "nn.RMSNorm / nn.functional.rms_norm",
    "opmath": "float32",
    "module": "nn.LayerNorm",
    "default": "Default when none is given: nn.LayerNorm uses ε = 1e-5.",
    "source": "Zhu et al. 2025",
    "source_model": "LLaMA-7B",
    "gpu": "H200",
    "device": "CPU",
    "provider": "torch",
    "backend": "PyTorch",
    "sub": "₁",
    "power": "2⁻¹⁰",
    "symbol": "σ²",
    "status": "all 0",
    "why": "σ² = ∞ in float16",
    "which": "RMS², σ²",
    "outcome": "silently 0",
    "accumulate": "float32",
    "broken": "norm other than LayerNorm",
}


def _plausible(name: str) -> object:
    return PLAUSIBLE.get(name, 7)


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_every_key_renders_with_plausible_parameters(lang):
    """Every text of every locale file, filled with the parameters its English text names."""
    keys = set(catalog("en")) | set(catalog("zh"))
    for key in sorted(keys):
        assert key in catalog(lang), f"{key} is missing in {lang}"
        params = {name: _plausible(name) for name in _placeholders(catalog("en")[key])}
        text = translate(key, lang, **params)  # KeyError: the text needs a parameter en lacks
        escaped = re.findall(r"\{\{\w+\}\}", catalog(lang)[key])  # {{i}} on purpose: shows {i}
        assert text.strip(), key
        assert len(re.findall(r"\{\w+\}", text)) == len(escaped), (key, text)


def test_a_missing_parameter_fails_instead_of_showing_braces():
    with pytest.raises(KeyError):
        translate("vector_lab.precision.summary", "en", dtype="float16")


# Texts are read with ``t(key, ...)`` where Streamlit is and ``translate(key, lang, ...)`` in
# pure builders: the key is the first argument of both.
TRANSLATING = ("t", "translate")


def _key_pattern(node: ast.expr) -> re.Pattern | None:
    """The keys a literal or f-string key argument can name, as a regex."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.compile(re.escape(node.value))
    if isinstance(node, ast.JoinedStr):
        parts = [
            re.escape(part.value) if isinstance(part, ast.Constant) else r"[\w.+\-]+"
            for part in node.values
        ]
        return re.compile("".join(parts))
    return None


def _dict_keys(function: ast.AST) -> dict[str, set[str]]:
    """Local ``name = {"k": ...}`` assignments of a function: what ``**name`` passes."""
    found = {}
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Dict)
            and all(isinstance(k, ast.Constant) for k in node.value.keys)
        ):
            found[node.targets[0].id] = {k.value for k in node.value.keys}
    return found


def _translation_calls():
    """(file:line, key pattern, passed parameter names or None when unknown) of every call.

    A literal key is checked against the parameters passed (keywords, and ``**name`` of a
    local dict literal); an f-string key only for existence: which text it names is decided
    at run time, where ``translate`` raises KeyError on a missing parameter and the page and
    text-builder tests render every case.
    """
    files = [ROOT / "app.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "app_pages").rglob("*.py")]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in TRANSLATING):
                continue
            if path.name == "i18n.py" or not node.args:
                continue
            pattern = _key_pattern(node.args[0])
            if pattern is None:
                continue
            passed: set[str] | None = set()
            for keyword in node.keywords:
                if keyword.arg is not None:
                    passed.add(keyword.arg)
                    continue
                enclosing = [f for f in functions if f.lineno <= node.lineno <= f.end_lineno]
                local = _dict_keys(enclosing[-1]) if enclosing else {}
                name = keyword.value.id if isinstance(keyword.value, ast.Name) else None
                if name in local:
                    passed |= local[name]
                else:
                    passed = None  # **something we cannot read statically
                    break
            if not isinstance(node.args[0], ast.Constant):
                passed = None  # an f-string key: which text it names is known at run time only
            yield f"{path.relative_to(ROOT)}:{node.lineno}", pattern, passed


CALLS = list(_translation_calls())


def test_the_scan_finds_the_calls():
    literal = [c for c in CALLS if c[2] is not None]
    assert len(CALLS) > 150 and len(literal) > 100
    assert any(p.fullmatch("vector_lab.precision.overflow.squared_deviation") for _, p, _ in CALLS)
    assert any(p.pattern == r"vector_lab\.precision\.summary" for _, p, _ in literal)


@pytest.mark.parametrize("where, pattern, passed", CALLS, ids=[c[0] for c in CALLS])
def test_every_call_names_existing_keys_and_passes_their_parameters(where, pattern, passed):
    keys = [key for key in catalog("en") if pattern.fullmatch(key)]
    assert keys, f"{where}: no text matches {pattern.pattern}"
    if passed is None:
        return
    for key in keys:
        for lang in LANGUAGES:
            missing = _placeholders(catalog(lang)[key]) - passed
            assert not missing, f"{where}: {key} ({lang}) needs {sorted(missing)}"


# --- no fact is a literal in a translation --------------------------------------------------

# What may carry digits in a sentence: dtype names, numbered theorems, model and variable names,
# a citation's year, and formula notation (exponents, l/2, 2L, ...).  Any other number a page
# states (an epsilon, a limit, a measured value, 3/2, 65504, 0.67) comes in as a parameter
# from the engine, so it cannot drift from what the engine computes.
NAMES = (
    r"b?float(16|32|64)|Lemma 2|Theorem 1|引理 2|定理 1|GPT-2|OLMo 2|TRITON_INTERPRET=1|BatchNorm1d"
    r"|et al\. 20\d\d|等（20\d\d）"
)
FORMULAS = (
    *("1/√(2L)", "(2N)^{{1/4}}", "(8N)^{{-1/4}}", "3l/2", "l/2", "2^{{-l/2}}", "−l/2"),
    *("W^{{(2,L)}}", "xₗ₋₁", "xₗ₊₁"),
)
SENTENCE_PAGES = ("vector_lab", "depth", "kernels")


def _stated_numbers(text: str) -> list[str]:
    """Digit runs left once placeholders, names, formulas and the numbers 0 and 1 are gone."""
    text = re.sub(r"\{\w+\}", "", text)
    text = re.sub(NAMES, "", text)
    for formula in sorted(FORMULAS, key=len, reverse=True):  # "2^(−l/2)" before "l/2"
        text = text.replace(formula, "")
    text = re.sub(r"(?<![\w.])[01](?![\w]|\.\d)", "", text)  # zero, one: ε = 0, ⟨y, 1⟩, 1/√0
    return re.findall(r"\d[\d.,]*", text)


def test_the_number_check_finds_literal_facts():
    assert _stated_numbers("PyTorch's default is 1e-5; the level is 3/2.") == ["1", "5", "3", "2."]
    assert _stated_numbers("{count} outputs, ε = 0, orthogonal to 1, GPT-2 in float16.") == []


@pytest.mark.parametrize("lang", list(LANGUAGES))
@pytest.mark.parametrize("page", SENTENCE_PAGES)
def test_translations_state_no_number_literally(lang, page):
    with (ROOT / "locales" / lang / f"{page}.toml").open("rb") as handle:
        strings = _flatten_table(tomllib.load(handle), page)
    stated = {key: _stated_numbers(text) for key, text in strings.items()}
    assert not {key: found for key, found in stated.items() if found}


# --- Chinese texts are Chinese -----------------------------------------------------------------

# The plausible parameters a Chinese sentence receives from its own builders, in Chinese.
PLAUSIBLE_ZH = {
    "compute": "float16（先求和再相除）",
    "default": "未指定时的默认值：nn.LayerNorm 用 ε = 1e-5。",
    "broken": "非 LayerNorm 的归一化",
    "why": "float16 下 σ² = ∞",
    "status": "全为 0",
    "outcome": "静默为 0",
}


def test_the_untranslated_check_finds_english_and_lets_names_pass():
    assert english_runs("vocab_size 50257 是 GPT-2's byte-level BPE vocabulary, assumed here")
    assert english_runs("第 3.2 节：a standard dense Transformer, little changed from Llama 2")
    assert halfwidth_punctuation("子层, 非 ReLU 的激活函数")
    assert halfwidth_punctuation("均方相差至多 2 %; 只看得见一条")
    allowed = (
        "transformers 的 LlamaDecoderLayer（input_layernorm, post_attention_layernorm）、"
        "nn.LayerNorm；GPT-2 small (124M)、SmolLM2-135M-Instruct、Llama 3 8B；12.5 µs，4.8 GB/s；"
        "Sun et al. 2024，'Layer Normalization'，`x.pow(2).mean(-1)`，$\\sqrt{d}$，"
        "Hugging Face Hub，:material/grid_on: 单元格"
    )
    assert problems(allowed) == []


def test_chinese_texts_hold_no_english_sentence():
    """Every Chinese text, filled with Chinese-plausible parameters, reads as Chinese."""
    found = {}
    for key in catalog("zh"):
        params = {
            name: PLAUSIBLE_ZH.get(name, _plausible(name))
            for name in _placeholders(catalog("en")[key])
        }
        wrong = problems(translate(key, "zh", **params))
        if wrong:
            found[key] = wrong
    assert not found


def test_lists_in_a_sentence_use_the_languages_separator():
    assert join(["子层", "非 ReLU 的激活函数"], "zh") == "子层、非 ReLU 的激活函数"
    assert join(["sublayer", "activation"], "en") == "sublayer, activation"
    assert not problems(join(["子层", "非 ReLU 的激活函数"], "zh"))


# --- no vague count where the engine has the count ----------------------------------------------

# "a few channels take values in the tens of thousands" told a reader less than the dump knew
# (one channel, 26,464).  A vague count is followed, in its sentence, by the count itself (a
# placeholder: "a few operations per element: {flops} FLOPs"), or its text is listed here with
# why no engine count applies.
VAGUE = re.compile(
    r"\b(?:a few|several|a handful|dozens|tens of|hundreds of|thousands of|millions of"
    r"|a couple of)\b|少数|几个|几十|数十|上万|数万|成千上万|若干|好几|寥寥",
    re.IGNORECASE,
)
VAGUE_ALLOWED = {
    "dumps.massive_intro": "what Sun et al. report for LLMs in general, not this dump",
    "dumps.centering_intro": "the chosen tokens are named right after: first, outlier, median",
    "errors.models.number_too_long": "describes the refused input; the limit is stated",
    "lessons.batchnorm_sequences.reveal": "a hypothetical sentence, not an engine result",
    "axes.example_note": "the first prompts and tokens: B and T are the page's own inputs",
    "errors.models.too_deep": "what config.json files do in general; the limit is stated",
}
_SENTENCES = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def _vague_without_count(text: str) -> list[str]:
    """Sentences of ``text`` with a vague count that no placeholder after it states."""
    return [
        sentence
        for sentence in _SENTENCES.split(text)
        if any(
            not re.search(r"\{\w+\}", sentence[match.end() :]) for match in VAGUE.finditer(sentence)
        )
    ]


def test_the_vague_count_check_finds_the_sentence_that_hid_the_count():
    old = (
        "most tokens' residual RMS grows gradually through the {blocks} blocks, but the first "
        "token of every prompt jumps: a few channels take values in the tens of thousands."
    )
    assert _vague_without_count(old) == [old]
    assert _vague_without_count("每个提示的第一个 token 会突然跃升：少数几个通道取到上万的值。")
    assert not _vague_without_count("Only a few operations per element: {flops} FLOPs.")


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_no_vague_count_where_a_count_is_available(lang):
    found = {
        key: vague
        for key, text in catalog(lang).items()
        if (vague := _vague_without_count(text)) and key not in VAGUE_ALLOWED
    }
    assert not found


def test_every_allowed_vague_count_is_still_there():
    for key in VAGUE_ALLOWED:
        assert any(_vague_without_count(catalog(lang)[key]) for lang in LANGUAGES), key


# A sub- or superscript written as code ("μ_c", "(−1, 1)^d") outside math ($...$), a code
# span or a placeholder; a snake_case name (q_lora_rank, ln_f) is a name, not notation.


def test_a_chinese_value_takes_no_template_space_beside_chinese_text():
    """A zh template keeps a space before a Latin name ("按 LLaMA 读取"); beside a Chinese
    value, or after one ending in "）", the space was a stray one."""
    said = translate("kernels.busy_warning", "zh", widths="d = 4,096（前向）")
    assert "4,096（前向）处太忙" in said
    assert "4,096 处太忙" in translate("kernels.busy_warning", "zh", widths="d = 4,096")
    shared = translate("models.read_as_shared", "zh", family="通用的解码器", names="LLaMA")
    assert "由通用的解码器、LLaMA 共用" in shared and "按通用的解码器读取" in shared
    latin = translate("models.read_as_shared", "zh", family="LLaMA", names="Llama 2")
    assert "按 LLaMA 读取" in latin
    assert translate("models.read_as_shared", "en", family="A", names="B").startswith("Its")
