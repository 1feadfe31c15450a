"""ui.text.vector_lab_precision: the precision section's sentences (the comparison's notes:
test_text_vector_lab_compare.py).

Every preset of engine/norms/precision_presets.py is rendered for both kinds in both languages
(a missing parameter raises KeyError in ``translate``); the quoted numbers are checked against
PyTorch and IEEE 754 directly, not against the engine that computed them.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from engine import NormSpec
from engine.config import PrecisionSpec
from engine.norms.precision import precision_story
from engine.norms.precision_facts import default_eps_table, resolution
from engine.norms.precision_presets import PRESETS, preset
from engine.norms.worked import explain_vectors
from tests.plain_text import plain
from ui.formatting import format_eps
from ui.i18n import translate
from ui.text.vector_lab_compare import comparison_notes
from ui.text.vector_lab_precision import (
    DtypeFacts,
    constant_row_note,
    default_eps_sentence,
    overview,
    path_messages,
    steps_path,
    summary,
)


def _story(name: str, kind: str):
    p = preset(name)
    return precision_story(p.rows(), PrecisionSpec(kind, p.eps, p.dtype))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", ["rmsnorm", "layernorm"])
@pytest.mark.parametrize("name", [p.name for p in PRESETS])
def test_every_preset_renders_a_message_for_every_path(name, kind, lang):
    story = _story(name, kind)
    messages = path_messages(story, 0, lang)
    assert [m.path for m in messages] == [p.path for p in story.paths]
    for message, result in zip(messages, story.paths):
        assert message.text and "{" not in message.text and message.code == result.code
        expected = {"ok": "ok", "wrong": "warning"}.get(result.rows[0].outcome, "error")
        assert message.level == expected
    names, columns = overview(story, 0, lang, "upcast")
    assert len(names) == len(story.paths) + 1 and "←" in names[1]
    assert all(len(column) == len(names) for column in columns.values())


def _text(name: str, kind: str, path: str) -> str:
    story = _story(name, kind)
    return plain(next(m.text for m in path_messages(story, 0, "en") if m.path == path))


def test_layernorm_sum_overflow_says_mu_is_infinite_and_outputs_nan():
    x = torch.full((4096,), 100.0, dtype=torch.float16)
    assert torch.isinf(x.sum())  # the oracle: the sum stored in half is inf
    text = _text("textbook_4096x100", "layernorm", "sum_then_divide_half")
    assert "Σxᵢ is stored in float16: the sum 4.096×10⁵" in text
    assert "So μ = ∞: every xᵢ − μ is infinite, and the outputs are NaN (4,096 of 4,096)" in text


def test_squared_deviation_overflow_is_silent_and_names_the_deviation():
    x = torch.tensor([-300.0, 300.0, -300.0, 300.0], dtype=torch.float16)
    xc = x - x.sum() / 4
    assert torch.isinf(xc * xc).all()  # the oracle: (x - mu)^2 stored in half
    text = _text("plus_minus_300", "layernorm", "sum_then_divide_half")
    assert "(x₁ − μ)² = (−300)² = 90,000" in text and "the deviation x₁ − μ (μ = 0)" in text
    assert "every output (xᵢ − μ) · 0 is 0" in text and "are NaN" not in text


def test_pytorch_half_ops_survive_the_textbook_and_fail_on_one_large_entry():
    x = torch.full((1, 4096), 100.0, dtype=torch.float16)
    assert float(x.pow(2).mean(-1)) == 10000.0  # float32 accumulation, rounded once
    assert "Nothing overflowed or stalled" in _text("textbook_4096x100", "rmsnorm", "torch_half")
    spike = torch.tensor([[1000.0, -1.0, 1.0, -1.0]], dtype=torch.float16)
    assert torch.isinf(spike.pow(2)[0, 0])
    text = _text("massive_activation", "rmsnorm", "torch_half")
    assert "x₁² = (1,000)² = 10⁶ is beyond float16's largest finite number 65,504" in text


def test_running_sum_of_ones_stalls_where_float16_spacing_is_two():
    assert float(torch.tensor(2048.0, dtype=torch.float16) + 1) == 2048.0  # the oracle
    text = _text("ones_4096", "rmsnorm", "naive_running_half")
    assert "stalls at 2,048: adding term 2,049 (1) to the stored 2,048 should give 2,049" in text
    assert "is 2,048 + 2" in text and "RMS² = 0.5 instead of 1" in text
    assert "already off" not in text  # every partial sum up to 2048 was exact


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_stall_after_earlier_roundings_states_the_stored_and_the_exact_sum(lang):
    """A bfloat16 running sum of 100s: roundings carry it to 32768 by term 278, whose exact
    partial sum is only 27800; the sentence must not read "stalls at 32768: ... should give
    27800" (27800 < 32768), but say what was stored and what the exact sum was."""
    sums = [torch.tensor(0.0, dtype=torch.bfloat16)]  # the oracle: bfloat16 additions
    for _ in range(278):
        sums.append(sums[-1] + torch.tensor(100.0, dtype=torch.bfloat16))
    assert float(sums[276]) < float(sums[277]) == float(sums[278]) == 32768.0  # term 278 lost
    story = precision_story([[100.0] * 1024], PrecisionSpec("layernorm", 1e-5, "bfloat16"))
    text = plain(
        next(m.text for m in path_messages(story, 0, lang) if m.path == "naive_running_half")
    )
    if lang == "en":
        assert "adding term 278 (100) to the stored 32,768 should give 32,868" in text
        assert "is 32,768 + 256" in text
        assert "exact partial sum, 27,700 before term 278 and 27,800 with it" in text
    else:
        assert "把第 278 项（100）加到已存的 32,768 上本应得到 32,868" in text
        assert "第 278 项之前是 27,700，加上该项后是 27,800" in text


@pytest.mark.parametrize(
    "dtype, digits, power", [("float16", "3.3", "2⁻¹⁰"), ("bfloat16", "2.4", "2⁻⁷")]
)
def test_resolution_is_stated_in_significant_decimal_digits(dtype, digits, power):
    info = torch.finfo(getattr(torch, dtype))
    significand_bits = 1 - int(math.log2(info.eps))  # IEEE 754: eps = 2^(1 - p)
    assert f"{significand_bits * math.log10(2):.1f}" == digits  # 3.31 and 2.41 (IEEE table)
    text = plain(summary(DtypeFacts(resolution(dtype), None, None), "en"))
    assert f"{significand_bits} significand bits, about {digits} significant decimal" in text
    assert f"1 + {power} ≈ 1 + {info.eps:.4g}" in text  # 4 digits, as the range beside it
    assert "10^" not in text


def test_constant_row_note_quotes_f_layer_norm():
    y = torch.nn.functional.layer_norm(torch.full((4096,), 100.0, dtype=torch.float16), (4096,))
    note = constant_row_note(_story("textbook_4096x100", "layernorm"), 0, "en")
    if float(y[0]) == 0.0:  # the residue is a property of this CPU's kernel
        assert note is None
    else:
        assert f"F.layer_norm returns {float(y[0]):.4g} for every entry" in note  # 0.0009766
    assert constant_row_note(_story("plus_minus_300", "layernorm"), 0, "en") is None


def test_default_eps_is_each_kinds_own():
    table = default_eps_table("float16")
    rms = plain(default_eps_sentence(table, "rmsnorm", "float16", "en"))
    assert torch.nn.RMSNorm(4).eps is None
    assert f"ε = {format_eps(torch.finfo(torch.float32).eps)} for float16 inputs" in rms
    assert "LlamaRMSNorm defaults to 1e-6" in rms
    layer = plain(default_eps_sentence(table, "layernorm", "float16", "zh"))
    assert f"ε = {format_eps(torch.nn.LayerNorm(4).eps)}" in layer
    assert "DyT" in default_eps_sentence(table, "dyt", "float16", "en")


def test_rounding_without_overflow_is_called_rounding():
    x = torch.tensor([300.0, 301.0, 302.0, 303.0], dtype=torch.bfloat16)
    assert float(x.sum() / 4) != float(x.double().mean())  # the oracle: the mean rounds
    story = precision_story(x.double().tolist(), PrecisionSpec("layernorm", 1e-5, "bfloat16"))
    result = story.path("sum_then_divide_half")
    assert result.rows[0].outcome == "wrong" and result.rows[0].diagnosis is None
    text = plain(next(m.text for m in path_messages(story, 0, "en") if m.path == result.path))
    assert "Nothing overflowed or stalled: bfloat16 keeps only about 2.4 significant" in text
    assert "So μ = 302 and σ² = 3 instead of 301.5 and 2.75" in text


def test_the_upcast_path_is_marked_as_the_steps_only_where_it_computes_their_outputs():
    """bfloat16 1e20s: F.layer_norm(x.float()) is NaN (one-pass moments), the steps' two
    passes give 0, so the table does not call that path "the steps above"."""
    x = torch.full((1, 4), 1e20, dtype=torch.bfloat16)
    assert F.layer_norm(x.float(), (4,)).isnan().all()
    big = explain_vectors(((1e20,) * 4,), NormSpec("layernorm"), "bfloat16")
    assert big.outputs == ((0.0,) * 4,) and steps_path(big) is None
    assert all("←" not in name for name in overview(big.precision, 0, "en", None)[0])
    small = explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("layernorm"), "bfloat16")
    assert steps_path(small) == "upcast"


def test_the_constant_row_note_does_not_call_a_wrong_residue_right():
    """Four 60000s in float16: F.layer_norm returns 0.9922, which the table calls wrong; the
    note that says "within the 1 % the table calls right" is not shown for it."""
    assert F.layer_norm(torch.full((1, 4), 60000.0, dtype=torch.float16), (4,))[0, 0] > 0.99
    ex = explain_vectors(((60000.0,) * 4,), NormSpec("layernorm"), "float16")
    assert ex.precision.path("fused_half").rows[0].outcome == "wrong"
    assert constant_row_note(ex.precision, 0, "en") is None


def test_the_half_eps_and_one_row_batchnorm_notes_say_what_pytorchs_own_ops_do():
    """ε = 1e-8 is 0 in float16 for the formula written out, but F.layer_norm keeps it (its
    output on a constant row is 0, not NaN); torch.batch_norm at ε = 0 on one row returns β,
    where the formula gives NaN."""
    half = torch.full((1, 4), 3.0, dtype=torch.float16)
    assert (torch.zeros(1, dtype=torch.float16) + 1e-8).item() == 0  # written out: lost
    assert torch.equal(F.layer_norm(half, (4,), eps=1e-8), torch.zeros_like(half))  # kept
    eps_note = translate("vector_lab.eps_lost", "en", eps="1e-8", dtype="float16")
    assert "F.layer_norm and F.rms_norm take ε in float32" in eps_note
    beta = torch.tensor([0.5, -1.0, 2.0])
    one_row = torch.batch_norm(
        torch.tensor([[1.0, -2.0, 3.0]]), torch.ones(3), beta, None, None, True, 0.1, 0.0, False
    )
    assert torch.equal(one_row[0], beta)
    assert "torch.batch_norm returns β even then" in translate(
        "vector_lab.one_value_per_channel", "en"
    )


ROUNDED_MEAN = (1000.0, 1001.0, 1002.0, 1003.5)  # float16's spacing at 1,000 is 0.5


def test_a_half_path_with_a_rounded_mean_and_an_exact_variance_calls_only_the_mean_wrong():
    """PyTorch's half ops (x.mean(), x.var()) round μ but not σ² here: the sentence calls
    only μ wrong; the summed path, whose σ² is wrong too, names both."""
    x = torch.tensor(ROUNDED_MEAN, dtype=torch.float16)
    assert float(x.mean()) == 1001.5 != float(x.double().mean())  # the oracle: μ rounds
    assert float(x.var(unbiased=False)) == float(x.double().var(unbiased=False))  # σ² does not
    story = precision_story(list(ROUNDED_MEAN), PrecisionSpec("layernorm", 1e-5, "float16"))
    half_ops = plain(next(m.text for m in path_messages(story, 0, "en") if m.path == "torch_half"))
    assert "So μ = 1,001.5 instead of 1,001.625, while σ² = 1.6719 is float64's" in half_ops
    summed = plain(
        next(m.text for m in path_messages(story, 0, "en") if m.path == "sum_then_divide_half")
    )
    assert "So μ = 1,001.5 and σ² = 1.6875 instead of 1,001.625 and 1.6719" in summed  # both


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_layernorm_is_not_called_orthogonal_to_1_where_its_rounded_mean_moved_it(lang):
    """Computed in float16, μ = 1001.5 (not 1001.625) and the outputs sum to ~0.38: the note
    says the exact output is orthogonal and why this one is not; float32 keeps the plain note."""
    x = torch.tensor(ROUNDED_MEAN, dtype=torch.float16)
    mu = x.mean()  # PyTorch's own half mean
    rstd = torch.rsqrt(x.var(unbiased=False) + 1e-5)
    oracle = float(((x - mu) * rstd).double().sum())
    assert 0.3 < oracle < 0.45
    ex = explain_vectors((ROUNDED_MEAN,), NormSpec("layernorm", compute_dtype="float16"), "float16")
    assert not ex.comparison.layernorm_centred
    assert ex.comparison.layernorm_ones == pytest.approx(oracle, rel=0.02)
    notes = plain(" ".join(comparison_notes(ex, lang)))
    assert "(μ = 1,001.5)" in notes or "（μ = 1,001.5）" in notes
    assert ("orthogonal to 1 (" not in notes) and ("与 1 正交（" not in notes)
    plain32 = explain_vectors((ROUNDED_MEAN,), NormSpec("layernorm"))
    assert plain32.comparison.layernorm_centred
    assert "orthogonal to 1 (⟨y, 1⟩ = 0)" in plain(" ".join(comparison_notes(plain32, "en")))
