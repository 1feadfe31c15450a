"""DumpSpec: how to read and judge an activation dump (engine/dumps/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import EngineError

DUMP_AXES = ("auto", "Td", "BTd", "LTd", "LBTd")  # the last axis is always d, the one before T
DUMP_LAYER_ORDERS = ("names", "file")


@dataclass(frozen=True)
class DumpSpec:
    """How to read an activation dump and which thresholds its diagnostics use.

    ``stream`` names the entries that form the residual stream: "auto", or one of the
    templates the layout inference lists (``Layout.streams``, e.g.
    ``"blocks.{i}.hook_resid_pre"``).  ``axes`` overrides which axes those entries have.
    """

    axes: str = "auto"  # one of DUMP_AXES
    stream: str = "auto"  # "auto" or a template from Layout.streams
    layer_order: str = "names"  # "names": by the layer number in the names; "file": as stored
    # Sun et al. 2024 (arXiv:2402.17762): an activation is massive when |a| > 100 and
    # about 1,000x the median magnitude of its layer's hidden states.
    massive_abs: float = 100.0
    massive_ratio: float = 1000.0
    outlier_ratio: float = 5.0  # a token (channel) is an outlier at > this x its layer's median
    top_k: int = 16  # largest entries kept per layer (the top-1/2/3 plot uses the first 3)
    norm_eps: float = 1e-5  # eps of the LayerNorm/RMSNorm comparison on chosen tokens

    def __post_init__(self) -> None:
        from engine.errors import EngineError

        def refuse(name: str, accepted: str) -> EngineError:
            params = {"name": name, "value": getattr(self, name), "accepted": accepted}
            return EngineError(
                "dumps.bad_spec",
                params,
            )

        if self.axes not in DUMP_AXES:
            raise refuse("axes", ", ".join(DUMP_AXES))
        if self.layer_order not in DUMP_LAYER_ORDERS:
            raise refuse("layer_order", ", ".join(DUMP_LAYER_ORDERS))
        if not isinstance(self.stream, str) or not self.stream:
            raise refuse("stream", "auto or a template listed by the layout")
        for name in ("massive_abs", "massive_ratio", "outlier_ratio"):
            if not getattr(self, name) > 0.0:
                raise refuse(name, "a number > 0")
        if not 3 <= int(self.top_k) <= 1024:
            raise refuse("top_k", "3 to 1024")
        if not self.norm_eps >= 0.0:
            raise refuse("norm_eps", "a number >= 0")
