"""The Experiments page refuses a text too short to run as it is typed, once the model is
loaded (its tokenizer counts the tokens): fewer than 2, or too few for two windows of a mean,
before a prediction, a commit and Run are asked for (ui/requests/experiments.py)."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from tests.app.test_experiments_page import (
    SMALL,
    _open,
    _refusals,
    tiny,  # noqa: F401  (the fixture, used below)
)
from ui import live_model

pytestmark = pytest.mark.usefixtures("tiny")  # a tiny Llama as the live model


def test_a_typed_text_of_one_token_is_refused_before_a_prediction_is_asked(monkeypatch):
    """SmolLM2 reads "Hi" as one token (its tokenizer adds no [BOS]), and an experiment needs
    two: the page asked for a prediction, a commit and a click on Run before saying so.  With
    the model loaded, its tokenizer counts a typed text as it is typed."""
    load = live_model.model_load()
    assert load.wait(120)
    tokenizer = copy.deepcopy(load.live.loaded.tokenizer)
    tokenizer.add_bos_token = False  # as SmolLM2's: "a" is one token
    monkeypatch.setattr(load.live, "loaded", replace(load.live.loaded, tokenizer=tokenizer))
    at = _open({"ex_prompt": "a"})
    assert not at.exception
    assert any("Tokens in the text: 1" in message for message in _refusals(at)), _refusals(at)
    assert not [b for b in at.button if b.key.startswith("ex_commit_")]  # no prediction asked
    at = _open({"ex_prompt": "ab"})  # two tokens: the prediction comes
    assert not _refusals(at) and [b for b in at.button if b.key.startswith("ex_commit_")]


def test_a_text_too_short_for_two_windows_of_a_mean_is_refused_before_a_prediction():
    """16 tokens to read fill two windows of 4, but "abcdef" is 7 tokens ([BOS] and six
    letters): one window.  Once the model is loaded, that is said before the prediction,
    as the run would say it."""
    assert live_model.model_load().wait(120)
    query = {"ex_experiment": "massive", "ex_setting": "mean", **SMALL}
    at = _open({**query, "ex_prompt": "abcdef"})
    assert not at.exception
    said = " ".join(_refusals(at))
    assert "Windows of 4 tokens: the text's 7 tokens fill 1 of them" in said, said
    assert not [b for b in at.button if b.key.startswith("ex_commit_")]
    at = _open({**query, "ex_prompt": "abcdefg"})  # 8 tokens: two windows
    assert not _refusals(at) and [b for b in at.button if b.key.startswith("ex_commit_")]
