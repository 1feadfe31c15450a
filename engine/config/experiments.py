"""Specs of the experiments on a real model (engine/experiments/).

Which blocks an experiment changes is a tuple of block numbers (None: every block); whether
they exist is checked against the model (``experiments.bad_layers``), since a spec does
not know the model: before it loads, from its config, and when the experiment runs.  A
list is accepted and kept as a tuple, so the spec stays hashable.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.dumps import DumpSpec
from engine.config.fields import Checked, check_fields, param
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


@dataclass(frozen=True)
class TextSpec:
    """The text every experiment reads: a held-out text, or the caller's own."""

    text: str = param("en", choices=EXPERIMENT_TEXTS)  # read when ``prompt`` is empty
    # the caller's own text, read instead when it holds more than spaces
    prompt: str = param("", low=0, high=EXPERIMENT_MAX_CHARACTERS)
    # the first tokens read (fewer when the model's context is shorter)
    max_tokens: int = param(512, low=2, high=EXPERIMENT_MAX_TOKENS)

    def __post_init__(self) -> None:
        if isinstance(self.prompt, str) and len(self.prompt) > EXPERIMENT_MAX_CHARACTERS:
            raise experiment_error(  # before check_fields: this message names the token cap
                "prompt_too_long",
                characters=len(self.prompt),
                limit=EXPERIMENT_MAX_CHARACTERS,
                tokens=EXPERIMENT_MAX_TOKENS,
            )
        check_fields(self)


@dataclass(frozen=True)
class MassiveSpec(Checked):
    """Massive activations (engine/experiments/massive.py): found with the dumps page's
    definition and thresholds (``DumpSpec``), then set to zero, to their mean, or kept."""

    setting: str = param("zero", choices=MASSIVE_SETTINGS)
    # the stream point they are set at; None: the first holding one
    point: int | None = param(None, low=0, high=10**6)
    # "mean": the text is cut into windows of this many tokens, each run alone
    window: int = param(64, low=1, high=MASSIVE_MAX_WINDOW)
    massive_abs: float = param(DumpSpec.massive_abs, positive=True)
    massive_ratio: float = param(DumpSpec.massive_ratio, positive=True)


class _ChosenNorms:
    """A spec choosing norms by ``layers`` (block numbers) and ``final``: at least one."""

    def __post_init__(self) -> None:
        check_fields(self)
        _numbers(self, "layers", 10**4)
        if self.layers == () and not self.final:
            raise experiment_error("nothing_chosen")


@dataclass(frozen=True)
class SwapSpec(_ChosenNorms):
    """RMSNorm → LayerNorm (a LayerNorm model: → RMSNorm) in chosen blocks
    (engine/experiments/swap.py)."""

    layers: tuple[int, ...] | None = None  # blocks whose norms are swapped; None: every block
    final: bool = param(True)  # also the norm after the last block


@dataclass(frozen=True)
class FreezeSpec(_ChosenNorms):
    """Each token's 1/RMS replaced by its average over the text, in chosen blocks
    (engine/experiments/freeze.py)."""

    layers: tuple[int, ...] | None = None  # blocks whose norms are frozen; None: every block
    final: bool = param(False)  # also the norm after the last block
    exempt: str = param("none", choices=FREEZE_EXEMPT)  # tokens that keep their own scale


@dataclass(frozen=True)
class FreezeSweepSpec(Checked):
    """One block at a time frozen (and the final norm alone), for every block."""

    final: bool = param(True)  # also the final norm alone, as the sweep's last item
    exempt: str = param("none", choices=FREEZE_EXEMPT)  # as in FreezeSpec
    # a block tolerates a frozen scale when perplexity rises <= 5 %
    tolerance: float = param(0.05, positive=True)


@dataclass(frozen=True)
class FoldSpec(Checked):
    """γ (and β) folded into the linear maps that read each norm
    (engine/experiments/fold.py)."""

    final: bool = param(True)  # also the final norm into the unembedding (unties a tied one)


@dataclass(frozen=True)
class LensSpec:
    """The logit lens at chosen positions (engine/experiments/lens.py)."""

    positions: tuple[int, ...] | None = None  # None: LENS_DEFAULT_POSITIONS spread evenly
    top_k: int = param(5, low=1, high=LENS_MAX_TOP_K)  # most likely tokens per layer and position

    def __post_init__(self) -> None:
        check_fields(self)
        _numbers(self, "positions", LENS_MAX_POSITIONS)
        if self.positions == ():
            raise experiment_error(
                "bad_list", name="positions", value="()", limit=LENS_MAX_POSITIONS
            )


@dataclass(frozen=True)
class HalfSpec(Checked):
    """The model in float16, its norms with or without their float32 upcast
    (engine/experiments/half.py)."""

    upcast: bool = param(False)  # False: the norms compute their statistics in float16
    # a token has diverged past this relative distance
    divergence: float = param(HALF_DIVERGENCE, positive=True)


# The experiments a page offers, by id (the URL's values), and the spec of each.
EXPERIMENT_SPECS = {
    "massive": MassiveSpec,
    "swap": SwapSpec,
    "freeze": FreezeSpec,
    "sweep": FreezeSweepSpec,
    "fold": FoldSpec,
    "lens": LensSpec,
    "half": HalfSpec,
}
EXPERIMENTS = tuple(EXPERIMENT_SPECS)
