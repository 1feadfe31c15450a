"""Facts the precision story states, against torch: resolution of each dtype, where squares
and running sums break, PyTorch's and HF's default epsilons, F.layer_norm on a constant row.

Oracles: torch.finfo, numpy.finfo, PyTorch's own ops and modules, HF transformers' modules,
IEEE 754's published figures, Python's exact fractions.
"""

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.config import DTYPES
from engine.norms.precision_facts import (
    default_eps_table,
    resolution,
    running_sum_limit,
    spacing,
    square_overflow_threshold,
)

H = torch.float16


# --- constant rows through F.layer_norm -----------------------------------------------------


@dataclass(frozen=True)
class ConstantRowFact:
    """What ``F.layer_norm`` returns for a constant row: exactly 0 in real arithmetic.

    The residue matches, bit for bit in every case we tried, the rounding error of the float32
    product mu * rstd, i.e. an output formed as fma(x, rstd, -fl(mu * rstd)) with
    rstd = fl32(1/sqrt(eps)): ``fma_prediction`` is that value rounded to ``dtype``.
    """

    output: float  # F.layer_norm(x in dtype)[0] (every entry is the same)
    all_entries_equal: bool
    float32_output: float  # F.layer_norm(x in float32)[0]
    fma_prediction: float
    holds: bool  # output != 0: the residue exists here


def constant_row_layer_norm(value: float, d: int, dtype: str, eps: float) -> ConstantRowFact:
    """Run F.layer_norm on ``d`` copies of ``value`` stored in ``dtype``."""
    x = torch.full((d,), value, dtype=DTYPES[dtype])  # [d]
    y = F.layer_norm(x, (d,), eps=eps)  # [d]
    y32 = F.layer_norm(x.float(), (d,), eps=eps)  # [d]
    rstd = float(torch.rsqrt(torch.tensor(eps, dtype=torch.float32)))  # the op's rstd (var 0)
    product = float(torch.tensor(float(x[0]), dtype=torch.float32) * torch.tensor(rstd))  # fl32
    residue = Fraction(float(x[0])) * Fraction(rstd) - Fraction(product)  # exact rounding error
    prediction = float(torch.tensor(float(residue), dtype=torch.float64).to(x.dtype))
    return ConstantRowFact(
        output=float(y[0]),
        all_entries_equal=bool((y == y[0]).all()),
        float32_output=float(y32[0]),
        fma_prediction=prediction,
        holds=float(y[0]) != 0.0,
    )


def test_f_layer_norm_of_a_constant_float16_row_is_not_zero_on_this_cpu():
    fact = constant_row_layer_norm(100.0, 4096, "float16", 1e-5)
    assert fact.float32_output == 0.0 and fact.all_entries_equal
    assert fact.output == F.layer_norm(torch.full((4096,), 100.0, dtype=H), (4096,))[0].item()
    if torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"):
        assert fact.holds and fact.output == 2.0**-10  # 0.000977


@pytest.mark.parametrize("value", [100.0, 1000.0, 0.1, 3.0, -250.5, 12345.0])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_constant_row_residue_is_the_rounding_error_of_mu_times_rstd(value, dtype):
    fact = constant_row_layer_norm(value, 64, dtype, 1e-5)
    assert fact.output in (0.0, fact.fma_prediction)
    if torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"):
        assert fact.output == fact.fma_prediction


# --- resolution ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, bits, digits",
    [("float16", 11, 3.31), ("bfloat16", 8, 2.41), ("float32", 24, 7.22), ("float64", 53, 15.95)],
)
def test_significant_digits_are_log10_of_two_to_the_significand_bits(dtype, bits, digits):
    r = resolution(dtype)
    assert r.significand_bits == bits
    assert r.significant_digits == pytest.approx(digits, abs=0.005)  # IEEE 754's figures
    assert r.eps == 2.0 ** (1 - bits) == torch.finfo(getattr(torch, dtype)).eps


def test_float16_relative_spacing_is_about_1e_3_not_1e_4():
    f16, bf16 = resolution("float16"), resolution("bfloat16")
    assert 9e-4 < f16.eps < 1.1e-3 and 7e-3 < bf16.eps < 8e-3
    assert np.finfo(np.float16).nmant + 1 == f16.significand_bits  # numpy agrees


def test_spacing_and_thresholds_match_torch():
    assert spacing(2048.0, "float16") == 2.0 and spacing(1.0, "float16") == 2.0**-10
    threshold = square_overflow_threshold("float16")
    assert threshold == 256.0
    below = torch.nextafter(torch.tensor(256.0, dtype=H), torch.tensor(0.0, dtype=H))
    assert torch.isinf(torch.tensor(threshold, dtype=H).pow(2)) and torch.isfinite(below.pow(2))
    bf = square_overflow_threshold("bfloat16")
    assert torch.isinf(torch.tensor(bf, dtype=torch.bfloat16).pow(2))
    limit = running_sum_limit(1.0, "float16")
    assert (limit.value, limit.spacing) == (2048.0, 2.0)
    assert running_sum_limit(1.0, "bfloat16").value == 256.0


# --- default epsilons ------------------------------------------------------------------------


def _by_api(rows):
    return {row.api: row for row in rows}


def test_default_eps_table_matches_the_modules():
    rows = _by_api(default_eps_table("float16"))
    assert rows["torch.nn.LayerNorm"].effective == torch.nn.LayerNorm(4).eps == 1e-5
    assert rows["torch.nn.BatchNorm1d"].effective == torch.nn.BatchNorm1d(4).eps
    assert rows["torch.nn.GroupNorm"].effective == torch.nn.GroupNorm(2, 4).eps
    assert rows["torch.nn.InstanceNorm1d"].effective == torch.nn.InstanceNorm1d(4).eps
    assert torch.nn.RMSNorm(4).eps is None and rows["torch.nn.RMSNorm"].rule == "opmath_eps"
    # not float16's own 9.8e-4: the epsilon of float32, the type the op computes in
    assert rows["torch.nn.RMSNorm"].effective == torch.finfo(torch.float32).eps
    assert rows["torch.nn.functional.rms_norm"].rule == "opmath_eps"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_rms_norm_without_eps_uses_the_eps_the_table_states(dtype):
    x = torch.full((1, 4), 1e-3, dtype=dtype)  # mean square 1e-6: eps is visible
    rows = _by_api(default_eps_table(str(dtype).removeprefix("torch.")))
    default = F.rms_norm(x, (4,))
    assert torch.equal(default, F.rms_norm(x, (4,), eps=rows["torch.nn.RMSNorm"].effective))
    assert not torch.equal(default, F.rms_norm(x, (4,), eps=1e-5))
    if dtype in (torch.float16, torch.bfloat16):  # not the input dtype's own epsilon
        assert not torch.equal(default, F.rms_norm(x, (4,), eps=torch.finfo(dtype).eps))


def test_functional_defaults_behave_as_declared():
    x = torch.tensor([[1.0, 1.0, 1.0, 1.001]])  # sigma^2 ~ 2e-7: eps decides the output
    rows = _by_api(default_eps_table())
    declared = rows["torch.nn.functional.layer_norm"].effective
    assert torch.equal(F.layer_norm(x, (4,)), F.layer_norm(x, (4,), eps=declared))
    assert not torch.equal(F.layer_norm(x, (4,)), F.layer_norm(x, (4,), eps=1e-3))
    gn = rows["torch.nn.functional.group_norm"].effective
    assert torch.equal(F.group_norm(x, 1), F.group_norm(x, 1, eps=gn))


def test_hf_llama_default_eps():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    rows = _by_api(default_eps_table("float32"))
    assert rows["transformers LlamaRMSNorm"].effective == LlamaRMSNorm(4).variance_epsilon
    assert rows["transformers LlamaConfig.rms_norm_eps"].effective == LlamaConfig().rms_norm_eps
