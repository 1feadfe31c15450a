"""Every refusal of the experiments on a real model: one table of keys and English messages.

``experiment_error(refusal, **params)`` builds the ``EngineError`` with key
``"experiments.<name>"``; pages translate it from ``ui/locales/<lang>/errors.toml`` (table
``[experiments]``), whose English text is this table's (tests/experiments keep them equal).
"""

from __future__ import annotations

from engine.errors import EngineError

MESSAGES = {
    "prompt_too_long": (
        "The text is {characters} characters long; at most {limit} are accepted. Shorten it "
        "(the experiments read its first tokens only)."
    ),
    "too_few_tokens": (
        "The text gives {tokens} token(s); an experiment needs at least 2 (one to predict "
        "from, one to predict). Accepted: a longer text."
    ),
    "not_causal": (
        "{model} is a masked language model ({architecture}): the experiments measure "
        "next-token predictions, which only a causal language model makes."
    ),
    "other_model": (
        "The unmodified run was made on {reference}, not on {model}. Accepted: the unmodified "
        "run of the same model."
    ),
    "out_of_range": (
        "{name} = {value} is not accepted. Accepted: a whole number from {low} to {high}."
    ),
    "bad_list": (
        "{name} = {value} is not accepted. Accepted: at most {limit} different whole numbers ≥ 0."
    ),
    "nothing_chosen": "No norm is chosen. Accepted: at least one block, or the final norm.",
    "bad_layers": ("Block {value} is not in this model. Accepted: block numbers from 0 to {last}."),
    "bad_point": (
        "Stream point {value} is not in this model. Accepted: 0 (the embeddings) to {last} "
        "(the last block's output)."
    ),
    "bad_positions": ("Position {value} is not in the text. Accepted: positions from 0 to {last}."),
    "too_few_windows": (
        "{tokens} tokens cut into windows of {window} make {windows} window(s); a mean over "
        "windows needs at least 2. Accepted: a window of at most {largest} tokens, or a "
        "longer text."
    ),
}


def experiment_error(refusal: str, /, **params: object) -> EngineError:
    """The ``EngineError`` for refusal ``refusal`` with ``params`` in its message
    (positional-only, so that a parameter may be called ``name``)."""
    return EngineError(f"experiments.{refusal}", params, MESSAGES[refusal].format(**params))
