"""The URL contract: every page's query parameters, in one place.

A share link is a public API: workshops are prepared days ahead from links, so each page's
parameters are listed here with their meaning, and ``tests/ui/test_share.py`` pins them.
Values are stable ids (``rmsnorm``, ``attention``), never display names, so a link made in
one language opens the same view in the other.  Links written before this contract (which
carried display names such as ``vl_norm=RMSNorm`` or ``dp_sublayer=类注意力混合器``, and the
Depth page's ``tl_*`` keys) still open their view.

The page pattern: ``seed(PAGE)`` before the widgets copies the URL into widget state (each
widget's ``key`` is its parameter's ``key``) and returns a message for every value it
refused; ``publish(PAGE)`` after the widgets writes the current values back, omitting
defaults.  The URL is untrusted input: a value out of range, unknown or malformed is
refused with a message naming the parameter and what is accepted; nothing is clamped or
dropped silently.  What a parameter is and how a value is parsed and written back lives in
``ui/url_contract.py`` (pure); the Streamlit glue in ``ui/url_state.py``.
"""

from __future__ import annotations

from engine.axes import limits as axes_limits
from engine.axes.small_batch import DEFAULT_BATCH_SIZES, DEFAULT_DRAWS
from engine.axes.train_eval import DEFAULT_MOMENTUM, DEFAULT_SHIFT, DEFAULT_STEPS
from engine.config import (
    ACTIVATIONS,
    AXES_DTYPES,
    AXES_PRESETS,
    AXES_SOURCES,
    COMPUTE_DTYPES,
    DEPTH_NORMS,
    DEPTH_PLACEMENTS,
    DEPTH_SUBLAYERS,
    DUMP_AXES,
    DUMP_LAYER_ORDERS,
    GEOMETRY_DISTRIBUTIONS,
    GEOMETRY_MAX_COUNT,
    GEOMETRY_MAX_D,
    NORM_KINDS,
    TRAIN_PLACEMENTS,
    TRAIN_TASKS,
    AxesSpec,
    DepthSpec,
    DumpSpec,
    TrainSpec,
)
from engine.depth.limits import MAX_LAYERS, MAX_TOKENS
from engine.models import catalog
from engine.norms.random_inputs import DISTRIBUTIONS
from engine.perf.timing import PASSES
from engine.training.limits import LEARNING_RATES, TRAIN_RANGES, TRAIN_WIDTHS
from ui.lessons.catalog import ANSWER_IDS, LESSON_IDS
from ui.url_contract import PageParams, Param
from ui.vector_input import MAX_ROWS, MAX_TEXT_CHARS, MAX_VECTOR_WIDTH

# app.py's default page: served at the app's root address, not at /vector_lab
DEFAULT_PAGE = "vector_lab"
STORAGE_DTYPES = ("float32", "float16", "bfloat16")  # what the Vector Lab stores and computes in
DEPTH_WIDTHS = (64, 128, 256, 512, 1024, 2048, 4096)
TIMING_ROWS = (256, 1024, 4096)
TIMING_WIDTHS = (256, 512, 1024, 2048, 4096, 8192)
TIMING_DTYPES = ("float32", "bfloat16", "float16")


# --- the pages' parameters --------------------------------------------------------------------

VECTOR_LAB = PageParams(
    "vector_lab",
    "vl",
    (
        Param("vl_source", "choice", "text", ("text", "random"), vocabulary="source"),
        Param("vl_text", "text", "1, 2, 3, 4", max_chars=MAX_TEXT_CHARS),
        Param("vl_d", "int", 8, low=1, high=MAX_VECTOR_WIDTH),
        Param("vl_rows", "int", 1, low=1, high=MAX_ROWS),
        Param("vl_dist", "choice", "normal", DISTRIBUTIONS, vocabulary="distribution"),
        Param("vl_seed", "int", 0, low=0, high=2**31 - 1),
        Param("vl_shift", "float", 0.0, low=-1e6, high=1e6),
        Param("vl_scale", "float", 1.0, low=0.0, high=1e6),
        Param("vl_dtype", "choice", "float32", STORAGE_DTYPES),
        Param("vl_compute", "choice", "float32", STORAGE_DTYPES),
        Param("vl_norm", "choice", "layernorm", NORM_KINDS, vocabulary="norm"),
        Param("vl_eps", "text", "1e-5", max_chars=40),
        Param("vl_offset", "float", 0.0, low=-10.0, high=10.0),
        Param("vl_gamma", "text", "1", max_chars=MAX_TEXT_CHARS // 4),
        Param("vl_beta", "text", "0", max_chars=MAX_TEXT_CHARS // 4),
        Param("vl_groups", "int", 2, low=1, high=MAX_VECTOR_WIDTH),
        Param("vl_alpha", "float", 0.5, low=0.0, high=100.0),
        Param("vl_row", "int", 1, low=1, high=MAX_ROWS),
    ),
)

_DEPTH = DepthSpec()
_TRAIN = TrainSpec()
# the stack simulated layer by layer | the L-sweep | wiring diagrams | the training lab
DEPTH_SECTIONS = ("stack", "sweep", "wiring", "training")
DEPTH = PageParams(
    "depth",
    "dp",
    (
        Param("dp_section", "choice", "stack", DEPTH_SECTIONS),
        Param(
            "dp_placements",
            "choices",
            ["post", "pre"],
            DEPTH_PLACEMENTS,
            vocabulary="placement",
        ),
        Param("dp_layers", "int", _DEPTH.layers, low=1, high=MAX_LAYERS),
        Param("dp_d", "choice", _DEPTH.d, DEPTH_WIDTHS),
        Param("dp_tokens", "int", _DEPTH.tokens, low=1, high=MAX_TOKENS),
        Param("dp_seed", "int", 0, low=0, high=2**31 - 1),
        Param("dp_sublayer", "choice", _DEPTH.sublayer, DEPTH_SUBLAYERS, vocabulary="sublayer"),
        Param("dp_norm", "choice", _DEPTH.norm, DEPTH_NORMS, vocabulary="norm"),
        # 1/sqrt(fan-in): Xiong et al.'s assumption, so the theory overlays apply by default
        Param("dp_init", "choice", "fan_in", ("fixed", "fan_in"), vocabulary="init"),
        Param("dp_activation", "choice", _DEPTH.activation, ACTIVATIONS, vocabulary="activation"),
        Param("dp_scaling", "bool", False),
        Param("dp_final", "bool", True),
        Param("dp_alpha", "float", _DEPTH.dyt_alpha, low=0.01, high=10.0),
        # the training lab
        Param(
            "dp_task", "choice", _TRAIN.task, TRAIN_TASKS, vocabulary="task", old_keys=("tl_task",)
        ),
        Param("dp_lr", "choice", _TRAIN.lr, LEARNING_RATES, old_keys=("tl_lr",)),
        Param(
            "dp_steps",
            "int",
            _TRAIN.steps,
            low=50,
            high=TRAIN_RANGES["steps"][1],
            old_keys=("tl_steps",),
        ),
        Param(
            "dp_train_layers",
            "int",
            _TRAIN.layers,
            low=2,
            high=TRAIN_RANGES["layers"][1],
            old_keys=("tl_layers",),
        ),
        Param("dp_train_d", "choice", _TRAIN.d, TRAIN_WIDTHS, old_keys=("tl_d",)),
        Param(
            "dp_run_a",
            "choice",
            "pre",
            TRAIN_PLACEMENTS,
            vocabulary="placement",
            old_keys=("tla_placement",),
        ),
        Param("dp_warmup_a", "bool", False, old_keys=("tla_warmup",)),
        Param(
            "dp_run_b",
            "choice",
            "post",
            TRAIN_PLACEMENTS,
            vocabulary="placement",
            old_keys=("tlb_placement",),
        ),
        Param("dp_warmup_b", "bool", False, old_keys=("tlb_warmup",)),
    ),
)

KERNELS = PageParams(
    "kernels",
    "kn",
    (
        Param("kn_rows", "choice", 1024, TIMING_ROWS),
        Param("kn_widths", "choices", [256, 1024, 4096], TIMING_WIDTHS),
        Param("kn_dtype", "choice", "float32", TIMING_DTYPES),
        Param("kn_passes", "choices", list(PASSES), PASSES, vocabulary="pass"),
        Param("kn_tokens", "int", 4096, low=1, high=1 << 24),
        Param("kn_d", "int", 4096, low=1, high=1 << 18),
        Param("kn_rdtype", "choice", "bfloat16", TIMING_DTYPES),
    ),
)

# The model catalog.  A pasted config.json is user data: it stays in the browser session and is
# never written to the URL (``md_input=paste`` opens an empty box to paste into).
_CATALOG = catalog()
MODEL_EXAMPLES = tuple(f.id for f in _CATALOG.families if f.example is not None)
MODEL_DTYPES = ("config", "bfloat16", "float16", "float32")  # "config": its torch_dtype
MODELS = PageParams(
    "models",
    "md",
    (
        Param("md_family", "choice", "llama3", _CATALOG.ids),
        Param("md_input", "choice", "example", ("example", "paste"), vocabulary="config_input"),
        # GPT-3 175B by default: seed 000's 4,743,168 norm parameters, 0.0027 % of all
        Param("md_example", "choice", "gpt3", MODEL_EXAMPLES),
        Param("md_dtype", "choice", "config", MODEL_DTYPES),
        Param("md_tokens", "int", 1, low=1, high=1 << 24),
    ),
)

# Activation dumps.  The uploaded file is user data: it stays in the browser session and is
# never named in the URL; these are the settings of how it is read and shown, so a link
# opens the same view of whatever dump its reader uploads.  The stream override names an
# entry of the file, so it stays out of the link too.  The page opens on the built-in
# example (real SmolLM2 activations, no upload); links written before it existed carry no
# du_source and open on it too, with their settings.
DUMP_SOURCES = ("upload", "example", "live")
DUMP_EPS = (0.0, 1e-12, 1e-8, 1e-6, 1e-5, 1e-3)  # ε of the LayerNorm/RMSNorm comparison
# The live model's given prompts (two English, two Chinese; the last three are also in the
# built-in example): results of these are shared between sessions; a prompt someone typed
# is theirs, and its results stay in their session.
LIVE_PROMPTS = (
    "The capital of France is Paris, and the capital of Japan is",
    "Normalization layers keep the residual stream of a deep Transformer from growing without "
    "bound as new layers are added on top.",
    "我喜欢周末读书和喝茶。",
    "为什么每一层都要先做归一化？",
)
MAX_PROMPT_CHARS = 1000  # a prompt in the link; the model's own cap is 256 tokens
_DUMP = DumpSpec()
DUMPS = PageParams(
    "dumps",
    "du",
    (
        Param("du_source", "choice", "example", DUMP_SOURCES, vocabulary="dump_source"),
        Param("du_axes", "choice", _DUMP.axes, DUMP_AXES),
        Param("du_order", "choice", _DUMP.layer_order, DUMP_LAYER_ORDERS, vocabulary="layer_order"),
        Param("du_massive_abs", "float", _DUMP.massive_abs, low=1e-3, high=1e9),
        Param("du_massive_ratio", "float", _DUMP.massive_ratio, low=1.0, high=1e9),
        Param("du_outlier", "float", _DUMP.outlier_ratio, low=1.0, high=1e6),
        Param("du_eps", "choice", _DUMP.norm_eps, DUMP_EPS),
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
        Param("du_prompt", "text", LIVE_PROMPTS[0], max_chars=MAX_PROMPT_CHARS),  # live model
    ),
)

_AXES = AxesSpec()
AXES_SECTIONS = ("cells", "batchnorm")  # which cells share statistics | BatchNorm's failures
AXES_EPS = (0.0, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)
AXES_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)  # the small-batch experiment's choices
MAX_LENGTHS_CHARS = 4 * axes_limits.MAX_BATCH  # "512," per sequence
AXES = PageParams(
    "axes",
    "ax",
    (
        Param("ax_section", "choice", "cells", AXES_SECTIONS),
        # the tensor
        Param("ax_source", "choice", _AXES.source, AXES_SOURCES, vocabulary="axes_source"),
        Param("ax_preset", "choice", _AXES.preset, AXES_PRESETS, vocabulary="axes_preset"),
        Param("ax_batch", "int", _AXES.batch, low=1, high=axes_limits.MAX_BATCH),
        Param("ax_tokens", "int", _AXES.tokens, low=1, high=axes_limits.MAX_TOKENS),
        Param("ax_d", "int", _AXES.d, low=1, high=axes_limits.MAX_CHANNELS),
        Param("ax_seed", "int", _AXES.seed, low=0, high=axes_limits.MAX_SEED),
        # "16,12,8,4": one length per sequence; empty = the engine's staircase
        Param("ax_lengths", "text", "", max_chars=MAX_LENGTHS_CHARS),
        Param(
            "ax_pad",
            "float",
            _AXES.pad_value,
            low=-axes_limits.MAX_ABS_PAD_VALUE,
            high=axes_limits.MAX_ABS_PAD_VALUE,
        ),
        # the norm
        Param("ax_norm", "choice", _AXES.kind, NORM_KINDS, vocabulary="norm"),
        Param("ax_groups", "int", _AXES.groups, low=1, high=axes_limits.MAX_CHANNELS),
        Param("ax_eps", "choice", _AXES.eps, AXES_EPS),
        Param("ax_mask", "bool", _AXES.mask_padding),
        Param("ax_dtype", "choice", _AXES.dtype, AXES_DTYPES),
        # the clicked cell (b, t, c)
        Param("ax_cell_b", "int", 1, low=0, high=axes_limits.MAX_BATCH - 1),
        Param("ax_cell_t", "int", 4, low=0, high=axes_limits.MAX_TOKENS - 1),
        Param("ax_cell_c", "int", 10, low=0, high=axes_limits.MAX_CHANNELS - 1),
        # BatchNorm's failures
        Param("ax_sizes", "choices", list(DEFAULT_BATCH_SIZES), AXES_BATCH_SIZES),
        Param("ax_draws", "int", DEFAULT_DRAWS, low=2, high=axes_limits.MAX_DRAWS),
        Param(
            "ax_shift",
            "float",
            DEFAULT_SHIFT,
            low=-axes_limits.MAX_SHIFT,
            high=axes_limits.MAX_SHIFT,
        ),
        Param("ax_momentum", "float", DEFAULT_MOMENTUM, low=0.0, high=1.0),
        Param("ax_steps", "int", DEFAULT_STEPS, low=1, high=axes_limits.MAX_TRAIN_STEPS),
        Param("ax_position", "int", _AXES.tokens - 1, low=1, high=axes_limits.MAX_TOKENS - 1),
        # the example source: the point of SmolLM2's stream sliced
        Param("ax_layer", "int", _AXES.layer, low=0, high=axes_limits.EXAMPLE_POINTS - 1),
    ),
)

# Lessons (ui/lessons/): where a learner is and what they answered ("<lesson>.<option>"), so a
# link resumes the course; "sheet" is the instructor's printable list of every lesson's link.
LESSON_VIEWS = ("lesson", "sheet")
LESSONS = PageParams(
    "lessons",
    "ls",
    (
        Param("ls_lesson", "choice", LESSON_IDS[0], LESSON_IDS),
        Param("ls_answers", "choices", [], ANSWER_IDS),
        Param("ls_view", "choice", "lesson", LESSON_VIEWS),
    ),
)


# Geometry.  The scene takes d = 1, 2 or 3; the high-dimension section its own width.  Input
# scale and eps are offered on log-spaced steps: what eps does shows near sqrt(eps).
GEOMETRY_SECTIONS = ("scene", "vector", "eps", "affine", "dyt", "high", "real")
GEOMETRY_SCENE_D = (1, 2, 3)
GEOMETRY_WIDE_D = (4, 16, 64, 256, 768, 2048, 4096, GEOMETRY_MAX_D)
GEOMETRY_SPREADS = (0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0)
GEOMETRY_EPS = (0.0, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)
GEOMETRY_ALPHAS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
GEOMETRY_SHOWN = ("layernorm", "rmsnorm", "dyt")
GEOMETRY_VIEWS = ("pca", "axes", "ones")
GEOMETRY_AFFINE = 3.0  # |gamma|, |beta| offered by the sliders (the engine takes up to 100)
GEOMETRY_SHIFT = 10.0
GEOMETRY = PageParams(
    "geometry",
    "ge",
    (
        Param("ge_section", "choice", "scene", GEOMETRY_SECTIONS),
        # the cloud of inputs
        Param("ge_d", "choice", 3, GEOMETRY_SCENE_D),
        Param("ge_dist", "choice", "normal", GEOMETRY_DISTRIBUTIONS, vocabulary="distribution"),
        Param("ge_count", "int", 500, low=1, high=GEOMETRY_MAX_COUNT),
        Param("ge_spread", "choice", 1.0, GEOMETRY_SPREADS),
        Param("ge_shift", "float", 0.0, low=-GEOMETRY_SHIFT, high=GEOMETRY_SHIFT),
        Param("ge_seed", "int", 0, low=0, high=2**31 - 1),
        Param("ge_eps", "choice", 1e-5, GEOMETRY_EPS),
        # what the scene draws
        Param("ge_show", "choices", ["layernorm", "rmsnorm"], GEOMETRY_SHOWN, vocabulary="norm"),
        Param("ge_inputs", "bool", True),
        Param("ge_lines", "bool", True),
        # one vector step by step ("1, 2, 6": mu = 3, off the all-ones axis)
        Param("ge_vector", "text", "1, 2, 6", max_chars=MAX_TEXT_CHARS),
        # gamma and beta per axis (the ellipsoid), DyT's alpha
        *(
            Param(f"ge_{name}_{axis}", "float", default, low=-GEOMETRY_AFFINE, high=GEOMETRY_AFFINE)
            for name, default in (("gamma", 1.0), ("beta", 0.0))
            for axis in ("x", "y", "z")
        ),
        Param("ge_alpha", "choice", 0.5, GEOMETRY_ALPHAS),
        # high dimension
        Param("ge_wide_d", "choice", 768, GEOMETRY_WIDE_D),
        Param("ge_view", "choice", "pca", GEOMETRY_VIEWS),
        Param("ge_axis_a", "int", 0, low=0, high=GEOMETRY_MAX_D - 1),
        Param("ge_axis_b", "int", 1, low=0, high=GEOMETRY_MAX_D - 1),
        # real activations: which norm pair of the shipped dump (in the dump's order)
        Param("ge_pair", "int", 0, low=0, high=1 << 10),
    ),
)

PAGES = {p.page: p for p in (LESSONS, VECTOR_LAB, AXES, GEOMETRY, DEPTH, KERNELS, MODELS, DUMPS)}
PREFIXES = {p.prefix for p in PAGES.values()} | {"tl", "tla", "tlb"}  # with the old Depth ones
assert set(COMPUTE_DTYPES) >= set(STORAGE_DTYPES)
