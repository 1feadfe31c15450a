"""The text an experiment reads: a held-out text shipped in ``texts/``, or the caller's own,
tokenized and cut to its first tokens.

The held-out texts were written for this project (so no model was trained on them): an
English one about a day at a market and a Chinese one about the history of weights and
measures, about 1,650 tokens of SmolLM2's tokenizer together (676 English, 973 Chinese:
a byte-level tokenizer spends more tokens on Chinese).  Each is one sequence; an experiment
reads its first ``TextSpec.max_tokens`` tokens, fewer when the model's context is shorter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.config import EXPERIMENT_TEXTS, TextSpec
from engine.dumps.capture import token_texts
from engine.experiments.refusals import experiment_error

TEXTS = Path(__file__).resolve().parent / "texts"


def held_out_text(text: str) -> str:
    """The held-out text ``text`` (one of ``EXPERIMENT_TEXTS``)."""
    if text not in EXPERIMENT_TEXTS:
        TextSpec(text=text)  # refuses with the spec's message
    return (TEXTS / f"{text}.txt").read_text(encoding="utf-8")


def spec_text(spec: TextSpec) -> str:
    """What ``spec`` reads: the caller's text when it holds more than spaces, else the
    held-out one."""
    return spec.prompt if spec.prompt.strip() else held_out_text(spec.text)


@dataclass(frozen=True)
class TextTokens:
    """The tokens an experiment reads."""

    ids: tuple[int, ...]  # [T] token ids, as the tokenizer gives them (special tokens included)
    texts: tuple[str, ...]  # [T] what each token adds to the text (engine.dumps.capture)
    text_tokens: int  # tokens of the whole text; T = min(this, max_tokens, the context)


def token_ids(tokenizer, spec: TextSpec, context: int | None) -> tuple[tuple[int, ...], int]:
    """(the ids read: ``spec``'s text through ``tokenizer``, cut to ``spec.max_tokens`` and
    ``context``; the whole text's token count).  Refuses a text of fewer than 2 tokens:
    what a page asks before a prediction, with no token decoded."""
    ids = tuple(tokenizer(spec_text(spec), add_special_tokens=True)["input_ids"])
    limit = spec.max_tokens if context is None else min(spec.max_tokens, int(context))
    kept = ids[:limit]
    if len(kept) < 2:
        raise experiment_error("too_few_tokens", tokens=len(kept))
    return kept, len(ids)


def tokenize_text(tokenizer, spec: TextSpec, context: int | None) -> TextTokens:
    """``spec``'s text through ``tokenizer``, cut to ``spec.max_tokens`` (and ``context``);
    refuses a text of fewer than 2 tokens."""
    kept, whole = token_ids(tokenizer, spec, context)
    return TextTokens(kept, token_texts(tokenizer, list(kept)), whole)
