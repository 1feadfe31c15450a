"""The precision paths against PyTorch's own ops, and every preset's diagnosis.

Oracles: what PyTorch returns for the code each path names (written out here, not imported
from the engine), HF's LlamaRMSNorm, nn.LayerNorm / nn.RMSNorm modules, numpy's float16
accumulate (an independent running half sum), float64 by hand.
"""

import math
import string
import tomllib
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine import NormSpec, normalize
from engine.config import PrecisionSpec
from engine.errors import EngineError
from engine.norms import reference
from engine.norms.precision import PATHS, precision_story
from engine.norms.precision_paths import run_path, running_sum
from engine.norms.precision_presets import PRESETS, preset
from engine.norms.worked import explain_vectors
from tests.norms.preset_expectations import EXPECTED

H = torch.float16
EPS = 1e-5
KINDS = ("rmsnorm", "layernorm")


def _inputs() -> dict[str, torch.Tensor]:
    """Half-precision rows [T, d] covering ordinary values, big entries and the presets."""
    gen = torch.Generator().manual_seed(0)
    massive = torch.randn(3, 576, generator=gen)  # [3, 576]
    massive[1, 7] = 1200.0  # a massive activation: its square overflows float16
    return {
        "normal": torch.randn(4, 64, generator=gen).to(H),
        "wide_scale": (torch.randn(2, 1024, generator=gen) * 40).to(H),
        "massive": massive.to(H),
        **{p.name: torch.tensor(p.rows(), dtype=torch.float64).to(H) for p in PRESETS},
    }


INPUTS = _inputs()


def _same(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Bit-for-bit equal, NaN where the other is NaN, same dtype."""
    torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)


def _eps_for(name: str) -> float:
    return 0.0 if name == "zero_variance" else EPS


# --- each path is what PyTorch returns for the code it names -------------------------------


@pytest.mark.parametrize("name", list(INPUTS))
def test_upcast_rmsnorm_is_hf_llama_rmsnorm(name):
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    x = INPUTS[name]
    module = LlamaRMSNorm(x.shape[-1], eps=_eps_for(name)).to(H)  # weight = 1
    with torch.no_grad():
        expected = module(x)
    _same(run_path("upcast", x, "rmsnorm", _eps_for(name)).y, expected)


@pytest.mark.parametrize("name", list(INPUTS))
def test_upcast_layernorm_is_a_float32_layernorm_cast_back(name):
    x = INPUTS[name]
    module = torch.nn.LayerNorm(x.shape[-1], eps=_eps_for(name), elementwise_affine=False)
    expected = module(x.float()).to(H)
    _same(run_path("upcast", x, "layernorm", _eps_for(name)).y, expected)


@pytest.mark.parametrize("name", list(INPUTS))
def test_torch_half_rmsnorm_is_the_plain_half_expression(name):
    x, eps = INPUTS[name], _eps_for(name)
    expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    trace = run_path("torch_half", x, "rmsnorm", eps)
    _same(trace.y, expected)
    _same(trace.var, x.pow(2).mean(-1))


@pytest.mark.parametrize("name", list(INPUTS))
def test_torch_half_layernorm_is_the_plain_half_expression(name):
    x, eps = INPUTS[name], _eps_for(name)
    mean = x.mean(-1, keepdim=True)
    expected = (x - mean) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps)
    trace = run_path("torch_half", x, "layernorm", eps)
    _same(trace.y, expected)
    _same(trace.var, x.var(-1, unbiased=False))


@pytest.mark.parametrize("name", list(INPUTS))
def test_fused_half_is_f_layer_norm_and_f_rms_norm(name):
    x, eps = INPUTS[name], _eps_for(name)
    d = x.shape[-1]
    ln = run_path("fused_half", x, "layernorm", eps).y
    rms = run_path("fused_half", x, "rmsnorm", eps).y
    _same(ln, F.layer_norm(x, (d,), eps=eps))
    _same(rms, F.rms_norm(x, (d,), eps=eps))
    with torch.no_grad():
        _same(rms, torch.nn.RMSNorm(d, eps=eps).to(H)(x))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(INPUTS))
def test_sum_then_divide_is_the_reference_in_half_and_what_normalize_runs(kind, name):
    x, eps = INPUTS[name], _eps_for(name)
    formula = reference.layer_norm if kind == "layernorm" else reference.rms_norm
    ours = run_path("sum_then_divide_half", x, kind, eps).y
    _same(ours, formula(x, eps, compute_dtype=H).y)
    _same(ours, normalize(x, NormSpec(kind, eps=eps, compute_dtype="float16"), backend="torch").y)


def test_torch_reductions_of_half_round_once_but_a_stored_sum_overflows():
    # The facts the paths rest on, straight from PyTorch.
    x = torch.full((4096,), 100.0, dtype=H)
    assert x.pow(2).mean(-1).item() == 10000.0  # float32 accumulation, one rounding
    assert torch.isinf(x.pow(2).sum(-1)) and torch.isinf(x.sum(-1))  # 4.1e7 and 409600 stored
    assert torch.all(F.rms_norm(x, (4096,)) == 1.0)
    # 120000 never exists in half: the float32 accumulator holds it
    assert torch.tensor([60000.0, 60000.0, -60000.0], dtype=H).sum().item() == 60000.0
    assert torch.ones(4096, dtype=H).cumsum(0)[-1].item() == 4096.0  # cumsum cannot stall


# --- the running half sum ------------------------------------------------------------------


def test_running_sum_matches_numpy_float16_accumulate():
    gen = torch.Generator().manual_seed(1)
    terms = (torch.randn(5, 3000, generator=gen) * 30).to(H)
    expected = np.add.accumulate(terms.numpy(), axis=-1, dtype=np.float16)
    assert np.array_equal(running_sum(terms).numpy(), expected)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_running_sum_matches_one_scalar_addition_at_a_time(dtype):
    gen = torch.Generator().manual_seed(2)
    terms = (torch.rand(1, 700, generator=gen) * 3).to(dtype)
    total, expected = torch.zeros((), dtype=dtype), []
    for term in terms[0]:
        total = total + term  # a 0-d half tensor: rounded after every addition
        expected.append(float(total))
    assert running_sum(terms)[0].double().tolist() == expected


def test_running_float16_sum_of_ones_stalls_at_2048():
    partial = running_sum(torch.ones(1, 4096, dtype=H))[0]
    assert partial[2046].item() == 2047.0 and partial[2047].item() == 2048.0
    assert partial[2048].item() == 2048.0 and partial[-1].item() == 2048.0


# --- the presets -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", [p.name for p in PRESETS])
def test_every_preset_breaks_where_it_says(name, kind, path):
    chosen = preset(name)
    story = precision_story(chosen.rows(), PrecisionSpec(kind, chosen.eps, chosen.dtype))
    row = story.path(path).rows[0]
    expected = EXPECTED[name][kind][path]
    diagnosis = row.diagnosis
    found = (
        (None, None, None)
        if diagnosis is None
        else (diagnosis.failure, diagnosis.quantity, diagnosis.index)
    )
    assert row.outcome == expected.outcome
    assert found == (expected.failure, expected.quantity, expected.index)


def _story(name, kind):
    chosen = preset(name)
    return precision_story(chosen.rows(), PrecisionSpec(kind, chosen.eps, chosen.dtype))


def test_textbook_rmsnorm_overflow_states_value_and_limit():
    event = _story("textbook_4096x100", "rmsnorm").path("sum_then_divide_half").rows[0].diagnosis
    assert event.computed == math.inf and event.exact == 4096 * 100.0**2
    assert event.dtype == "float16" and event.dtype_max == 65504.0
    assert event.exact / event.dtype_max == pytest.approx(625.3, abs=0.05)
    running = _story("textbook_4096x100", "rmsnorm").path("naive_running_half").rows[0]
    assert running.diagnosis.exact == 7 * 10000.0  # the 7th partial sum, 70000 > 65504


def test_layernorm_sum_overflow_gives_infinite_mean_and_nan_outputs():
    path = _story("textbook_4096x100", "layernorm").path("sum_then_divide_half")
    assert path.rows[0].diagnosis.exact == 409600.0
    assert math.isinf(path.mean[0]) and np.isnan(path.y).all()


def test_layernorm_deviation_overflow_gives_infinite_variance_and_silent_zeros():
    story = _story("plus_minus_300", "layernorm")
    for name in ("sum_then_divide_half", "naive_running_half"):
        path = story.path(name)
        assert path.rows[0].diagnosis.exact == 300.0**2  # the deviation squared, mu = 0
        assert path.mean[0] == 0.0 and math.isinf(path.var[0]) and path.rstd[0] == 0.0
        assert (path.y == 0).all() and np.isfinite(path.y).all()
    # x.var in half: sigma^2 = 90000 is accumulated in float32, then stored as inf
    assert story.path("torch_half").rows[0].diagnosis.exact == pytest.approx(90000.0)
    assert np.allclose(story.path("fused_half").y, [[-1, 1, -1, 1]], atol=1e-3)


def test_massive_activation_squares_past_float16_in_plain_half_rmsnorm():
    story = _story("massive_activation", "rmsnorm")
    event = story.path("torch_half").rows[0].diagnosis
    assert (event.quantity, event.index, event.exact) == ("square", 0, 1e6)
    exact = story.exact.y[0, 0]  # 1000 / rms, about 63.9
    assert story.path("fused_half").y[0, 0] == pytest.approx(exact, rel=1e-3)
    assert story.path("upcast").y[0, 0] == pytest.approx(exact, rel=1e-3)


def test_ones_stall_reports_the_lost_term_and_spacing():
    for kind, quantity in (("rmsnorm", "sum_of_squares"), ("layernorm", "sum")):
        path = _story("ones_4096", kind).path("naive_running_half")
        event = path.rows[0].diagnosis
        assert (event.quantity, event.computed, event.exact) == (quantity, 2048.0, 2049.0)
        assert (event.term, event.spacing) == (1.0, 2.0)
    rms = _story("ones_4096", "rmsnorm").path("naive_running_half")
    assert rms.var[0] == 0.5 and rms.y[0, 0] == pytest.approx(math.sqrt(2), rel=1e-3)


def test_zero_variance_is_nan_in_every_path_and_precision():
    story = _story("zero_variance", "layernorm")
    for path in story.paths:
        assert path.rows[0].diagnosis.computed == 0.0
        assert np.isnan(path.y).all()
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.float64(0.0) * np.inf)  # the float64 oracle agrees: 0 * inf


def test_eps_below_float16_resolution_vanishes_in_half_but_not_in_float32():
    assert (torch.zeros((), dtype=H) + 1e-8).item() == 0.0  # PyTorch: 1e-8 rounds to 0
    story = precision_story(((5.0, 5.0, 5.0, 5.0),), PrecisionSpec("layernorm", 1e-8))
    assert story.path("torch_half").rows[0].diagnosis.failure == "zero_variance"
    assert story.path("upcast").rows[0].outcome == "ok"


def test_bfloat16_has_the_range_but_its_running_sum_stalls_early():
    story = precision_story(((100.0,) * 4096,), PrecisionSpec("rmsnorm", EPS, "bfloat16"))
    assert story.path("sum_then_divide_half").rows[0].outcome == "ok"  # 4.1e7 fits bf16
    event = story.path("naive_running_half").rows[0].diagnosis
    assert event.failure == "stall" and event.dtype == "bfloat16"


def test_several_rows_are_diagnosed_separately():
    rows = ((1.0, 2.0, 3.0, 4.0), (-300.0, 300.0, -300.0, 300.0))
    path = precision_story(rows, PrecisionSpec("layernorm")).path("naive_running_half")
    assert path.rows[0].diagnosis is None and path.rows[0].outcome == "ok"
    assert path.rows[1].diagnosis.quantity == "squared_deviation"


def test_exact_result_is_float64_by_hand():
    story = precision_story(((1.0, 2.0, 3.0, 4.0),), PrecisionSpec("rmsnorm", 0.0))
    assert story.exact.var[0] == 7.5
    assert story.exact.y[0].tolist() == pytest.approx([k / math.sqrt(7.5) for k in (1, 2, 3, 4)])


# --- refusals and the Vector Lab's explanation -----------------------------------------------


@pytest.mark.parametrize(
    "make, key",
    [
        (lambda: precision_story(((1.0, 2.0), (3.0,)), PrecisionSpec()), "precision.ragged_rows"),
        (lambda: precision_story((), PrecisionSpec()), "precision.empty_rows"),
        (lambda: precision_story(((1.0,) * 20000,), PrecisionSpec()), "precision.row_too_wide"),
        (
            lambda: precision_story(((1.0,) * 300,) * 4000, PrecisionSpec()),
            "precision.too_many_entries",
        ),
        (lambda: precision_story(((70000.0, 1.0),), PrecisionSpec()), "precision.input_overflow"),
        (lambda: precision_story(((math.nan, 1.0),), PrecisionSpec()), "precision.nonfinite_input"),
        (lambda: PrecisionSpec(kind="batchnorm"), "config.unknown_value"),
        (lambda: PrecisionSpec(dtype="float32"), "config.unknown_value"),
        (lambda: PrecisionSpec(eps=-1.0), "axes.real_out_of_range"),
        (lambda: preset("nope"), "precision.unknown_preset"),
    ],
)
def test_refusals_are_keyed_and_translated(make, key):
    with pytest.raises(EngineError) as caught:
        make()
    assert caught.value.key == key
    root = Path(__file__).resolve().parents[2] / "locales"
    for lang in ("en", "zh"):
        table = tomllib.loads((root / lang / "errors.toml").read_text())
        text = table[key.split(".")[0]][key.split(".")[1]]
        names = {name for _, name, _, _ in string.Formatter().parse(text) if name}
        assert names <= set(caught.value.params)
        text.format(**caught.value.params)


def test_explain_vectors_carries_the_story_for_half_precision():
    rows = ((100.0,) * 4096,)
    spec = NormSpec("rmsnorm", eps=1e-5, compute_dtype="float16")
    ex = explain_vectors(rows, spec, input_dtype="float16")
    assert ex.precision is not None and ex.precision.spec.dtype == "float16"
    stored = ex.precision.path("sum_then_divide_half").y[0]
    assert np.array_equal(stored, np.asarray(ex.outputs[0]))  # what the page's spec computes
    assert explain_vectors(((1.0, 2.0),), NormSpec("layernorm")).precision is None
    assert explain_vectors(((1.0, 2.0),), NormSpec("batchnorm"), "float16").precision is None


def test_an_eps_the_statistics_dtype_rounds_to_zero_is_no_eps_as_in_pytorch():
    """ε > 0 typed, 0 in the dtype the statistics are computed in: a constant row is 0/0, as
    PyTorch's own ops on tensors of that dtype compute it."""
    zeros = ((0.0, 0.0, 0.0, 0.0),)
    half = explain_vectors(
        zeros, NormSpec("layernorm", eps=1e-8, compute_dtype="float16"), "float16"
    )
    assert half.eps_computed == 0 and half.statistics_dtype == "float16" and half.zero_variance
    assert math.isnan(half.outputs[0][0])
    assert torch.zeros(4, dtype=torch.float16).var(unbiased=False) + 1e-8 == 0  # torch agrees
    single = explain_vectors(zeros, NormSpec("rmsnorm", eps=5e-324))
    assert single.eps_computed == 0 and single.zero_variance
    assert F.rms_norm(torch.zeros(1, 4), (4,), eps=5e-324).isnan().all()  # PyTorch's op too
    kept = explain_vectors(zeros, NormSpec("layernorm", eps=1e-8))  # float32 holds 1e-8
    assert kept.eps_computed == pytest.approx(1e-8) and not kept.zero_variance
    assert kept.outputs == ((0.0, 0.0, 0.0, 0.0),)


def test_a_running_sum_that_loses_what_float64_loses_too_is_no_stall():
    """[3e38, 1] in bfloat16: 3e38 + 1 is 3e38 in float64 as well, so the naive kernel's
    running sum lost nothing; its zeros come from (x₁ − μ)² overflowing, as the other paths
    say (the stall was named as the cause, "should give 3.004×10³⁸")."""
    assert float(torch.tensor(3e38, dtype=torch.bfloat16).double() + 1) == float(
        torch.tensor(3e38, dtype=torch.bfloat16).double()
    )
    story = precision_story([[3e38, 1.0]], PrecisionSpec("layernorm", EPS, "bfloat16"))
    event = story.path("naive_running_half").rows[0].diagnosis
    assert (event.failure, event.quantity) == ("overflow", "squared_deviation")


def test_outputs_that_overflow_are_explained_by_the_overflow_not_an_earlier_stall():
    """[60000, −60000, 30000, 1] in float16: the running sum stalls at 30,000 (μ 7,500 for
    7,500.25, harmless), then x₂ − μ = −67,500 is −∞ and the output NaN: the overflow is named."""
    h = torch.tensor([60000.0, -60000.0, 30000.0, 1.0], dtype=torch.float16)
    assert torch.isinf(h - h.mean()).sum() == 1  # the deviation itself, in float16
    story = precision_story([h.tolist()], PrecisionSpec("layernorm", EPS, "float16"))
    row = story.path("naive_running_half").rows[0]
    assert row.outcome == "nonfinite" and row.diagnosis.failure == "overflow"
    assert row.diagnosis.quantity != "sum"
