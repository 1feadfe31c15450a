"""What the Axes page's engine refuses or summarises, in one place, each limit named once.

The page draws a ``[B, T, d]`` tensor cell by cell and recomputes it on every click, for
thirty browsers on one server: the sizes are capped so that any accepted configuration
computes in milliseconds (benchmarks/RESULTS.md, "The Axes engine at the defaults").
``AxesSpec.__post_init__`` and the experiments read these constants (its fields' metadata,
``engine/config/fields.py``); pages never re-check them.
"""

from __future__ import annotations

import numbers

from engine.config.fields import Accepts, checked
from engine.errors import EngineError

# --- the tensor --------------------------------------------------------------------------
MAX_BATCH = 64  # B: sequences in the batch
MAX_TOKENS = 512  # T: positions per sequence
MAX_CHANNELS = 1024  # d: channels
MAX_CELLS = 2**16  # B*T*d computed for the page (65,536 cells; 8 x 64 x 128, say)
MAX_DRAWN_CELLS = 2**13  # above this many cells a page summarises instead of drawing each
MAX_EPS = 1.0  # epsilon is accepted in [0, MAX_EPS]; 0 shows the 0/0 of a constant channel
MAX_ABS_PAD_VALUE = 1e4  # |value written into PAD cells|

# --- the example source: the shipped SmolLM2 dump's [L, B, T, d] (engine/dumps/example.py
# EXAMPLE_SHAPE; kept here as numbers so that engine.config imports no engine.dumps)
EXAMPLE_POINTS, EXAMPLE_BATCH, EXAMPLE_TOKENS, EXAMPLE_CHANNELS = 31, 4, 24, 576

# --- the BatchNorm experiments -------------------------------------------------------------
MAX_DRAWS = 2000  # small batches: batches drawn per batch size
MAX_BATCH_SIZES = 12  # small batches: how many batch sizes are compared
MAX_SAMPLED_VALUES = 2**24  # small batches: draws * sum(batch sizes) * T * min(d, 8) values drawn
MAX_TRAIN_STEPS = 1000  # train vs eval: training batches that update the running statistics
MAX_SHIFT = 10.0  # train vs eval: |distribution shift| in units of each channel's std
# What each experiment argument accepts (the Axes page's links offer the same ranges)
DRAWS = Accepts(low=2, high=MAX_DRAWS)  # a spread needs two draws
TRAIN_STEPS = Accepts(low=1, high=MAX_TRAIN_STEPS)
MOMENTUM = Accepts(low=0.0, high=1.0, positive=True)  # 0: nothing would be learned
SHIFT = Accepts(low=-MAX_SHIFT, high=MAX_SHIFT)
LEAK_POSITION_LOW = 1  # the causal leak replaces a token after the first (up to T - 1)


# --- refusals ------------------------------------------------------------------------------


def refusal(key: str, **params) -> EngineError:
    """The ``EngineError`` ``axes.<key>`` (translated from ``locales/*/errors.toml``)."""
    return EngineError(f"axes.{key}", params)


def is_whole(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def checked_int(name: str, value, low: int, high: int) -> int:
    """``value`` as an int (numpy integers accepted) when it is a whole number in [low, high]."""
    return checked(name, value, True, Accepts(low=low, high=high))


def checked_real(name: str, value, low: float, high: float) -> float:
    """``value`` as a float when it is a finite number in [low, high] (NaN refused)."""
    return checked(name, value, False, Accepts(low=low, high=high))
