"""The held-out texts and how an experiment reads a text."""

from __future__ import annotations

import re

import pytest

from engine.config import EXPERIMENT_TEXTS, TextSpec
from engine.errors import EngineError
from engine.experiments.text import held_out_text, spec_text, tokenize_text
from tests.dumps import tiny_models


def test_every_held_out_text_is_shipped_and_in_its_language():
    assert set(EXPERIMENT_TEXTS) == {"en", "zh"}
    english, chinese = held_out_text("en"), held_out_text("zh")
    assert len(english.split()) > 400 and not re.search(r"[\u4e00-\u9fff]", english)
    han = re.findall(r"[\u4e00-\u9fff]", chinese)
    assert len(han) > 400


def test_the_chinese_text_uses_full_width_punctuation():
    chinese = held_out_text("zh")
    assert "。" in chinese and "，" in chinese
    assert not re.search(r"[,.;:!?()]", chinese)


def test_a_callers_text_replaces_the_held_out_one_unless_it_is_blank():
    assert spec_text(TextSpec(prompt="my own words")) == "my own words"
    assert spec_text(TextSpec(text="zh", prompt="  \n ")) == held_out_text("zh")


def test_tokens_are_cut_to_max_tokens_and_to_the_models_context():
    tokenizer = tiny_models.tokenizer()  # one token per character, [BOS] first
    cut = tokenize_text(tokenizer, TextSpec(max_tokens=10), context=None)
    assert len(cut.ids) == 10
    assert cut.text_tokens == len(tokenizer(held_out_text("en"))["input_ids"]) > 2000
    assert cut.texts[:3] == ("[BOS]", "T", "h")
    short = tokenize_text(tokenizer, TextSpec(max_tokens=512), context=24)
    assert len(short.ids) == 24


class _OneToken:
    """A tokenizer that makes one token of any text (no special tokens)."""

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": [7]}

    def decode(self, ids, skip_special_tokens=False):
        return "x" * len(ids)


def test_a_text_of_one_token_is_refused():
    with pytest.raises(EngineError) as caught:
        tokenize_text(_OneToken(), TextSpec(prompt="a"), context=None)
    assert caught.value.key == "experiments.too_few_tokens"
    assert caught.value.params == {"tokens": 1}
