import re
import string

import pytest

from ui.i18n import LANGUAGES, catalog, language_from_locale, translate


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


def test_chinese_strings_are_translated_not_copied():
    zh = catalog("zh")
    han = re.compile(r"[\u4e00-\u9fff]")
    translated = [key for key, text in zh.items() if han.search(text)]
    assert len(translated) > 0.8 * len(zh)


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
