"""TrainSpec: one run of the training lab (engine/training/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.checks import above_zero, at_least, refuse_choice
from engine.errors import EngineError

TRAIN_TASKS = ("copy", "reverse", "modadd")
TRAIN_PLACEMENTS = ("pre", "post")  # the tiny GPT is built either way (engine/training/model.py)


@dataclass(frozen=True)
class TrainSpec:
    """One run of the training lab (``engine.training.train``): a tiny GPT on a toy task.

    The defaults were measured (engine/training/loop.py, "Defaults") to show the lesson: at this
    learning rate Pre-LN trains with or without warm-up, Post-LN without warm-up does not.
    """

    task: str = "reverse"  # one of TRAIN_TASKS
    placement: str = "post"  # "pre" or "post"
    layers: int = 6  # 2..8
    d: int = 64  # 64..128, residual width
    heads: int = 4
    lr: float = 3e-3  # peak learning rate of Adam
    warmup: bool = False  # linear warm-up over warmup_steps, then constant
    warmup_steps: int = 100
    steps: int = 300
    batch: int = 32
    length: int = 8  # copy/reverse: symbols per sequence
    symbols: int = 10  # copy/reverse: alphabet size
    modulus: int = 23  # modadd: (a + b) mod p
    seed: int = 0

    def __post_init__(self) -> None:
        if self.task not in TRAIN_TASKS:
            refuse_choice("task", self.task, TRAIN_TASKS)
        if self.placement not in TRAIN_PLACEMENTS:
            refuse_choice("placement", self.placement, TRAIN_PLACEMENTS)
        for name in ("layers", "d", "heads", "steps", "batch", "length", "warmup_steps"):
            at_least(name, getattr(self, name), 1)
        at_least("symbols", self.symbols, 2)
        at_least("modulus", self.modulus, 2)
        if self.d % self.heads:
            raise EngineError(
                "config.heads_not_dividing",
                {"heads": self.heads, "d": self.d},
            )
        above_zero("lr", self.lr)
