"""ui.url: the URL contract.  Renaming a parameter or changing its meaning breaks a test here,
not an instructor's saved link."""

from __future__ import annotations

import dataclasses

import pytest
from streamlit.testing.v1 import AppTest

from engine.config import TIMING_PASSES, TIMING_WIDTHS, LiveSpec, TimingSpec
from engine.config.depth import INIT_STDS
from engine.config.fields import accepts
from engine.errors import EngineError
from engine.norms.precision_presets import PRESET_NAMES
from ui.url.address_bar import describes
from ui.url.codec import PRESENT, Param, parse, query_string, serialize
from ui.url.pages import AXES, DEPTH, DUMPS, GEOMETRY, KERNELS, MODELS, PAGES, VECTOR_LAB

# Every page's parameters as links written today rely on them: key -> (kind, default, domain)
LESSON_IDS = (
    "why_normalize",
    "which_axis",
    "worked_example",
    "rmsnorm",
    "geometry",
    "batchnorm_sequences",
    "pre_post",
    "peri_olmo2",
    "deepnorm",
    "precision",
    "gemma_offset",
    "cost",
    "real_models",
)
PINNED = {
    "lessons": {
        "ls_lesson": ("choice", "why_normalize", LESSON_IDS),
        "ls_answers": (
            "choices",
            [],
            tuple(f"{lesson}.{option}" for lesson in LESSON_IDS for option in "abcd"),
        ),
        "ls_view": ("choice", "lesson", ("lesson", "sheet")),
        "ls_class": ("text", "", None),  # a class's join code
    },
    "classroom": {
        "cl_code": ("text", "", None),
        "cl_key": ("text", "", None),  # the instructor's private key
        "cl_lesson": ("choice", "why_normalize", LESSON_IDS),
    },
    "vector_lab": {
        "vl_source": ("choice", "text", ("text", "random", "preset")),
        "vl_text": ("text", "1, 2, 3, 4", None),
        "vl_preset": ("choice", "textbook_4096x100", PRESET_NAMES),
        "vl_d": ("int", 8, (1, 8192)),
        "vl_rows": ("int", 1, (1, 64)),
        "vl_dist": ("choice", "normal", ("normal", "uniform", "constant")),
        "vl_seed": ("int", 0, (0, 2**31 - 1)),
        "vl_shift": ("float", 0.0, (-1e6, 1e6)),
        "vl_scale": ("float", 1.0, (0.0, 1e6)),
        "vl_dtype": ("choice", "float32", ("float32", "float16", "bfloat16")),
        "vl_compute": ("choice", "float32", ("float32", "float16", "bfloat16")),
        "vl_norm": (
            "choice",
            "layernorm",
            ("layernorm", "rmsnorm", "batchnorm", "instancenorm", "groupnorm", "dyt"),
        ),
        "vl_eps": ("text", "1e-5", None),
        "vl_offset": ("float", 0.0, (-10.0, 10.0)),
        "vl_gamma": ("text", "1", None),
        "vl_beta": ("text", "0", None),
        "vl_groups": ("int", 2, (1, 8192)),
        "vl_alpha": ("float", 0.5, (0.0, 100.0)),
        "vl_row": ("int", 1, (1, 64)),
    },
    "depth": {
        # which section shows (and computes): a share link opens on the one it was taken on
        "dp_section": ("choice", "stack", ("stack", "sweep", "wiring", "training")),
        "dp_placements": (
            "choices",
            ["post", "pre"],
            ("post", "pre", "peri", "olmo2", "deepnorm", "pre_scaled", "none"),
        ),
        "dp_layers": ("int", 48, (1, 1000)),
        "dp_d": ("choice", 256, (64, 128, 256, 512, 1024, 2048, 4096)),
        "dp_tokens": ("int", 64, (1, 1024)),
        "dp_seed": ("int", 0, (0, 2**31 - 1)),
        "dp_sublayer": ("choice", "linear", ("linear", "mlp", "attention", "transformer")),
        "dp_norm": ("choice", "layernorm", ("layernorm", "rmsnorm", "dyt")),
        "dp_init": ("choice", "fan_in", ("fixed", "fan_in")),
        "dp_activation": ("choice", "gelu", ("gelu", "relu")),
        "dp_scaling": ("bool", False, None),
        "dp_final": ("bool", True, None),
        "dp_alpha": ("float", 0.5, (0.01, 10.0)),
        "dp_task": ("choice", "reverse", ("copy", "reverse", "modadd")),
        "dp_lr": ("choice", 3e-3, (3e-4, 1e-3, 2e-3, 3e-3, 5e-3, 1e-2)),
        "dp_steps": ("int", 300, (50, 1000)),
        "dp_train_layers": ("int", 6, (2, 8)),
        "dp_train_d": ("choice", 64, (64, 96, 128)),
        "dp_run_a": ("choice", "pre", ("pre", "post")),
        "dp_warmup_a": ("bool", False, None),
        "dp_run_b": ("choice", "post", ("pre", "post")),
        "dp_warmup_b": ("bool", False, None),
    },
    "kernels": {
        "kn_rows": ("choice", 1024, (256, 1024, 4096)),
        "kn_widths": ("choices", [256, 1024, 4096], (256, 512, 1024, 2048, 4096, 8192)),
        "kn_dtype": ("choice", "float32", ("float32", "bfloat16", "float16")),
        "kn_passes": ("choices", ["forward", "forward+backward"], ("forward", "forward+backward")),
        "kn_tokens": ("int", 4096, (1, 1 << 24)),
        "kn_d": ("int", 4096, (1, 1 << 18)),
        "kn_rdtype": ("choice", "bfloat16", ("float32", "bfloat16", "float16")),
    },
    "models": {
        "md_family": (
            "choice",
            "llama3",
            (
                "gpt2",
                "gpt3",
                "bert",
                "t5",
                "llama1",
                "llama2",
                "llama3",
                "mistral",
                "qwen2",
                "qwen3",
                "gemma",
                "gemma2",
                "gemma3",
                "olmo2",
                "deepseek_v3",
                "ngpt",
                "smollm2",
                "deepnet",
            ),
        ),
        "md_input": ("choice", "example", ("example", "paste")),
        "md_example": (
            "choice",
            "gpt3",
            (
                "gpt2",
                "gpt3",
                "bert",
                "t5",
                "llama2",
                "llama3",
                "mistral",
                "qwen2",
                "qwen3",
                "gemma2",
                "gemma3",
                "olmo2",
                "deepseek_v3",
                "smollm2",
            ),
        ),
        "md_dtype": ("choice", "config", ("config", "bfloat16", "float16", "float32")),
        "md_tokens": ("int", 1, (1, 1 << 24)),
    },
    "dumps": {
        # the page opens on the built-in example: real activations, no upload
        "du_source": ("choice", "example", ("upload", "example", "live", "folder")),
        "du_file": ("text", "", None),
        "du_axes": ("choice", "auto", ("auto", "Td", "BTd", "LTd", "LBTd")),
        "du_order": ("choice", "names", ("names", "file")),
        "du_massive_abs": ("float", 100.0, (1e-3, 1e9)),
        "du_massive_ratio": ("float", 1000.0, (1.0, 1e9)),
        "du_outlier": ("float", 5.0, (1.0, 1e6)),
        "du_eps": ("choice", 1e-5, (0.0, 1e-12, 1e-8, 1e-6, 1e-5, 1e-3)),
        "du_log": ("bool", True, None),
        "du_batch": ("int", 0, (0, 1 << 20)),
        "du_token_layer": ("int", -1, (-1, 1 << 20)),
        "du_token": ("int", 0, (0, 1 << 24)),
        "du_channel_layer": ("int", -1, (-1, 1 << 20)),
        "du_pair": ("int", -1, (-1, 1 << 20)),  # -1: the norm reading the largest entry
        "du_io_token": ("int", 0, (0, 1 << 24)),
        "du_prompt": ("text", "The capital of France is Paris, and the capital of Japan is", None),
    },
    "axes": {
        "ax_section": ("choice", "cells", ("cells", "batchnorm")),
        "ax_source": ("choice", "synthetic", ("synthetic", "padded", "example")),
        "ax_preset": (
            "choice",
            "gaussian",
            ("gaussian", "channel_offsets", "outlier_channel", "shifted_token"),
        ),
        "ax_batch": ("int", 4, (1, 64)),
        "ax_tokens": ("int", 16, (1, 512)),
        "ax_d": ("int", 32, (1, 1024)),
        "ax_seed": ("int", 0, (0, 2**31 - 1)),
        "ax_lengths": ("text", "", None),
        "ax_pad": ("float", 0.0, (-1e4, 1e4)),
        "ax_norm": (
            "choice",
            "layernorm",
            ("layernorm", "rmsnorm", "batchnorm", "instancenorm", "groupnorm", "dyt"),
        ),
        "ax_groups": ("int", 4, (1, 1024)),
        "ax_eps": ("choice", 1e-5, (0.0, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)),
        "ax_mask": ("bool", False, None),
        "ax_dtype": ("choice", "float32", ("float32", "float64")),
        "ax_cell_b": ("int", 1, (0, 63)),
        "ax_cell_t": ("int", 4, (0, 511)),
        "ax_cell_c": ("int", 10, (0, 1023)),
        "ax_sizes": ("choices", [1, 2, 4, 8, 16, 32], (1, 2, 4, 8, 16, 32, 64)),
        "ax_draws": ("int", 200, (2, 2000)),
        "ax_shift": ("float", 1.0, (-10.0, 10.0)),
        "ax_momentum": ("float", 0.1, (0.0, 1.0)),
        "ax_steps": ("int", 100, (1, 1000)),
        "ax_position": ("int", 15, (1, 511)),
        "ax_layer": ("int", 12, (0, 30)),
    },
    "geometry": {
        "ge_section": (
            "choice",
            "scene",
            ("scene", "vector", "eps", "affine", "dyt", "high", "real"),
        ),
        "ge_d": ("choice", 3, (1, 2, 3)),
        "ge_dist": ("choice", "normal", ("normal", "uniform", "constant")),
        "ge_count": ("int", 500, (1, 2000)),
        "ge_spread": (
            "choice",
            1.0,
            (0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0),
        ),
        "ge_shift": ("float", 0.0, (-10.0, 10.0)),
        "ge_seed": ("int", 0, (0, 2**31 - 1)),
        "ge_eps": ("choice", 1e-5, (0.0, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)),
        "ge_show": ("choices", ["layernorm", "rmsnorm"], ("layernorm", "rmsnorm", "dyt")),
        "ge_inputs": ("bool", True, None),
        "ge_lines": ("bool", True, None),
        "ge_vector": ("text", "1, 2, 6", None),
        "ge_gamma_x": ("float", 1.0, (-3.0, 3.0)),
        "ge_gamma_y": ("float", 1.0, (-3.0, 3.0)),
        "ge_gamma_z": ("float", 1.0, (-3.0, 3.0)),
        "ge_beta_x": ("float", 0.0, (-3.0, 3.0)),
        "ge_beta_y": ("float", 0.0, (-3.0, 3.0)),
        "ge_beta_z": ("float", 0.0, (-3.0, 3.0)),
        "ge_alpha": ("choice", 0.5, (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)),
        "ge_wide_d": ("choice", 768, (4, 16, 64, 256, 768, 2048, 4096, 8192)),
        "ge_view": ("choice", "pca", ("pca", "axes", "ones")),
        "ge_axis_a": ("int", 0, (0, 8191)),
        "ge_axis_b": ("int", 1, (0, 8191)),
        "ge_pair": ("int", 0, (0, 1 << 10)),
    },
    "experiments": {
        "ex_experiment": (
            "choice",
            "massive",
            ("massive", "swap", "freeze", "sweep", "fold", "lens", "half"),
        ),
        "ex_model": ("text", "", None),
        "ex_text": ("choice", "en", ("en", "zh")),
        "ex_prompt": ("text", "", None),
        "ex_tokens": ("int", 512, (2, 1024)),
        "ex_setting": ("choice", "zero", ("keep", "zero", "mean")),
        "ex_window": ("int", 64, (1, 512)),
        "ex_swap_block": ("text", "all", None),
        "ex_swap_final": ("bool", True, None),
        "ex_freeze_block": ("text", "all", None),
        "ex_freeze_final": ("bool", False, None),
        "ex_exempt": ("choice", "none", ("none", "first", "massive")),
        "ex_sweep_exempt": ("choice", "none", ("none", "first", "massive")),
        "ex_fold_final": ("bool", True, None),
        "ex_top_k": ("int", 5, (1, 20)),
        "ex_upcast": ("bool", False, None),
    },
}


def _domain(param: Param):
    if param.kind in ("choice", "choices"):
        return tuple(param.choices)
    if param.kind in ("int", "float"):
        return (param.low, param.high)
    return None


@pytest.mark.parametrize("page", sorted(PINNED))
def test_each_page_keeps_its_parameters_and_their_meaning(page):
    params = PAGES[page]
    actual = {p.key: (p.kind, p.default, _domain(p)) for p in params.params}
    assert actual == PINNED[page]


def test_one_prefix_per_page():
    prefixes = {"ls", "cl", "vl", "ax", "ge", "dp", "kn", "md", "du", "ex"}
    assert {p.prefix for p in PAGES.values()} == prefixes
    for page in PAGES.values():
        assert all(p.key.startswith(page.prefix + "_") for p in page.params)


@pytest.mark.parametrize("page", list(PAGES.values()), ids=list(PAGES))
def test_every_default_survives_a_round_trip(page):
    for param in page.params:
        value, refusal = parse(param, serialize(param, param.default))
        assert refusal is None and value == param.default, param.key


# A page's second parameter on a field, or its own default for it (said here, on purpose).
PAGE_DEFAULTS = {
    "vl_groups": 2,  # GroupNorm with one group would be LayerNorm
    "dp_placements": ["post", "pre"],  # the stack compares placements: one spec each
    "dp_run_a": "pre",  # the training lab's two runs: Pre-LN against Post-LN
    "ge_wide_d": 768,  # the high-dimension section's width (the scene's is ge_d)
    "du_prompt": "The capital of France is Paris, and the capital of Japan is",  # required
}
# Parameters offering less than their field accepts: a smaller range or menu.
NARROWER = {
    "vl_groups",  # up to the widest vector the Vector Lab takes
    "dp_layers",  # up to MAX_LAYERS, the simulator's limit
    "dp_tokens",  # up to MAX_TOKENS, likewise
    "ge_d",  # the scene draws d = 1, 2, 3
    "ge_shift",  # sliders over [-10, 10] and [-3, 3]
    *(f"ge_{name}_{axis}" for name in ("gamma", "beta") for axis in "xyz"),
}
# Typed text the page reads into a field itself: the link carries what was typed.
TYPED = {"vl_eps", "ax_lengths"}
# A tuple field's subset: the menu is the engine's table, the default the field's.
LISTED = {"kn_widths": TIMING_WIDTHS, "kn_passes": TIMING_PASSES}
BOUND = [p for page in PAGES.values() for p in page.params if p.spec is not None]


def _field_value(param: Param, value):
    """What the spec is given for a link's ``value``."""
    return INIT_STDS[value] if param.key == "dp_init" else value


def _field_accepts(param: Param, value) -> bool:
    required = {"prompt": "a prompt"} if param.spec is LiveSpec else {}
    try:
        param.spec(**{**required, param.field: _field_value(param, value)})
    except EngineError:
        return False
    return True


def _link_values(param: Param) -> list:
    """Every value the link accepts, at its ends: each choice, both bounds, the longest text."""
    if param.kind in ("choice", "choices"):
        return list(param.choices)
    if param.kind in ("int", "float"):
        return [param.low, param.high]
    if param.kind == "bool":
        return [True, False]
    return ["x" * param.max_chars]


@pytest.mark.parametrize("param", BOUND, ids=[p.key for p in BOUND])
def test_every_page_parameter_matches_its_spec_field(param):
    """A parameter made from an engine spec's field has the field's default and offers only
    what the field accepts: its range or menu is the field's, or a narrower one said above."""
    field = next(f for f in dataclasses.fields(param.spec) if f.name == param.field)
    if param.key in PAGE_DEFAULTS:
        assert param.default == PAGE_DEFAULTS[param.key]
    else:
        assert _field_value(param, param.default) == field.default
    for value in _link_values(param):
        assert _field_accepts(param, value), (param.key, value)
    rule = accepts(param.spec).get(param.field)
    if param.kind in ("int", "float"):
        same = (param.low, param.high) == (rule.low, rule.high)
    elif param.kind in ("choice", "choices") and param.key != "dp_init":
        same = param.choices == (rule.offered or rule.choices)
    elif param.kind == "text":
        same = param.max_chars == rule.high
    else:
        same = True
    assert same != (param.key in NARROWER), param.key


def test_no_page_parameter_restates_a_spec_field_by_hand():
    """A page's own parameter never stands for a field of a spec the page builds (it would
    carry its own default and range), except text typed for the page to read."""
    for page in PAGES.values():
        fields = {f.name for p in page.params if p.spec for f in dataclasses.fields(p.spec)}
        own = {p.key for p in page.params if p.spec is None}
        shadows = {key for key in own if key.removeprefix(page.prefix + "_") in fields}
        assert shadows <= TYPED | LISTED.keys(), shadows


@pytest.mark.parametrize("key", LISTED)
def test_a_tuple_fields_parameter_offers_the_engines_table_with_the_fields_default(key):
    param = KERNELS[key]
    assert param.choices == LISTED[key]
    assert tuple(param.default) == getattr(TimingSpec, key.removeprefix("kn_"))


def _bound_widgets():
    import streamlit as st

    st.number_input("L", min_value=1, max_value=100, value=48, key="dp_layers", bind="query-params")
    names = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"}
    st.selectbox("norm", list(names), format_func=names.get, key="vl_norm", bind="query-params")


def test_bind_is_not_used_because_it_drops_bad_values():
    """Streamlit's own URL binding (docs/architecture.md) drops a value out of range without a
    word, and reads display labels, not ids.  If this fails, Streamlit changed: look again at
    whether ``bind="query-params"`` can carry the URL contract."""
    at = AppTest.from_function(_bound_widgets)
    at.query_params.update({"dp_layers": "500", "vl_norm": "rmsnorm"})
    at.run()
    assert at.number_input(key="dp_layers").value == 48  # 500 dropped ...
    assert not at.warning and not at.error and "dp_layers" not in at.query_params  # unnamed
    assert at.selectbox(key="vl_norm").value == "layernorm"  # an id is not a label to bind


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("vl_norm", ["RMSNorm"], "rmsnorm"),  # older links wrote the display name
        ("vl_norm", ["rmsnorm"], "rmsnorm"),
        ("vl_dist", ["均匀 U(−√3, √3)"], "uniform"),  # a name written by the Chinese page
        ("vl_source", ["Random"], "random"),
        ("vl_source", ["随机生成"], "random"),
        ("vl_shift", ["100.0"], 100.0),
        ("vl_d", ["4096"], 4096),
    ],
)
def test_vector_lab_values_and_older_display_names_parse_to_ids(key, raw, expected):
    assert parse(VECTOR_LAB[key], raw) == (expected, None)


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("dp_sublayer", ["类注意力混合器"], "attention"),  # made in Chinese, opened in English
        ("dp_sublayer", ["attention-like mixer"], "attention"),
        ("dp_placements", ["Post-Norm", "Peri-Norm（三明治）"], ["post", "peri"]),
        ("dp_placements", ["post,pre,post"], ["post", "pre"]),
        ("dp_activation", ["RELU"], "relu"),  # str.upper labels of older links
        ("dp_lr", ["0.003"], 3e-3),
        ("dp_d", ["1024"], 1024),
        ("dp_final", ["false"], False),
        ("dp_run_b", ["Pre-Norm"], "pre"),
    ],
)
def test_depth_values_and_older_display_names_parse_to_ids(key, raw, expected):
    assert parse(DEPTH[key], raw) == (expected, None)


def test_models_values_parse_to_ids_and_older_input_names():
    assert parse(MODELS["md_family"], ["gemma2"]) == ("gemma2", None)
    assert parse(MODELS["md_input"], ["Paste a config.json"]) == ("paste", None)
    assert parse(MODELS["md_input"], ["粘贴 config.json"]) == ("paste", None)
    assert parse(MODELS["md_family"], ["Gemma 2"])[1] is not None  # ids only, never names


def test_dumps_values_parse_to_ids_and_the_eps_in_any_spelling():
    assert parse(DUMPS["du_source"], ["Upload a file"]) == ("upload", None)
    assert parse(DUMPS["du_source"], ["上传文件"]) == ("upload", None)
    assert parse(DUMPS["du_eps"], ["1e-5"]) == (1e-5, None)
    assert parse(DUMPS["du_eps"], ["0.00001"]) == (1e-5, None)
    assert query_string(DUMPS, {"du_eps": 1e-6, "du_axes": "BTd"}) == "du_axes=BTd&du_eps=1e-6"


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("ax_norm", ["GroupNorm"], "groupnorm"),  # a display name, as older links write them
        ("ax_source", ["带填充的句子"], "padded"),  # made in Chinese, opened in English
        ("ax_preset", ["One outlier channel"], "outlier_channel"),
        ("ax_eps", ["0.00001"], 1e-5),
        ("ax_eps", ["0"], 0.0),
        ("ax_lengths", ["16,12,8,4"], "16,12,8,4"),  # parsed and checked by the page
        ("ax_sizes", ["1,4,16"], [1, 4, 16]),
        ("ax_shift", ["-2.5"], -2.5),
    ],
)
def test_axes_values_parse_to_ids(key, raw, expected):
    assert parse(AXES[key], raw) == (expected, None)


@pytest.mark.parametrize(
    "key, raw",
    [
        ("ax_d", ["0"]),  # d = 0: refused with what is accepted
        ("ax_batch", ["65"]),
        ("ax_eps", ["0.5"]),  # not one of the offered ε
        ("ax_norm", ["layer"]),
        ("ax_sizes", ["3"]),
        ("ax_lengths", ["1," * 200]),
        ("ax_momentum", ["1.5"]),
    ],
)
def test_axes_bad_values_are_refused(key, raw):
    value, refusal = parse(AXES[key], raw)
    assert value is None and refusal.params["param"] == key


def test_kernels_passes_parse_from_ids_and_names():
    assert parse(KERNELS["kn_passes"], ["forward"]) == (["forward"], None)
    assert parse(KERNELS["kn_passes"], ["前向 + 反向"]) == (["forward+backward"], None)


@pytest.mark.parametrize(
    "key, raw",
    [
        ("dp_layers", ["100000"]),  # out of range: refused, never clamped
        ("dp_layers", ["-3"]),
        ("dp_layers", ["4.5"]),
        ("dp_layers", ["nan"]),
        ("dp_layers", ["1e400"]),
        ("dp_sublayer", ["conv"]),
        ("dp_placements", ["sideways"]),
        ("dp_final", ["yes"]),
        ("vl_norm", ["<script>"]),
        ("vl_eps", ["1" * 41]),
        ("kn_d", [""]),
        ("md_family", ["<script>"]),
        ("md_tokens", ["0"]),
        ("md_example", ["ngpt"]),  # a family without an example config
        ("du_massive_abs", ["0"]),  # the engine refuses a threshold <= 0
        ("du_token_layer", ["-2"]),  # -1 is "the middle layer"; nothing below
        ("du_eps", ["1e-7"]),
        ("du_source", ["file"]),
    ],
)
def test_bad_values_are_refused_with_the_parameter_and_what_is_accepted(key, raw):
    page = {"dp": DEPTH, "vl": VECTOR_LAB, "kn": KERNELS, "md": MODELS, "du": DUMPS}[
        key.split("_")[0]
    ]
    value, refusal = parse(page[key], raw)
    assert value is None and refusal is not None
    assert refusal.params["param"] == key
    assert refusal.params["accepted"] == page[key].accepted()


def test_refusals_say_what_is_accepted_in_words():
    assert DEPTH["dp_layers"].accepted() == "1 … 1000"
    assert DEPTH["dp_sublayer"].accepted() == "linear, mlp, attention, transformer"
    assert DEPTH["dp_final"].accepted() == "true, false"


def test_query_string_writes_ids_and_leaves_defaults_out():
    query = query_string(
        DEPTH, {"dp_placements": ["pre", "peri"], "dp_layers": 48, "dp_sublayer": "attention"}, "zh"
    )
    assert query == "lang=zh&dp_placements=pre&dp_placements=peri&dp_sublayer=attention"


def test_presentation_mode_is_an_app_wide_parameter_without_a_prefix():
    pinned = ("present", "choice", "off", ("off", "on", "results"))
    assert (PRESENT.key, PRESENT.kind, PRESENT.default, PRESENT.choices) == pinned
    assert query_string(DEPTH, {"dp_layers": 12}, "en", "on") == "lang=en&present=on&dp_layers=12"
    assert query_string(DEPTH, {"dp_layers": 12}, "en", "off") == "lang=en&dp_layers=12"


def test_lesson_progress_parses_from_a_link_and_refuses_unknown_answers():
    from ui.url.pages import LESSONS

    answers = ["worked_example.b", "rmsnorm.c"]
    assert parse(LESSONS["ls_answers"], answers) == (answers, None)
    assert parse(LESSONS["ls_answers"], ["worked_example.b,rmsnorm.c"]) == (answers, None)
    assert parse(LESSONS["ls_answers"], ["worked_example.e"])[1] is not None


def test_a_list_keeps_its_known_items_and_names_the_unknown_ones():
    """A stale lesson answer in a learner's link must not wipe the answers beside it."""
    from ui.url.pages import LESSONS

    value, refusal = parse(LESSONS["ls_answers"], ["worked_example.b,bogus.z,rmsnorm.c"])
    assert value == ["worked_example.b", "rmsnorm.c"]
    assert refusal.key == "partly_accepted" and refusal.params["value"] == "bogus.z"
    value, refusal = parse(DEPTH["dp_placements"], ["post", "sideways"])
    assert value == ["post"] and refusal.params["value"] == "sideways"
    assert parse(LESSONS["ls_lesson"], ["precision"]) == ("precision", None)
    assert parse(LESSONS["ls_lesson"], ["<script>"])[1] is not None


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("ge_eps", ["0.00001"], 1e-5),  # any spelling of an offered eps
        ("ge_spread", ["1e-3"], 1e-3),
        ("ge_d", ["2"], 2),
        ("ge_show", ["dyt,layernorm"], ["dyt", "layernorm"]),
        ("ge_show", ["RMSNorm"], ["rmsnorm"]),  # the display name, as other pages' links
        ("ge_dist", ["均匀 U(−√3, √3)"], "uniform"),
        ("ge_vector", ["1, 2"], "1, 2"),  # parsed and checked by the page
    ],
)
def test_geometry_values_parse_to_ids(key, raw, expected):
    assert parse(GEOMETRY[key], raw) == (expected, None)


@pytest.mark.parametrize(
    "key, raw",
    [
        ("ge_d", ["4"]),  # the scene draws d <= 3; wider vectors have ge_wide_d
        ("ge_wide_d", ["100"]),
        ("ge_eps", ["2e-5"]),
        ("ge_count", ["2001"]),
        ("ge_gamma_x", ["nan"]),
        ("ge_section", ["<script>"]),
        ("ge_axis_a", ["8192"]),
    ],
)
def test_geometry_bad_values_are_refused(key, raw):
    value, refusal = parse(GEOMETRY[key], raw)
    assert value is None and refusal.params["param"] == key


def test_a_geometry_link_for_a_vector_lab_row_leaves_defaults_out():
    query = query_string(GEOMETRY, {"ge_section": "vector", "ge_vector": "3, 1", "ge_eps": 1e-5})
    assert query == "ge_section=vector&ge_vector=3%2C+1"


def test_a_link_longer_than_any_the_app_writes_is_refused_whole():
    from ui.url.codec import MAX_URL_CHARS, link_refusal

    longest = "vl_text=" + "1" * (MAX_URL_CHARS - len("vl_text="))
    assert link_refusal(longest) is None and link_refusal("") is None
    refusal = link_refusal(longest + "1")
    assert refusal.key == "link_too_long"
    assert refusal.params == {"chars": f"{MAX_URL_CHARS + 1:,}", "limit": f"{MAX_URL_CHARS:,}"}


def test_a_list_longer_than_twice_its_choices_is_refused_before_its_items_are_read():
    param = DEPTH["dp_placements"]  # seven placements
    assert parse(param, ["post,pre,post,pre"]) == (["post", "pre"], None)  # repeats are kept
    value, refusal = parse(param, [",".join(["sideways"] * 48_000)])
    assert value is None and refusal.key == "too_many_items"
    assert refusal.params["items"] == "48,000" and refusal.params["limit"] == 14
    assert len(refusal.params["value"]) < 200  # what the notice repeats, not the whole list
    value, refusal = parse(param, ["post"] * 15)  # as repeated keys, the same
    assert value is None and refusal.key == "too_many_items"


def _longest_serialization(param):
    """The value of ``param`` whose link text is longest (a page can hold any accepted one)."""
    if param.kind == "choices":
        return list(param.choices)
    if param.kind == "text":
        return "中" * param.max_chars  # 9 characters in a link each
    if param.kind in ("int", "float"):
        candidates = [param.low, param.high]
        if param.kind == "float":
            candidates.append(param.low + (param.high - param.low) / 3)  # a long repr
        else:
            candidates = [int(c) for c in candidates]
    elif param.kind == "bool":
        candidates = [True, False]
    else:
        candidates = list(param.choices)
    return max(candidates, key=lambda value: len(",".join(serialize(param, value))))


@pytest.mark.parametrize("page", list(PAGES.values()), ids=list(PAGES))
def test_every_value_a_page_can_hold_comes_back_from_its_link(page):
    """What a page writes into its link, it reads back unchanged and unrefused: each
    parameter at either end of its range, every choice, every list whole, texts at their
    longest."""
    for param in page.params:
        values = [_longest_serialization(param)]
        if param.kind in ("int", "float"):
            values += [param.low, param.high]
        if param.kind == "choice":
            values += list(param.choices)
        for value in values:
            back, refusal = parse(param, serialize(param, value))
            assert refusal is None and back == value, param.key


@pytest.mark.parametrize("page", list(PAGES.values()), ids=list(PAGES))
def test_the_longest_link_a_page_can_write_is_not_refused_whole(page):
    """Every parameter at its longest, the texts left out (``url.publish`` leaves out
    any text that would take the link past the limit): fewer pairs than Streamlit reads."""
    from ui.url.codec import link_refusal

    values = {p.key: _longest_serialization(p) for p in page.params if p.kind != "text"}
    query = query_string(page, values, "zh", "results")
    assert link_refusal(query) is None
    assert query.count("&") + 1 < 100  # far from MAX_URL_PAIRS: room for any text


@pytest.mark.parametrize(
    ("share_open", "shown", "redraw"),
    [(False, (), False), (True, (), True), (False, ("kn_left_out",), True)],
)
def test_a_section_rerun_writes_the_url_and_asks_for_the_share_box_only_when_it_shows(
    share_open, shown, redraw
):
    def script(open_box, shown_left_out):
        import streamlit as st

        from ui.url import address_bar

        st.session_state["_url_published"] = ("kernels", tuple(shown_left_out))
        st.session_state["kn_d"] = 2048  # a section's widget changed since that run
        st.session_state["share_open"] = open_box
        st.session_state["redraw"] = address_bar.republish("en")

    at = AppTest.from_function(script, args=(share_open, shown)).run()
    assert at.query_params["kn_d"] == "2048"
    assert at.session_state["redraw"] is redraw


def test_an_address_with_defaults_written_out_already_describes_the_state():
    """A lesson's link writes defaults; rewriting it without them would add a history entry
    (Back would need two presses), so publish leaves such an address alone."""
    wanted = {"lang": ["en"], "vl_eps": ["0"]}
    written = {"lang": ["en"], "vl_text": ["1, 2, 3, 4"], "vl_norm": ["layernorm"], "vl_eps": ["0"]}
    assert describes(VECTOR_LAB, written, wanted)
    assert describes(VECTOR_LAB, wanted, wanted)
    assert not describes(VECTOR_LAB, {**written, "vl_norm": ["rmsnorm"]}, wanted)
    assert not describes(VECTOR_LAB, {**written, "vl_norm": ["sideways"]}, wanted)  # refused
    assert not describes(VECTOR_LAB, {**written, "lang": ["zh"]}, wanted)
    assert not describes(VECTOR_LAB, {**written, "nothing": ["1"]}, wanted)  # unknown: dropped
    assert not describes(VECTOR_LAB, {"lang": ["en"]}, wanted)  # eps 0 is not the default
    assert not describes(VECTOR_LAB, {**written, "vl_norm": ["LayerNorm"]}, wanted)  # old name
