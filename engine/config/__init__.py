"""Frozen configuration dataclasses shared by the engine, the pages and share links.

Every config is ``frozen=True``: hashable (so results can be keyed on it) and made of plain
scalars (so ``ui/url/`` can write it to a URL and read it back); what each field accepts
is its metadata (``fields.py``).  Each domain's spec lives in its own module here; this
package re-exports the specs and the names other packages read.
"""

from engine.config.axes import AxesSpec  # noqa: F401
from engine.config.capture import (  # noqa: F401
    CAPTURE_DTYPES,
    LIVE_PROMPTS,
    LiveSpec,
)
from engine.config.depth import (  # noqa: F401
    DEPTH_NORMS,
    DepthSpec,
)
from engine.config.dumps import (  # noqa: F401
    DUMP_AXES,
    DUMP_LAYER_ORDERS,
    DumpSpec,
)
from engine.config.experiments import (  # noqa: F401
    EXPERIMENT_SPECS,
    EXPERIMENT_TEXTS,
    EXPERIMENTS,
    LENS_DEFAULT_POSITIONS,
    LENS_VARIANTS,
    FoldSpec,
    FreezeSpec,
    FreezeSweepSpec,
    HalfSpec,
    LensSpec,
    MassiveSpec,
    SwapSpec,
    TextSpec,
)
from engine.config.geometry import (  # noqa: F401
    GEOMETRY_AXES,
    GEOMETRY_MAX_ALPHA,
    GEOMETRY_MAX_D,
    GEOMETRY_MAX_EPS,
    GEOMETRY_SCENE_MAX_D,
    GEOMETRY_WIDE_OPENING_D,
    GeometrySpec,
)
from engine.config.kernels import (  # noqa: F401
    TIMING_PASSES,
    TIMING_WIDTHS,
    RooflineSpec,
    TimingSpec,
)
from engine.config.models import ModelShape  # noqa: F401
from engine.config.norms import (  # noqa: F401
    DTYPES,
    GROUPNORM_OPENING_GROUPS,
    MAX_ROWS,
    MAX_VECTOR_WIDTH,
    NORM_KINDS,
    STORAGE_DTYPES,
    NormSpec,
    RandomSpec,
)
from engine.config.precision import (  # noqa: F401
    HALF_DIVERGENCE,
    HALF_DTYPES,
    PRECISION_KINDS,
    PrecisionSpec,
)
from engine.config.training import (  # noqa: F401
    COMPARED_RUNS,
    TrainSpec,
)
