"""Every page's query parameters, with their meaning: the public API of share links.

A link made in one language opens the same view in the other (values are stable ids);
``tests/ui/test_url_params.py`` pins the tables and ``tests/ui/test_url_spec_fields.py`` checks
each ``from_spec`` parameter against its engine field.
"""

from __future__ import annotations

from classroom import rules as class_rules
from engine.axes import limits as axes_limits
from engine.axes.small_batch import BATCH_SIZES_OFFERED, DEFAULT_BATCH_SIZES, DEFAULT_DRAWS
from engine.axes.train_eval import DEFAULT_MOMENTUM, DEFAULT_SHIFT, DEFAULT_STEPS
from engine.config import (
    COMPARED_RUNS,
    EXPERIMENTS,
    GEOMETRY_AXES,
    GEOMETRY_MAX_D,
    GEOMETRY_SCENE_MAX_D,
    GEOMETRY_WIDE_OPENING_D,
    GROUPNORM_OPENING_GROUPS,
    LIVE_PROMPTS,
    MAX_ROWS,
    MAX_VECTOR_WIDTH,
    STORAGE_DTYPES,
    TIMING_PASSES,
    TIMING_WIDTHS,
    AxesSpec,
    DepthSpec,
    DumpSpec,
    FoldSpec,
    FreezeSpec,
    FreezeSweepSpec,
    GeometrySpec,
    HalfSpec,
    LensSpec,
    LiveSpec,
    MassiveSpec,
    NormSpec,
    RandomSpec,
    RooflineSpec,
    SwapSpec,
    TextSpec,
    TimingSpec,
    TrainSpec,
)
from engine.config.depth import COMPARED_PLACEMENTS, INIT_STDS, MAX_DEPTH_TOKENS, MAX_LAYERS
from engine.config.fields import Accepts
from engine.dumps.local_files import MAX_ID_CHARS
from engine.models.calculator import COST_DTYPES, MAX_COST_TOKENS
from engine.models.loader import catalog
from engine.norms.kinds import PER_TOKEN_KINDS, ROW_KINDS
from engine.norms.precision_presets import PRESET_NAMES
from ui.formatting import format_eps
from ui.lessons.catalog import ANSWER_IDS, LESSON_IDS
from ui.url.codec import PageParams, Param, from_spec
from ui.vector_input import MAX_TEXT_CHARS

# --- the pages' parameters (``from_spec``: one made from an engine spec's field) ---------------

# app.py's default page: served at the app's root address, not at /vector_lab
DEFAULT_PAGE = "vector_lab"

VECTOR_LAB = PageParams(
    "vector_lab",
    "vl",
    (
        # "preset": a row of engine/norms/precision_presets.py named by its id (vl_preset), so
        # a link to a 4,096-wide preset stays short; a link that types its numbers still works
        Param("vl_source", "choice", "text", ("text", "random", "preset"), vocabulary="source"),
        Param("vl_text", "text", "1, 2, 3, 4", max_chars=MAX_TEXT_CHARS),
        Param("vl_preset", "choice", PRESET_NAMES[0], PRESET_NAMES),
        from_spec("vl_d", RandomSpec, "d"),
        from_spec("vl_rows", RandomSpec, "rows"),
        from_spec("vl_dist", RandomSpec, "distribution", vocabulary="distribution"),
        from_spec("vl_seed", RandomSpec, "seed"),
        from_spec("vl_shift", RandomSpec, "shift"),
        from_spec("vl_scale", RandomSpec, "scale"),
        Param("vl_dtype", "choice", STORAGE_DTYPES[0], STORAGE_DTYPES),  # float32 first
        from_spec("vl_compute", NormSpec, "compute_dtype"),
        from_spec("vl_norm", NormSpec, "kind", vocabulary="norm"),
        # typed (ui.vector_input.parse_eps): the field's default as people write it
        Param("vl_eps", "text", format_eps(NormSpec.eps), max_chars=40),
        from_spec("vl_offset", NormSpec, "offset"),
        Param("vl_gamma", "text", "1", max_chars=MAX_TEXT_CHARS // 4),
        Param("vl_beta", "text", "0", max_chars=MAX_TEXT_CHARS // 4),
        from_spec(
            "vl_groups", NormSpec, "groups", default=GROUPNORM_OPENING_GROUPS, high=MAX_VECTOR_WIDTH
        ),
        from_spec("vl_alpha", NormSpec, "alpha"),
        Param("vl_row", "int", 1, low=1, high=MAX_ROWS),
    ),
)

# the stack simulated layer by layer | the L-sweep | wiring diagrams | the training lab
DEPTH_SECTIONS = ("stack", "sweep", "wiring", "training")
_RUN = {"vocabulary": "placement"}
DEPTH = PageParams(
    "depth",
    "dp",
    (
        Param("dp_section", "choice", "stack", DEPTH_SECTIONS),
        from_spec(
            "dp_placements",
            DepthSpec,
            "placement",
            many=True,
            default=list(COMPARED_PLACEMENTS),
            vocabulary="placement",
        ),
        from_spec("dp_layers", DepthSpec, "layers", high=MAX_LAYERS),
        from_spec("dp_d", DepthSpec, "d"),
        from_spec("dp_tokens", DepthSpec, "tokens", high=MAX_DEPTH_TOKENS),
        from_spec("dp_seed", DepthSpec, "seed"),
        from_spec("dp_sublayer", DepthSpec, "sublayer", vocabulary="sublayer"),
        from_spec("dp_norm", DepthSpec, "norm", vocabulary="norm"),
        from_spec("dp_init", DepthSpec, "init_std", table=INIT_STDS, vocabulary="init"),
        from_spec("dp_activation", DepthSpec, "activation", vocabulary="activation"),
        from_spec("dp_scaling", DepthSpec, "residual_scaling"),
        from_spec("dp_final", DepthSpec, "final_norm"),
        from_spec("dp_alpha", DepthSpec, "dyt_alpha"),
        # the training lab (its keys were tl_*, tla_*, tlb_* before)
        from_spec("dp_task", TrainSpec, "task", vocabulary="task", old_keys=("tl_task",)),
        from_spec("dp_lr", TrainSpec, "lr", old_keys=("tl_lr",)),
        from_spec("dp_steps", TrainSpec, "steps", old_keys=("tl_steps",)),
        from_spec("dp_train_layers", TrainSpec, "layers", old_keys=("tl_layers",)),
        from_spec("dp_train_d", TrainSpec, "d", old_keys=("tl_d",)),
        from_spec(
            "dp_run_a",
            TrainSpec,
            "placement",
            default=COMPARED_RUNS[0],
            old_keys=("tla_placement",),
            **_RUN,
        ),
        from_spec("dp_warmup_a", TrainSpec, "warmup", old_keys=("tla_warmup",)),
        from_spec(
            "dp_run_b",
            TrainSpec,
            "placement",
            default=COMPARED_RUNS[1],
            old_keys=("tlb_placement",),
            **_RUN,
        ),
        from_spec("dp_warmup_b", TrainSpec, "warmup", old_keys=("tlb_warmup",)),
    ),
)

KERNELS = PageParams(
    "kernels",
    "kn",
    (
        from_spec("kn_rows", TimingSpec, "rows"),
        # a tuple field: its menu is the engine's table
        Param("kn_widths", "choices", list(TimingSpec.widths), TIMING_WIDTHS),
        from_spec("kn_dtype", TimingSpec, "dtype"),
        Param("kn_passes", "choices", list(TimingSpec.passes), TIMING_PASSES, vocabulary="pass"),
        from_spec("kn_tokens", RooflineSpec, "tokens"),
        from_spec("kn_d", RooflineSpec, "d"),
        from_spec("kn_rdtype", RooflineSpec, "dtype"),
    ),
)

# The model catalog.  A pasted config.json is user data: it stays in the browser session and is
# never written to the URL (``md_input=paste`` opens an empty box to paste into).
_CATALOG = catalog()
MODEL_EXAMPLES = tuple(f.id for f in _CATALOG.families if f.example is not None)
MODEL_DTYPES = ("config", *COST_DTYPES)  # "config": its torch_dtype
MODELS = PageParams(
    "models",
    "md",
    (
        Param("md_family", "choice", "llama3", _CATALOG.ids),
        Param("md_input", "choice", "example", ("example", "paste"), vocabulary="config_input"),
        # GPT-3 175B by default: seed 000's 4,743,168 norm parameters, 0.0027 % of all
        Param("md_example", "choice", "gpt3", MODEL_EXAMPLES),
        Param("md_dtype", "choice", "config", MODEL_DTYPES),
        Param("md_tokens", "int", 1, low=1, high=MAX_COST_TOKENS),  # norm_cost's bound
    ),
)

# Activation dumps.  The uploaded file is user data: it stays in the browser session and is
# never named in the URL; these are the settings of how it is read and shown, so a link
# opens the same view of whatever dump its reader uploads.  The stream override names an
# entry of the file, so it stays out of the link too.  The page opens on the built-in
# example (real SmolLM2 activations, no upload); links written before it existed carry no
# du_source and open on it too, with their settings.  "folder": a file in the folders the
# server's operator named (engine.dumps.local_files), offered only where there is one; its
# id is in the link (du_file), since the file is the server's, not a visitor's.
DUMP_SOURCES = ("upload", "example", "live", "folder")
# The report's sections: the residual stream | massive activations (and the live model's
# precision) | LayerNorm vs RMSNorm | channels | a norm's input and output.  A link from before
# the switch carries none; it opens the section its own settings are read in
# (ui/widgets/dumps.py, section).
DUMP_SECTIONS = ("stream", "massive", "centering", "channels", "norms")
DUMPS = PageParams(
    "dumps",
    "du",
    (
        Param("du_source", "choice", "example", DUMP_SOURCES, vocabulary="dump_source"),
        Param("du_file", "text", "", max_chars=MAX_ID_CHARS),  # local_files' id; "": the first
        from_spec("du_axes", DumpSpec, "axes"),
        from_spec("du_order", DumpSpec, "layer_order", vocabulary="layer_order"),
        from_spec("du_massive_abs", DumpSpec, "massive_abs"),
        from_spec("du_massive_ratio", DumpSpec, "massive_ratio"),
        from_spec("du_outlier", DumpSpec, "outlier_ratio"),
        from_spec("du_eps", DumpSpec, "norm_eps"),
        Param("du_section", "choice", "stream", DUMP_SECTIONS),
        Param("du_log", "bool", True),  # the RMS heatmap's colours on a log scale
        Param("du_batch", "int", 0, low=0, high=1 << 20),  # the sequence shown, when B > 1
        # -1: the middle layer (the dump's depth is not known before it is read)
        Param("du_token_layer", "int", -1, low=-1, high=1 << 20),
        Param("du_token", "int", 0, low=0, high=1 << 24),
        Param("du_channel_layer", "int", -1, low=-1, high=1 << 20),
        # the norm pair looked at (input vs output, DyT fit); -1: the norm that reads the
        # dump's largest entry (links before it existed meant pair 0 by leaving it out)
        Param("du_pair", "int", -1, low=-1, high=1 << 20),
        Param("du_io_token", "int", 0, low=0, high=1 << 24),  # its token (in du_batch)
        from_spec("du_prompt", LiveSpec, "prompt", default=LIVE_PROMPTS[0]),  # the live model
    ),
)

AXES_SECTIONS = ("cells", "batchnorm")  # which cells share statistics | BatchNorm's failures
_TOKENS = AxesSpec().tokens


def _range(rule: Accepts) -> dict:
    """An engine argument's range as a parameter's bounds."""
    return {"low": rule.low, "high": rule.high, "positive": rule.positive}


AXES = PageParams(
    "axes",
    "ax",
    (
        Param("ax_section", "choice", "cells", AXES_SECTIONS),
        # the tensor
        from_spec("ax_source", AxesSpec, "source", vocabulary="axes_source"),
        from_spec("ax_preset", AxesSpec, "preset", vocabulary="axes_preset"),
        from_spec("ax_batch", AxesSpec, "batch"),
        from_spec("ax_tokens", AxesSpec, "tokens"),
        from_spec("ax_d", AxesSpec, "d"),
        from_spec("ax_seed", AxesSpec, "seed"),
        # "16,12,8,4": one length per sequence ("512," each); empty = the engine's staircase
        # B lengths of at most T written with ", ": 64 × "512, " is 320 characters
        Param("ax_lengths", "text", "", max_chars=8 * axes_limits.MAX_BATCH),
        from_spec("ax_pad", AxesSpec, "pad_value"),
        # the norm
        from_spec("ax_norm", AxesSpec, "kind", vocabulary="norm"),
        from_spec("ax_groups", AxesSpec, "groups"),
        from_spec("ax_eps", AxesSpec, "eps"),
        from_spec("ax_mask", AxesSpec, "mask_padding"),
        from_spec("ax_dtype", AxesSpec, "dtype"),
        # the clicked cell (b, t, c)
        Param("ax_cell_b", "int", 1, low=0, high=axes_limits.MAX_BATCH - 1),
        Param("ax_cell_t", "int", 4, low=0, high=axes_limits.MAX_TOKENS - 1),
        Param("ax_cell_c", "int", 10, low=0, high=axes_limits.MAX_CHANNELS - 1),
        # BatchNorm's failures: the arguments of engine/axes/{small_batch,train_eval,causal_leak}.py
        Param("ax_sizes", "choices", list(DEFAULT_BATCH_SIZES), BATCH_SIZES_OFFERED),
        Param("ax_draws", "int", DEFAULT_DRAWS, **_range(axes_limits.DRAWS)),
        Param("ax_shift", "float", DEFAULT_SHIFT, **_range(axes_limits.SHIFT)),
        Param("ax_momentum", "float", DEFAULT_MOMENTUM, **_range(axes_limits.MOMENTUM)),
        Param("ax_steps", "int", DEFAULT_STEPS, **_range(axes_limits.TRAIN_STEPS)),
        Param(
            "ax_position",
            "int",
            _TOKENS - 1,
            low=axes_limits.LEAK_POSITION_LOW,
            high=axes_limits.MAX_TOKENS - 1,
        ),
        # the example source: the point of SmolLM2's stream sliced
        from_spec("ax_layer", AxesSpec, "layer"),
    ),
)

# Lessons (ui/lessons/): where a learner is and what they answered ("<lesson>.<option>"), so a
# link resumes the course; "sheet" is the instructor's printable list of every lesson's link.
LESSON_VIEWS = ("lesson", "sheet")
LESSONS_PAGE = PageParams(
    "lessons",
    "ls",
    (
        Param("ls_lesson", "choice", LESSON_IDS[0], LESSON_IDS),
        Param("ls_answers", "choices", [], ANSWER_IDS),
        Param("ls_view", "choice", "lesson", LESSON_VIEWS),
        # a class's join code: this browser's committed predictions are counted in it
        Param("ls_class", "text", "", max_chars=4 * class_rules.CODE_LENGTH),
    ),
)

# Class mode's instructor page: the class (its code and the instructor's private key, the
# "instructor link") and the lesson whose answers it shows.  The key is read from a link but
# left out of the address bar and out of every shared link (the session keeps it, and the
# browser in a cookie): a room that sees the projector never reads it.
SECRET_KEYS = ("cl_key",)
# Not undone by the browser's Back (which undoes a setting: ``address_bar.seed``): a committed
# prediction stays committed, and a class stays joined or held.
KEPT_ON_BACK = frozenset({"ls_answers", "ls_class", "cl_code", "cl_key"})
CLASSROOM = PageParams(
    "classroom",
    "cl",
    (
        Param("cl_code", "text", "", max_chars=4 * class_rules.CODE_LENGTH),
        Param("cl_key", "text", "", max_chars=class_rules.TOKEN_CHARS),
        Param("cl_lesson", "choice", LESSON_IDS[0], LESSON_IDS),
    ),
)

# Geometry.  The scene takes d = 1, 2 or 3; the high-dimension section its own width.
GEOMETRY_SECTIONS = ("scene", "vector", "eps", "affine", "dyt", "high", "real")
GEOMETRY_SHOWN = PER_TOKEN_KINDS  # the norms the scene draws
GEOMETRY_VIEWS = ("pca", "axes", "ones")
GEOMETRY = PageParams(
    "geometry",
    "ge",
    (
        Param("ge_section", "choice", "scene", GEOMETRY_SECTIONS),
        # the cloud of inputs
        from_spec("ge_d", GeometrySpec, "d", choices=range(1, GEOMETRY_SCENE_MAX_D + 1)),
        from_spec("ge_dist", GeometrySpec, "distribution", vocabulary="distribution"),
        from_spec("ge_count", GeometrySpec, "count"),
        from_spec("ge_spread", GeometrySpec, "spread"),
        from_spec("ge_shift", GeometrySpec, "shift"),
        from_spec("ge_seed", GeometrySpec, "seed"),
        from_spec("ge_eps", GeometrySpec, "eps"),
        # what the scene draws
        Param("ge_show", "choices", list(ROW_KINDS), GEOMETRY_SHOWN, vocabulary="norm"),
        Param("ge_inputs", "bool", True),
        Param("ge_lines", "bool", True),
        # one vector step by step ("1, 2, 6": mu = 3, off the all-ones axis)
        Param("ge_vector", "text", "1, 2, 6", max_chars=MAX_TEXT_CHARS),
        # gamma and beta per axis (the ellipsoid), DyT's alpha
        *(
            from_spec(f"ge_{name}_{axis}", GeometrySpec, f"{name}_{axis}")
            for name in ("gamma", "beta")
            for axis in GEOMETRY_AXES
        ),
        from_spec("ge_alpha", GeometrySpec, "dyt_alpha"),
        # high dimension
        from_spec("ge_wide_d", GeometrySpec, "d", default=GEOMETRY_WIDE_OPENING_D),
        Param("ge_view", "choice", "pca", GEOMETRY_VIEWS),
        Param("ge_axis_a", "int", 0, low=0, high=GEOMETRY_MAX_D - 1),
        Param("ge_axis_b", "int", 1, low=0, high=GEOMETRY_MAX_D - 1),
        # real activations: which norm pair of the shipped dump (in the dump's order)
        Param("ge_pair", "int", 0, low=0, high=1 << 10),
    ),
)

# Experiments on a real model.  A spec's blocks are a tuple the model's depth bounds; the page
# takes them as text (ui/widgets/experiments.py ``parse_blocks``: "all", or numbers and
# ranges such as "0-5, 12"; "-1", what links before sets existed wrote, is "all"), checked
# against the model when it runs.
_BLOCKS = {"max_chars": 200}
EXPERIMENTS_PAGE = PageParams(
    "experiments",
    "ex",
    (
        Param("ex_experiment", "choice", EXPERIMENTS[0], EXPERIMENTS),
        # a model the operator's folders hold (engine.dumps.local_files' id); "": the built-in
        Param("ex_model", "text", "", max_chars=MAX_ID_CHARS),
        from_spec("ex_text", TextSpec, "text"),
        from_spec("ex_prompt", TextSpec, "prompt"),
        from_spec("ex_tokens", TextSpec, "max_tokens"),
        from_spec("ex_setting", MassiveSpec, "setting"),
        from_spec("ex_window", MassiveSpec, "window"),
        Param("ex_swap_block", "text", "all", **_BLOCKS),  # SwapSpec.layers
        from_spec("ex_swap_final", SwapSpec, "final"),
        Param("ex_freeze_block", "text", "all", **_BLOCKS),  # FreezeSpec.layers
        from_spec("ex_freeze_final", FreezeSpec, "final"),
        from_spec("ex_exempt", FreezeSpec, "exempt"),
        from_spec("ex_sweep_exempt", FreezeSweepSpec, "exempt"),
        from_spec("ex_fold_final", FoldSpec, "final"),
        from_spec("ex_top_k", LensSpec, "top_k"),
        from_spec("ex_upcast", HalfSpec, "upcast"),
    ),
)

PAGES = {
    p.page: p
    for p in (
        LESSONS_PAGE,
        CLASSROOM,
        VECTOR_LAB,
        AXES,
        GEOMETRY,
        DEPTH,
        KERNELS,
        MODELS,
        DUMPS,
        EXPERIMENTS_PAGE,
    )
}
PREFIXES = {p.prefix for p in PAGES.values()} | {"tl", "tla", "tlb"}  # with the old Depth ones
