"""``EngineError``: its English message is the locale file's, and it survives a process hop."""

from __future__ import annotations

import pickle
import tomllib
from pathlib import Path

import pytest

from engine.config import NormSpec
from engine.errors import EngineError, messages

ROOT = Path(__file__).resolve().parents[1]


def _english(table: str, name: str) -> str:
    with (ROOT / "locales" / "en" / "errors.toml").open("rb") as handle:
        return tomllib.load(handle)[table][name]


def test_str_is_the_english_message_of_the_locale_file():
    with pytest.raises(EngineError) as caught:
        NormSpec(groups=0)
    error = caught.value
    assert error.key == "config.below_minimum"
    assert str(error) == _english("config", "below_minimum").format(**error.params)
    assert str(error) == "groups = 0 is too small: it must be at least 1."


def test_messages_are_read_once_and_hold_every_table():
    assert messages() is messages()
    assert messages()["dumps.corrupt"] == _english("dumps", "corrupt")
    assert {key.split(".")[0] for key in messages()} >= {"config", "dumps", "capture", "axes"}


@pytest.mark.unfilled_refusals
def test_a_refusal_always_prints_even_when_its_message_cannot_be_filled():
    assert str(EngineError("nowhere.unknown", {"a": 1})) == "nowhere.unknown: {'a': 1}"
    partial = str(EngineError("config.below_minimum", {"name": "d"}))
    assert partial == "d = {value} is too small: it must be at least {minimum}."


def test_it_is_a_value_error_and_survives_pickling_whole():
    error = EngineError("config.not_positive", {"name": "lr", "value": 0.0})
    assert isinstance(error, ValueError)
    again = pickle.loads(pickle.dumps(error))  # a Dask worker's refusal reaches the client
    assert (again.key, again.params, str(again)) == (error.key, error.params, str(error))
