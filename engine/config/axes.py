"""AxesSpec: which cells of [B, T, d] share statistics (engine/axes/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.axes import limits as axes_limits
from engine.config.fields import MAX_SEED, check_fields, param
from engine.config.norms import EPS_MENU, NORM_KINDS

AXES_SOURCES = ("synthetic", "padded", "example")  # padded: "sentences with padding";
#   example: a slice of the shipped SmolLM2 dump (engine/dumps/example.py)
AXES_PRESETS = ("gaussian", "channel_offsets", "outlier_channel", "shifted_token")
AXES_DTYPES = ("float32", "float64")
_PAD = axes_limits.MAX_ABS_PAD_VALUE


@dataclass(frozen=True)
class AxesSpec:
    """A ``[B, T, d]`` tensor (its source) and the norm applied to it, for ``engine.axes``.

    ``lengths`` (padded source) is a tuple of ints, one per sequence; ``()`` means a
    staircase from T down to about T/4 (``engine.axes.sources.default_lengths``).  It is
    ignored by the synthetic source but, when given, always checked.  The size limits are
    in ``engine/axes/limits.py``; the rules between fields raise ``axes.*`` refusals.
    """

    source: str = param("synthetic", choices=AXES_SOURCES)
    preset: str = param("gaussian", choices=AXES_PRESETS)  # how the real tokens are drawn
    batch: int = param(4, low=1, high=axes_limits.MAX_BATCH)  # B
    tokens: int = param(16, low=1, high=axes_limits.MAX_TOKENS)  # T
    d: int = param(32, low=1, high=axes_limits.MAX_CHANNELS)  # channels
    seed: int = param(0, low=0, high=MAX_SEED)
    lengths: tuple[int, ...] = ()  # padded: real tokens per sequence, each 1..T
    # padded: the value of every PAD cell (0 = zero padding)
    pad_value: float = param(0.0, low=-_PAD, high=_PAD)
    kind: str = param("layernorm", choices=NORM_KINDS)
    # GroupNorm: channel groups, must divide d (checked for groupnorm only)
    groups: int = param(4, low=1, high=axes_limits.MAX_CHANNELS)
    # 0 shows the 0/0 of a constant channel
    eps: float = param(1e-5, low=0.0, high=axes_limits.MAX_EPS, offered=EPS_MENU)
    mask_padding: bool = param(False)  # BatchNorm: leave PAD positions out of the statistics
    dtype: str = param("float32", choices=AXES_DTYPES)  # the statistics are computed in it
    # example: the point of the stream sliced (12: where the first token's massive activation
    # appears); checked for every source, used by the example only
    layer: int = param(12, low=0, high=axes_limits.EXAMPLE_POINTS - 1)

    def __post_init__(self) -> None:
        check_fields(self)
        cells = self.batch * self.tokens * self.d
        if cells > axes_limits.MAX_CELLS:
            raise axes_limits.refusal(
                "too_many_cells",
                cells=f"{cells:,}",  # counts, grouped as the pages write them
                limit=f"{axes_limits.MAX_CELLS:,}",
                batch=self.batch,
                tokens=self.tokens,
                d=self.d,
            )
        if self.source == "example":
            _check_example_slice(self.batch, self.tokens, self.d)
        object.__setattr__(self, "lengths", _checked_lengths(self.lengths, self.batch, self.tokens))
        if self.kind == "groupnorm" and self.d % self.groups:
            divisors = ", ".join(str(k) for k in range(1, self.d + 1) if self.d % k == 0)
            raise axes_limits.refusal(
                "groups_not_dividing",
                groups=self.groups,
                d=self.d,
                divisors=divisors,
            )


def _check_example_slice(batch: int, tokens: int, d: int) -> None:
    """The example dump holds EXAMPLE_BATCH prompts of EXAMPLE_TOKENS tokens, d = 576."""
    for name, value, high in (
        ("batch", batch, axes_limits.EXAMPLE_BATCH),
        ("tokens", tokens, axes_limits.EXAMPLE_TOKENS),
        ("d", d, axes_limits.EXAMPLE_CHANNELS),
    ):
        if value > high:
            raise axes_limits.refusal(
                "example_too_large",
                name=name,
                value=value,
                high=high,
                max_batch=axes_limits.EXAMPLE_BATCH,
                max_tokens=axes_limits.EXAMPLE_TOKENS,
                max_d=axes_limits.EXAMPLE_CHANNELS,
            )


def _checked_lengths(lengths, batch: int, tokens: int) -> tuple[int, ...]:
    """``lengths`` as a tuple of ints, each 1..tokens, one per sequence (or empty)."""
    lengths = tuple(lengths)
    if not lengths:
        return ()
    if len(lengths) != batch:
        raise axes_limits.refusal(
            "lengths_count",
            count=len(lengths),
            batch=batch,
        )
    for sample, length in enumerate(lengths):
        if not axes_limits.is_whole(length) or not 1 <= length <= tokens:
            raise axes_limits.refusal(
                "length_out_of_range",
                sample=sample,
                length=str(length),
                tokens=tokens,
            )
    return tuple(int(length) for length in lengths)
