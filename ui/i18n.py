"""Every user-visible string, in English and 简体中文.

Strings live in ``locales/<lang>/<namespace>.toml``; a key is ``"<namespace>.<name>"``
(nested tables add more dots).  ``translate`` is pure and unit-tested; ``t`` reads the
current language from the Streamlit session.  Both languages must have the same keys
(tests/ui/test_i18n.py checks it).
"""

from __future__ import annotations

import functools
import re
import string
import tomllib
from pathlib import Path
from unicodedata import east_asian_width

LANGUAGES = {"en": "English", "zh": "简体中文"}
DEFAULT_LANGUAGE = "en"
_LOCALES = Path(__file__).resolve().parents[1] / "locales"
# An expression in running text ("σ = 1.1180", "d − 1", "96 × 24,576") stays on one line: the
# spaces around its operator are no-break spaces, in a text and in what fills it.  Inline
# maths and code keep theirs (KaTeX typesets a no-break space as a visible space; code is
# copied).
_OPERATORS = re.compile(r" ([=−≈×<>≤≥]) ")
# a code span's fence is any run of backticks (``literal`` lengthens it past the text's own)
_MATHS_OR_CODE = re.compile(r"\$[^$]*\$|(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
# A number in e-notation stays whole: its exponent's "-" is a non-breaking hyphen (U+2011,
# the same glyph), where a narrow column broke "1.1e-" / "15".  ui.formatting.as_ascii reads
# it back as "-"; code spans (copied) keep the ASCII one.
NON_BREAKING_HYPHEN = "\u2011"
_EXPONENT = re.compile(r"(?<=\de)-(?=\d)")
# A number and its unit of time, bytes or intensity stay together ("1.75 µs。" put "µs。"
# alone on a line in a narrow Chinese column, a phone's metric "1.75" above "FLOP/B"): the
# space between them is a no-break space.
_UNIT = re.compile(r"(?<=\d) (?=(?:[pnµm]?s|[kMGT]?B|FLOP/B)(?!\w))")


def _bind(part: str) -> str:
    part = _OPERATORS.sub("\u00a0\\1\u00a0", part)
    part = _UNIT.sub("\u00a0", part)
    return _EXPONENT.sub(NON_BREAKING_HYPHEN, part)


def _bound(text: str) -> str:
    if not any(rule.search(text) for rule in (_OPERATORS, _EXPONENT, _UNIT)):
        return text
    parts, start = [], 0
    for kept in _MATHS_OR_CODE.finditer(text):
        parts += [_bind(text[start : kept.start()]), kept.group()]
        start = kept.end()
    return "".join([*parts, _bind(text[start:])])


def _flatten(table: dict, prefix: str) -> dict[str, str]:
    flat: dict[str, str] = {}
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if isinstance(value, dict):
            flat.update(_flatten(value, key))
        else:
            flat[key] = str(value)
    return flat


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    """All strings of one language, keyed ``namespace.name``."""
    strings: dict[str, str] = {}
    for path in sorted((_LOCALES / lang).glob("*.toml")):
        with path.open("rb") as handle:
            strings.update(_flatten(tomllib.load(handle), path.stem))
    return strings


def translate(key: str, lang: str, **params: object) -> str:
    """The string ``key`` in ``lang`` with ``{params}`` filled in, its expressions bound.

    Falls back to English, then to the key itself, so a missing string never crashes a page.
    A missing parameter raises ``KeyError`` rather than showing "{name}" to a reader;
    tests/ui/test_i18n.py checks every call against the placeholders of its text.
    """
    text = catalog(lang).get(key) or catalog(DEFAULT_LANGUAGE).get(key) or key
    return _bound(_filled(text, params) if lang == "zh" else text.format(**params))


def _wide(text: str) -> bool:
    """Whether ``text`` is a Chinese character or full-width punctuation ("（", "、")."""
    return bool(text) and east_asian_width(text) in "WF"


def _filled(text: str, params: dict) -> str:
    """``text.format(**params)`` for Chinese text, without a template's space between a
    value and the Chinese beside it: the space a template keeps before a Latin name
    ("按 LLaMA 读取") is a stray one before a Chinese one ("按 通用的 Pre-RMSNorm 解码器
    读取") or after a closing "）" ("d = 4,096（前向） 处太忙")."""
    formatter, out, value = string.Formatter(), "", ""  # value: the last one filled in
    for literal, field, spec, conversion in formatter.parse(text):  # "{{" ends a literal too
        if _wide(value[-1:]) and literal.startswith(" ") and _wide(literal[1:2]):
            literal = literal[1:]
        value = ""
        if field is not None:
            value, _ = formatter.get_field(field, (), params)
            value = formatter.format_field(formatter.convert_field(value, conversion), spec)
            if literal.endswith(" ") and _wide((out + literal)[-2:-1]) and _wide(value[:1]):
                literal = literal[:-1]
        out += literal + value
    return out


def join(items, lang: str) -> str:
    """Names listed in a sentence: "a, b, c" in English, "a、b、c" in Chinese (an enumeration
    comma, never a half-width comma between Chinese words)."""
    return translate("app.list_separator", lang).join(str(item) for item in items)


def sentence_joiner(lang: str) -> str:
    """What goes between two sentences: a space in English, nothing after a Chinese "。"."""
    return "" if lang == "zh" else " "


def language_from_locale(locale: str | None) -> str:
    """Map a browser locale ("zh-CN", "en-US", None) to a supported language."""
    if locale and locale.lower().startswith("zh"):
        return "zh"
    return DEFAULT_LANGUAGE


def current_language() -> str:
    import streamlit as st

    lang = st.session_state.get("language", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def t(key: str, **params: object) -> str:
    """``translate`` in the session's current language."""
    return translate(key, current_language(), **params)
