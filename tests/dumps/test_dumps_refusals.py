"""The refusal table, the translations and the code agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from engine.config import DumpSpec
from engine.dumps.refusals import MESSAGES
from engine.errors import EngineError

ROOT = Path(__file__).resolve().parents[2]


def _locale(lang: str) -> dict[str, str]:
    with open(ROOT / "locales" / lang / "errors.toml", "rb") as handle:
        return tomllib.load(handle)["dumps"]


def test_english_locale_is_the_engine_table():
    assert _locale("en") == MESSAGES


def test_chinese_locale_has_every_key_and_placeholder():
    zh = _locale("zh")
    assert set(zh) == set(MESSAGES)
    for key, text in MESSAGES.items():
        assert set(re.findall(r"{(\w+)}", zh[key])) == set(re.findall(r"{(\w+)}", text)), key


def test_every_refusal_raised_in_the_code_has_a_message():
    source = "\n".join(p.read_text() for p in (ROOT / "engine" / "dumps").rglob("*.py"))
    used = set(re.findall(r'refuse\(\s*"(\w+)"', source))
    assert used <= set(MESSAGES), used - set(MESSAGES)
    assert len(used) >= 20


@pytest.mark.parametrize(
    "field, value",
    [
        ("axes", "TBd"),
        ("layer_order", "random"),
        ("top_k", 2),
        ("massive_ratio", 0.0),
        ("stream", ""),
    ],
)
def test_dump_spec_refuses_bad_values_with_a_translatable_key(field, value):
    with pytest.raises(EngineError) as caught:
        DumpSpec(**{field: value})
    assert caught.value.key == "dumps.bad_spec"
    assert str(caught.value) == MESSAGES["bad_spec"].format(**caught.value.params)
    assert caught.value.params["name"] == field


def test_streamlit_upload_limit_is_the_engine_limit():
    from engine.dumps import UPLOAD_LIMIT_MB

    with open(ROOT / ".streamlit" / "config.toml", "rb") as handle:
        assert tomllib.load(handle)["server"]["maxUploadSize"] == UPLOAD_LIMIT_MB
