"""DumpSpec: how to read and judge an activation dump (engine/dumps/)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from engine.config.fields import Checked, param

DUMP_AXES = ("auto", "Td", "BTd", "LTd", "LBTd")  # the last axis is always d, the one before T
DUMP_LAYER_ORDERS = ("names", "file")
DUMP_EPS = (0.0, 1e-12, 1e-8, 1e-6, 1e-5, 1e-3)  # the ε a page offers for the comparison
THRESHOLDS = ("massive_abs", "massive_ratio", "outlier_ratio")  # judged after the reading


@dataclass(frozen=True)
class DumpSpec(Checked):
    """How to read an activation dump and which thresholds its diagnostics use.

    ``stream`` names the entries that form the residual stream: "auto", or one of the
    templates the layout inference lists (``Layout.streams``, e.g.
    ``"blocks.{i}.hook_resid_pre"``).  ``axes`` overrides which axes those entries have.
    """

    axes: str = param("auto", choices=DUMP_AXES)
    stream: str = param("auto", low=1)  # "auto" or a template from Layout.streams
    # "names": by the layer number in the names; "file": as stored
    layer_order: str = param("names", choices=DUMP_LAYER_ORDERS)
    # Sun et al. 2024 (arXiv:2402.17762): an activation is massive when |a| > 100 and
    # about 1,000x the median magnitude of its layer's hidden states.
    massive_abs: float = param(100.0, low=1e-3, high=1e9)
    massive_ratio: float = param(1000.0, low=1.0, high=1e9)
    # a token (channel) is an outlier at > this x its layer's median
    outlier_ratio: float = param(5.0, low=1.0, high=1e6)
    top_k: int = param(16, low=3, high=1024)  # largest entries kept per layer (the plot: 3)
    # eps of the LayerNorm/RMSNorm comparison on chosen tokens
    norm_eps: float = param(1e-5, low=0.0, offered=DUMP_EPS)

    @property
    def reading(self) -> DumpSpec:
        """This spec with the default ``THRESHOLDS``: what the data are read and reduced
        with (a new threshold reads nothing again: ``DumpReport.judged``)."""
        defaults = {f.name: f.default for f in fields(self) if f.name in THRESHOLDS}
        return replace(self, **defaults)
