"""LiveSpec: one prompt for the live model of the dumps page (engine/dumps/live.py)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.fields import Checked, param

CAPTURE_DTYPES = ("float32", "bfloat16", "float16")  # what a captured model may run in
# A typed prompt (and the longest a share link carries); the token cap is checked after
# tokenizing (engine/dumps/live.py).
LIVE_MAX_CHARACTERS = 1000
# The live model's given prompts (two English, two Chinese; the last three are also in the
# built-in example): results of these are shared between sessions; a prompt someone typed
# is theirs, and its results stay in their session.
LIVE_PROMPTS = (
    "The capital of France is Paris, and the capital of Japan is",
    "Normalization layers keep the residual stream of a deep Transformer from growing without "
    "bound as new layers are added on top.",
    "我喜欢周末读书和喝茶。",
    "为什么每一层都要先做归一化？",
)


@dataclass(frozen=True)
class LiveSpec(Checked):
    """A prompt and the dtype the live model runs it in.

    The prompt is what a user typed: it holds no secret, but it is user data, so a page keys
    its cache on the spec per session or accepts that identical prompts share a result.
    """

    prompt: str = param(low=1, high=LIVE_MAX_CHARACTERS)
    dtype: str = param("float32", choices=CAPTURE_DTYPES)
