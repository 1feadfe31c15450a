"""Specs of the experiments on a real model (engine/experiments/).

Which blocks an experiment changes is a tuple of block numbers (None: every block); whether
they exist is checked against the model when the experiment runs
(``experiments.bad_layers``), since a spec does not know the model.  A list is accepted and
kept as a tuple, so the spec stays hashable.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.checks import above_zero, refuse_choice
from engine.config.dumps import DumpSpec
from engine.config.precision import HALF_DIVERGENCE
from engine.experiments.refusals import experiment_error

EXPERIMENT_TEXTS = ("en", "zh")  # the held-out texts: engine/experiments/texts/<id>.txt
EXPERIMENT_MAX_CHARACTERS = 8000  # a caller's own text
EXPERIMENT_MAX_TOKENS = 1024  # tokens an experiment reads (a 1024-token pass: a few seconds)
MASSIVE_SETTINGS = ("keep", "zero", "mean")
# Tokens a frozen scale leaves alone (engine/experiments/freeze.py): none, the first token,
# or every token carrying a massive activation somewhere in the stream.
FREEZE_EXEMPT = ("none", "first", "massive")
MASSIVE_MAX_WINDOW = 512
LENS_VARIANTS = ("own_scale", "final_scale", "no_norm")  # see engine/experiments/lens.py
LENS_DEFAULT_POSITIONS = 16  # positions the logit lens decodes when none are named
LENS_MAX_POSITIONS = 64
LENS_MAX_TOP_K = 20


def _whole(name: str, value, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise experiment_error("out_of_range", name=name, value=repr(value), low=low, high=high)


def _numbers(spec, name: str, limit: int) -> None:
    """``spec.<name>``: None, or at most ``limit`` different whole numbers >= 0."""
    value = getattr(spec, name)
    if value is None:
        return
    numbers = tuple(value) if isinstance(value, (list, tuple)) else None
    ok = (
        numbers is not None
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers)
        and len(set(numbers)) == len(numbers)
        and len(numbers) <= limit
    )
    if not ok:
        raise experiment_error("bad_list", name=name, value=repr(value), limit=limit)
    object.__setattr__(spec, name, numbers)


def _flags(spec, *names: str) -> None:
    for name in names:
        if not isinstance(getattr(spec, name), bool):
            refuse_choice(name, getattr(spec, name), (True, False))


@dataclass(frozen=True)
class TextSpec:
    """The text every experiment reads: a held-out text, or the caller's own."""

    text: str = "en"  # one of EXPERIMENT_TEXTS, read when ``prompt`` is empty
    prompt: str = ""  # the caller's own text, read instead when it holds more than spaces
    max_tokens: int = 512  # the first tokens read (fewer when the model's context is shorter)

    def __post_init__(self) -> None:
        if self.text not in EXPERIMENT_TEXTS:
            refuse_choice("text", self.text, EXPERIMENT_TEXTS)
        if not isinstance(self.prompt, str):
            refuse_choice("prompt", type(self.prompt).__name__, ("a text",))
        if len(self.prompt) > EXPERIMENT_MAX_CHARACTERS:
            raise experiment_error(
                "prompt_too_long",
                characters=len(self.prompt),
                limit=EXPERIMENT_MAX_CHARACTERS,
                tokens=EXPERIMENT_MAX_TOKENS,
            )
        _whole("max_tokens", self.max_tokens, 2, EXPERIMENT_MAX_TOKENS)


@dataclass(frozen=True)
class MassiveSpec:
    """Massive activations (engine/experiments/massive.py): found with the dumps page's
    definition and thresholds (``DumpSpec``), then set to zero, to their mean, or kept."""

    setting: str = "zero"  # one of MASSIVE_SETTINGS
    point: int | None = None  # the stream point they are set at; None: the first holding one
    window: int = 64  # "mean": the text is cut into windows of this many tokens, each run alone
    massive_abs: float = DumpSpec.massive_abs
    massive_ratio: float = DumpSpec.massive_ratio

    def __post_init__(self) -> None:
        if self.setting not in MASSIVE_SETTINGS:
            refuse_choice("setting", self.setting, MASSIVE_SETTINGS)
        if self.point is not None:
            _whole("point", self.point, 0, 10**6)
        _whole("window", self.window, 1, MASSIVE_MAX_WINDOW)
        above_zero("massive_abs", self.massive_abs)
        above_zero("massive_ratio", self.massive_ratio)


@dataclass(frozen=True)
class SwapSpec:
    """RMSNorm → LayerNorm (a LayerNorm model: → RMSNorm) in chosen blocks
    (engine/experiments/swap.py)."""

    layers: tuple[int, ...] | None = None  # blocks whose norms are swapped; None: every block
    final: bool = True  # also the norm after the last block

    def __post_init__(self) -> None:
        _numbers(self, "layers", 10**4)
        _flags(self, "final")
        if self.layers == () and not self.final:
            raise experiment_error("nothing_chosen")


@dataclass(frozen=True)
class FreezeSpec:
    """Each token's 1/RMS replaced by its average over the text, in chosen blocks
    (engine/experiments/freeze.py)."""

    layers: tuple[int, ...] | None = None  # blocks whose norms are frozen; None: every block
    final: bool = False  # also the norm after the last block
    exempt: str = "none"  # one of FREEZE_EXEMPT: tokens that keep their own scale

    def __post_init__(self) -> None:
        _numbers(self, "layers", 10**4)
        _flags(self, "final")
        if self.exempt not in FREEZE_EXEMPT:
            refuse_choice("exempt", self.exempt, FREEZE_EXEMPT)
        if self.layers == () and not self.final:
            raise experiment_error("nothing_chosen")


@dataclass(frozen=True)
class FreezeSweepSpec:
    """One block at a time frozen (and the final norm alone), for every block."""

    final: bool = True  # also the final norm alone, as the sweep's last item
    exempt: str = "none"  # as in FreezeSpec
    tolerance: float = 0.05  # a block tolerates a frozen scale when perplexity rises <= 5 %

    def __post_init__(self) -> None:
        _flags(self, "final")
        if self.exempt not in FREEZE_EXEMPT:
            refuse_choice("exempt", self.exempt, FREEZE_EXEMPT)
        above_zero("tolerance", self.tolerance)


@dataclass(frozen=True)
class FoldSpec:
    """γ (and β) folded into the linear maps that read each norm
    (engine/experiments/fold.py)."""

    final: bool = True  # also the final norm into the unembedding (unties a tied one)

    def __post_init__(self) -> None:
        _flags(self, "final")


@dataclass(frozen=True)
class LensSpec:
    """The logit lens at chosen positions (engine/experiments/lens.py)."""

    positions: tuple[int, ...] | None = None  # None: LENS_DEFAULT_POSITIONS spread evenly
    top_k: int = 5  # most likely tokens listed per layer and position

    def __post_init__(self) -> None:
        _numbers(self, "positions", LENS_MAX_POSITIONS)
        if self.positions == ():
            raise experiment_error(
                "bad_list", name="positions", value="()", limit=LENS_MAX_POSITIONS
            )
        _whole("top_k", self.top_k, 1, LENS_MAX_TOP_K)


@dataclass(frozen=True)
class HalfSpec:
    """The model in float16, its norms with or without their float32 upcast
    (engine/experiments/half.py)."""

    upcast: bool = False  # False: the norms compute their statistics in float16
    divergence: float = HALF_DIVERGENCE  # a token has diverged past this relative distance

    def __post_init__(self) -> None:
        _flags(self, "upcast")
        above_zero("divergence", self.divergence)
