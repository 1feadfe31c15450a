"""AxesSpec: which cells of [B, T, d] share statistics (engine/axes/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.axes import limits as axes_limits
from engine.config.norms import NORM_KINDS

AXES_SOURCES = ("synthetic", "padded", "example")  # padded: "sentences with padding";
#   example: a slice of the shipped SmolLM2 dump (engine/dumps/example.py)
AXES_PRESETS = ("gaussian", "channel_offsets", "outlier_channel", "shifted_token")
AXES_DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class AxesSpec:
    """A ``[B, T, d]`` tensor (its source) and the norm applied to it, for ``engine.axes``.

    ``lengths`` (padded source) is a tuple of ints, one per sequence; ``()`` means a
    staircase from T down to about T/4 (``engine.axes.sources.default_lengths``).  It is
    ignored by the synthetic source but, when given, always checked.  The size limits are
    in ``engine/axes/limits.py``; every refusal is an ``EngineError`` keyed ``axes.*``.
    """

    source: str = "synthetic"  # one of AXES_SOURCES
    preset: str = "gaussian"  # one of AXES_PRESETS: how the real tokens are drawn
    batch: int = 4  # B
    tokens: int = 16  # T
    d: int = 32  # channels
    seed: int = 0
    lengths: tuple[int, ...] = ()  # padded: real tokens per sequence, each 1..T
    pad_value: float = 0.0  # padded: the value of every PAD cell (0 = zero padding)
    kind: str = "layernorm"  # one of NORM_KINDS
    groups: int = 4  # GroupNorm: channel groups, must divide d (checked for groupnorm only)
    eps: float = 1e-5
    mask_padding: bool = False  # BatchNorm: leave PAD positions out of the statistics
    dtype: str = "float32"  # one of AXES_DTYPES; the statistics are computed in it
    layer: int = 12  # example: the point of the stream sliced (12: where the first token's
    #   massive activation appears); checked for every source, used by the example only

    def __post_init__(self) -> None:
        for name, allowed in (
            ("source", AXES_SOURCES),
            ("preset", AXES_PRESETS),
            ("kind", NORM_KINDS),
            ("dtype", AXES_DTYPES),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise axes_limits.refusal(
                    "unknown_choice",
                    name=name,
                    value=str(value),
                    allowed=", ".join(allowed),
                )
        for name, limit in (
            ("batch", axes_limits.MAX_BATCH),
            ("tokens", axes_limits.MAX_TOKENS),
            ("d", axes_limits.MAX_CHANNELS),
            ("seed", axes_limits.MAX_SEED),
        ):
            low = 0 if name == "seed" else 1  # sizes start at 1, seeds at 0
            object.__setattr__(
                self, name, axes_limits.checked_int(name, getattr(self, name), low, limit)
            )
        cells = self.batch * self.tokens * self.d
        if cells > axes_limits.MAX_CELLS:
            raise axes_limits.refusal(
                "too_many_cells",
                cells=cells,
                limit=axes_limits.MAX_CELLS,
                batch=self.batch,
                tokens=self.tokens,
                d=self.d,
            )
        last_point = axes_limits.EXAMPLE_POINTS - 1
        layer = axes_limits.checked_int("layer", self.layer, 0, last_point)
        object.__setattr__(self, "layer", layer)
        if self.source == "example":
            _check_example_slice(self.batch, self.tokens, self.d)
        object.__setattr__(self, "lengths", _checked_lengths(self.lengths, self.batch, self.tokens))
        if self.kind == "groupnorm":
            object.__setattr__(
                self, "groups", axes_limits.checked_int("groups", self.groups, 1, self.d)
            )
            if self.d % self.groups:
                divisors = ", ".join(str(k) for k in range(1, self.d + 1) if self.d % k == 0)
                raise axes_limits.refusal(
                    "groups_not_dividing",
                    groups=self.groups,
                    d=self.d,
                    divisors=divisors,
                )
        object.__setattr__(
            self, "eps", axes_limits.checked_real("eps", self.eps, 0.0, axes_limits.MAX_EPS)
        )
        limit = axes_limits.MAX_ABS_PAD_VALUE
        pad_value = axes_limits.checked_real("pad_value", self.pad_value, -limit, limit)
        object.__setattr__(self, "pad_value", pad_value)


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
