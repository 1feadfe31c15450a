"""The engine calls the pages make, each as a ``ui.compute.Job`` built from a frozen config.

Each function names the work, keys it by the spec it depends on, predicts its time from the
engine's cost model, and wraps the engine call so it reports progress and stops when asked.
Engine modules are imported inside the functions: a page pays only for the engine it uses.
One module per page; every job is re-exported here, so a page calls ``jobs.<name>``.
"""

from ui.jobs.axes import (  # noqa: F401
    axes_selection,
    axes_statistics,
    batch_of_one,
    causal_leak,
    padding_pollution,
    small_batch_noise,
    train_eval_gap,
)
from ui.jobs.depth import (  # noqa: F401
    depth_simulation,
    depth_sweep,
    training_run,
)
from ui.jobs.dumps import (  # noqa: F401
    dump_dyt_fit,
    dump_judged,
    dump_norm_step,
    dump_open,
    dump_report,
    dump_row,
    dump_story,
    dump_tables,
    dump_token_norms,
    live_capture,
    live_precision,
)
from ui.jobs.geometry import (  # noqa: F401
    geometry_dyt_sweep,
    geometry_eps_curve,
    geometry_high_dimension,
    geometry_plane_view,
    geometry_real_activations,
    geometry_scene,
    geometry_two_dimensions,
    geometry_vector_path,
)
from ui.jobs.kernels import (  # noqa: F401
    norm_timings,
)
from ui.jobs.models import (  # noqa: F401
    model_norm_budget,
    model_norm_cost,
)
from ui.jobs.vector_lab import (  # noqa: F401
    default_eps,
    precision_facts,
    vector_explanation,
)
