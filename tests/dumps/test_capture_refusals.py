"""The capture's refusal table, its translations and the code agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from engine.dumps.capture_refusals import MESSAGES

ROOT = Path(__file__).resolve().parents[2]


def _locale(lang: str) -> dict[str, str]:
    with open(ROOT / "locales" / lang / "errors.toml", "rb") as handle:
        return tomllib.load(handle)["capture"]


def test_english_locale_is_the_engine_table():
    assert _locale("en") == MESSAGES


def test_chinese_locale_has_every_key_and_placeholder():
    zh = _locale("zh")
    assert set(zh) == set(MESSAGES)
    for key, text in MESSAGES.items():
        assert set(re.findall(r"{(\w+)}", zh[key])) == set(re.findall(r"{(\w+)}", text)), key


def test_every_capture_refusal_in_the_code_has_a_message_and_every_message_is_used():
    sources = [
        *(ROOT / "engine" / "dumps").rglob("*.py"),
        *(ROOT / "engine" / "config").rglob("*.py"),
    ]
    text = "\n".join(path.read_text() for path in sources)
    used = set(re.findall(r'capture_error\(\s*"(\w+)"', text))
    used |= set(re.findall(r'"capture\.(\w+)"', text))
    assert used == set(MESSAGES), used ^ set(MESSAGES)
