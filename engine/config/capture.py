"""LiveSpec: one prompt for the live model of the dumps page (engine/dumps/live.py)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.checks import refuse_choice
from engine.errors import EngineError

CAPTURE_DTYPES = ("float32", "bfloat16", "float16")  # what a captured model may run in
LIVE_MAX_CHARACTERS = 2000  # a typed prompt; the token cap is checked after tokenizing


@dataclass(frozen=True)
class LiveSpec:
    """A prompt and the dtype the live model runs it in.

    The prompt is what a user typed: it holds no secret, but it is user data, so a page keys
    its cache on the spec per session or accepts that identical prompts share a result.
    """

    prompt: str
    dtype: str = "float32"  # one of CAPTURE_DTYPES

    def __post_init__(self) -> None:
        if self.dtype not in CAPTURE_DTYPES:
            refuse_choice("dtype", self.dtype, CAPTURE_DTYPES)
        if not isinstance(self.prompt, str) or not self.prompt.strip():
            raise EngineError(
                "capture.bad_value",
                {"name": "prompt", "value": repr(self.prompt), "accepted": "a non-empty text"},
            )
        if len(self.prompt) > LIVE_MAX_CHARACTERS:
            accepted = f"at most {LIVE_MAX_CHARACTERS} characters"
            raise EngineError(
                "capture.bad_value",
                {"name": "prompt", "value": f"{len(self.prompt)} characters", "accepted": accepted},
            )
