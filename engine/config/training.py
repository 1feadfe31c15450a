"""TrainSpec: one run of the training lab (engine/training/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.fields import MAX_SEED, check_fields, param
from engine.errors import EngineError

TRAIN_TASKS = ("copy", "reverse", "modadd")
TRAIN_PLACEMENTS = ("pre", "post")  # the tiny GPT is built either way (engine/training/model.py)
COMPARED_RUNS = ("pre", "post")  # the training lab's runs A and B open on Pre-LN against Post-LN
TRAIN_WIDTHS = (64, 96, 128)  # the widths a page offers; 4 heads divide each
LEARNING_RATES = (3e-4, 1e-3, 2e-3, 3e-3, 5e-3, 1e-2)  # the learning rates a page offers


@dataclass(frozen=True)
class TrainSpec:
    """One run of the training lab (``engine.training.loop.train``): a tiny GPT on a toy task.

    A live run on a shared CPU must stay small: the sizes are bounded here.  The defaults
    were measured (engine/training/loop.py, "Defaults") to show the lesson: at this learning
    rate Pre-LN trains with or without warm-up, Post-LN without warm-up does not.
    """

    task: str = param("reverse", choices=TRAIN_TASKS)
    placement: str = param("post", choices=TRAIN_PLACEMENTS)
    layers: int = param(6, low=2, high=8)
    d: int = param(64, low=8, high=256, offered=TRAIN_WIDTHS)  # residual width
    heads: int = param(4, low=1)
    lr: float = param(3e-3, positive=True, offered=LEARNING_RATES)  # peak learning rate of Adam
    warmup: bool = param(False)  # linear warm-up over warmup_steps, then constant
    warmup_steps: int = param(100, low=1)
    steps: int = param(300, low=50, high=1000)
    batch: int = param(32, low=1, high=256)
    length: int = param(8, low=1, high=32)  # copy/reverse: symbols per sequence
    symbols: int = param(10, low=2)  # copy/reverse: alphabet size
    modulus: int = param(23, low=2)  # modadd: (a + b) mod p
    seed: int = param(0, low=0, high=MAX_SEED)

    def __post_init__(self) -> None:
        check_fields(self)
        if self.d % self.heads:
            raise EngineError(
                "config.heads_not_dividing",
                {"heads": self.heads, "d": self.d},
            )
