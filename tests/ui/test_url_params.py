"""ui.url: the URL contract's parameters, pinned.  Each page's parameters with their kind,
default and domain, one prefix per page, and every default through a round trip.  Renaming a
parameter or changing its meaning breaks a test here, not an instructor's saved link."""

from __future__ import annotations

import pytest

from engine.norms.precision_presets import PRESET_NAMES
from ui.url.codec import Param, parse, serialize
from ui.url.pages import PAGES

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
        "du_section": (
            "choice",
            "stream",
            ("stream", "massive", "centering", "channels", "norms"),
        ),
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
