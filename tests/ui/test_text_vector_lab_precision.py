"""ui.text.vector_lab_precision and vector_lab_compare: the precision section's sentences.

Every preset of engine/norms/precision_presets.py is rendered for both kinds in both languages
(a missing parameter raises KeyError in ``translate``); the quoted numbers are checked against
PyTorch and IEEE 754 directly, not against the engine that computed them.
"""

from __future__ import annotations

import math

import numpy as np
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
from ui.formatting import format_eps, format_reading
from ui.i18n import translate
from ui.text.vector_lab_compare import broken_statistic, comparison_notes, ratios
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


def test_all_zero_outputs_get_no_direction_claims():
    rows = ((-300.0, 300.0, -300.0, 300.0),)
    ex = explain_vectors(rows, NormSpec("layernorm", compute_dtype="float16"), "float16")
    assert not np.any(ex.comparison.layernorm) and math.isnan(ex.comparison.layernorm_cos_input)
    assert broken_statistic(ex, "layernorm") == "variance"
    assert broken_statistic(ex, "rmsnorm") == "mean_square"
    for lang in ("en", "zh"):
        notes = plain(" ".join(comparison_notes(ex, lang)))
        assert "NaN" not in notes.replace("零或 NaN", "").replace("zeros or NaN", "")
        assert "∞ = ∞" not in notes
    notes = [plain(note) for note in comparison_notes(ex, "en")]
    assert notes[0].startswith("LayerNorm's output on this row is all 0: σ² = ∞ in float16")


def test_rms_over_sigma_near_one_is_written_with_the_digits_that_differ_from_one():
    """[10⁵, −10⁵, 12000, 3]: RMS / σ = 1.0009, which "1.00×" wrote as equal beside "so the
    two outputs differ"; a ratio away from 1 keeps its four decimals."""
    ex = explain_vectors(((1e5, -1e5, 12000.0, 3.0),), NormSpec("layernorm"), "float32")
    ratio = ex.row_stats.rms / ex.row_stats.std
    assert 1 < ratio < 1.001
    notes = plain(" ".join(comparison_notes(ex, "en")))
    assert f"RMS is {ratio:.4f}× σ, so the two outputs differ" in notes and "1.00× σ" not in notes
    ex = explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("layernorm"), "float32")
    assert "RMS is 2.4495× σ" in plain(" ".join(comparison_notes(ex, "en")))  # √7.5 / √1.25


def test_squares_below_float32_are_said_and_no_ratio_of_zeros_is_given():
    """1e-30, 2e-30, 3e-30: the squares (1e-60) are 0 in float32, so σ = RMS = 0 while μ =
    2e-30, and ε alone sets the scale; the note said "RMS is ∞× σ" and "slightly inside"."""
    x = torch.tensor([[1e-30, 2e-30, 3e-30]])
    y = F.layer_norm(x, (3,), eps=1e-5)  # PyTorch's own: the variance it uses is 0
    assert torch.allclose(y, (x - x.mean()) / math.sqrt(1e-5), rtol=1e-5)
    ex = explain_vectors(((1e-30, 2e-30, 3e-30),), NormSpec("layernorm"), "float32")
    assert ex.row_stats.mean_square == 0 and ex.row_stats.std == 0
    notes = plain(" ".join(comparison_notes(ex, "en")))
    assert "Here RMS and σ say nothing" in notes and "(μ = 2×10⁻³⁰)" in notes and "∞×" not in notes
    assert "RMS² came out 0, against 4.667×10⁻⁶⁰ exactly" in notes
    length = float(y.double().norm())  # in float32 the squares of 3e-28 are 0 too
    assert math.isclose(ex.comparison.layernorm_l2, length, rel_tol=1e-4)
    assert "slightly" not in notes and f"‖y‖₂ is LayerNorm {format_reading(length)}" in notes
    assert "the smallest normal float32 number" in notes
    assert "平方小于 float32 的最小正规数" in plain(" ".join(comparison_notes(ex, "zh")))
    subnormal = explain_vectors(((1e-23, 4e-23, -3e-23),), NormSpec("layernorm"), "float32")
    assert "RMS and σ say nothing" in plain(" ".join(comparison_notes(subnormal, "en")))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_outputs_far_inside_the_sphere_get_their_norms_not_slightly(lang):
    """1e-3, 2e-3, 4e-3: σ² = 1.6e-6 against ε = 1e-5, and ‖y‖ = √d·σ/√(σ² + ε)
    is about a third of √d (PyTorch's ``F.layer_norm`` in float32 agrees)."""
    row = (1e-3, 2e-3, 4e-3)
    ex = explain_vectors((row,), NormSpec("layernorm"), "float32")
    y = F.layer_norm(torch.tensor([row], dtype=torch.float64), (3,), eps=1e-5)
    sigma = torch.tensor(row, dtype=torch.float64).std(unbiased=False)
    assert math.isclose(float(y.norm()), math.sqrt(3) * sigma / math.sqrt(sigma**2 + 1e-5))
    assert abs(ex.comparison.layernorm_l2 - float(y.norm())) < 1e-4
    notes = plain(" ".join(comparison_notes(ex, lang)))
    assert f"{ex.comparison.layernorm_l2:.4f}" in notes and "1e-5" in notes
    assert ("slightly" if lang == "en" else "略微") not in notes
    healthy = explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("layernorm"), "float32")
    assert ("slightly" if lang == "en" else "略微") in " ".join(comparison_notes(healthy, lang))


def test_sum_overflow_in_the_comparison_names_mu():
    rows = ((100.0,) * 4096,)
    ex = explain_vectors(rows, NormSpec("layernorm", compute_dtype="float16"), "float16")
    assert broken_statistic(ex, "layernorm") == "mean"
    assert "output on this row is NaN: μ = ∞ in float16" in plain(comparison_notes(ex, "en")[0])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_overflow_note_points_to_the_precision_section_only_where_it_runs_that_norm(lang):
    """1e20 × 4: RMS² = ∞ in float32. Stored in float32 the Precision section runs no code
    paths (no half story), and with LayerNorm chosen its paths are LayerNorm's, so the RMSNorm
    note points nowhere; with RMSNorm chosen on bfloat16 input it names that story."""
    row = ((1e20,) * 4,)
    words = ("Precision section", "“精度”一节")
    for kind, dtype in (
        ("rmsnorm", "float32"),
        ("layernorm", "float32"),
        ("layernorm", "bfloat16"),
    ):
        ex = explain_vectors(row, NormSpec(kind), dtype)
        assert broken_statistic(ex, "rmsnorm") == "mean_square"
        assert not any(w in " ".join(comparison_notes(ex, lang)) for w in words), (kind, dtype)
    ex = explain_vectors(row, NormSpec("rmsnorm"), "bfloat16")
    assert ex.precision is not None and ex.precision.spec.kind == "rmsnorm"
    note = comparison_notes(ex, lang)[1]
    assert any(w in note for w in words) and "RMSNorm" in note and "bfloat16" in note


def test_healthy_rows_keep_their_geometric_notes():
    ex = explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("layernorm", eps=0.0))
    notes = [plain(note) for note in comparison_notes(ex, "en")]
    assert len(notes) == 4 and "cos(x, y) = 1" in notes[2]
    constant = explain_vectors(((5.0, 5.0, 5.0),), NormSpec("layernorm"))
    assert broken_statistic(constant, "layernorm") == "constant_row"
    assert "RMSNorm only rescales: cos(x, y) = 1" in plain(
        " ".join(comparison_notes(constant, "en"))
    )


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


def test_ratios_too_small_for_two_decimals_keep_their_digits_and_sign():
    """RMSNorm of [−10⁶, 2, 3, 4]: y₂/y₁ = 2/−10⁶ = −2e-06 was rounded to "−0" (a sign on
    nothing); it keeps two significant digits. Exact zeros and larger ratios are unchanged."""
    ex = explain_vectors(((-1e6, 2.0, 3.0, 4.0),), NormSpec("rmsnorm"))
    assert ratios(ex.comparison.rmsnorm) == "1 : −2×10⁻⁶ : −3×10⁻⁶ : −4×10⁻⁶"
    assert ratios([-1.3416, -0.4472, 0.4472, 1.3416]) == "1 : 0.33 : −0.33 : −1"
    assert ratios([2.0, -0.0, 0.0, 4.0]) == "1 : 0 : 0 : 2"
    assert ratios([1.0, math.nan, math.inf]) == "1 : NaN : ∞"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_comparison_row_labels_fit_and_none_ends_as_if_cut(lang):
    """'Ratios y₁ : y₂ : …' ended in an ellipsis, which reads as a label cut off, and was the
    longest label (two lines at 800 px): every row label is now at most as long as ‖y‖₂'s."""
    keys = ("compare_l2", "compare_ones", "compare_cos", "compare_ratios")
    labels = [translate(f"vector_lab.{key}", lang, sqrt_d="2") for key in keys]
    assert not any(label.endswith(("…", "...")) for label in labels)
    assert max(len(label) for label in labels) == len(labels[0])
    # a narrow column breaks ‖y‖₂'s label before its bracket, never inside "√d = 2"
    assert "√d\u00a0=\u00a02" in labels[0] and "√d = " not in labels[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sphere_note_follows_the_measured_norms(lang):
    """1, 2, 3, 4 stored in float16: ‖y‖₂ = 2.0002 / 2.0005, just outside √d = 2 (rounding),
    so the note must not say "slightly inside"; in float32 (1.9999...) it still does."""
    half = explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("layernorm"), "float16")
    assert half.comparison.layernorm_l2 > 2.0001 and half.comparison.rmsnorm_l2 > 2.0001
    note = plain(comparison_notes(half, lang)[0])
    inside = ("slightly inside", "略微拉向球内")
    assert not any(word in note for word in inside)
    assert "2.0002" in note and "2.0005" in note and "float16" in note
    assert ("just outside", "略在球外")[lang == "zh"] in note
    single = explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("layernorm"), "float32")
    assert single.comparison.layernorm_l2 < 2
    assert any(word in plain(comparison_notes(single, lang)[0]) for word in inside)
    # bfloat16: LayerNorm's 2.0029 outside, RMSNorm's 1.9994 inside; only the outside one named
    mixed = plain(
        comparison_notes(
            explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("layernorm"), "bfloat16"), lang
        )[0]
    )
    assert "LayerNorm 2.0029" in mixed and "RMSNorm" not in mixed and "bfloat16" in mixed


def test_a_rounding_sized_dot_with_ones_is_written_as_the_cosine_gap_beside_it():
    """⟨y, 1⟩ of LayerNorm in float32 is rounding-sized, not 0, for most rows; the note and
    the table write it with its power of ten, as the cosine beside it writes its gap, never
    "3.725e-08" beside "1 − 3.3×10⁻¹⁶"."""
    row = (3.0, 1.0, 4.0, 1.5, 9.0)
    ones = F.layer_norm(torch.tensor(row), (5,), eps=1e-5).sum().item()  # PyTorch's own
    ex = explain_vectors((row,), NormSpec("layernorm"))
    shown = ex.comparison.layernorm_ones  # summed in another order: another rounding
    assert 1e-9 < abs(ones) < 1e-6 and 1e-9 < abs(shown) < 1e-6
    for lang in ("en", "zh"):
        note = plain(comparison_notes(ex, lang)[1])
        assert "e-0" not in note and f"{shown:.4g}".split("e")[0] + "×10⁻⁸" in note


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


def test_a_row_whose_squares_underflow_is_not_called_constant():
    """[1, 2, 3]·10⁻³⁰: σ² underflows to 0 in float32 though the entries differ.  With
    ε = 1e-5, F.layer_norm's output keeps a direction (cos(x − μ, y) = 1, its entries ≠ 0), so
    no "every entry is equal"; with ε = 0 the NaN is said to come from the underflow."""
    row = (1e-30, 2e-30, 3e-30)
    y = F.layer_norm(torch.tensor(row), (3,), eps=1e-5)
    assert (y != 0).sum() == 2  # the oracle: not the zero vector
    ex = explain_vectors((row,), NormSpec("layernorm"))
    assert ex.row_stats.var == 0 and broken_statistic(ex, "layernorm") is None
    zero_eps = explain_vectors((row,), NormSpec("layernorm", eps=0.0))
    assert broken_statistic(zero_eps, "layernorm") == "underflow"
    note = plain(comparison_notes(zero_eps, "en")[0])
    assert "although the entries differ" in note and "every entry is equal" not in note


def test_a_row_of_mean_zero_is_not_said_to_be_turned_by_layernorm():
    """μ = 0: F.layer_norm and F.rms_norm give the same vector (ε aside), so the note does
    not say LayerNorm changes the direction."""
    row = (-300.0, 300.0, -300.0, 300.0)
    x = torch.tensor(row)
    assert torch.allclose(F.layer_norm(x, (4,)), F.rms_norm(x, (4,), eps=1e-5))
    notes = " ".join(
        plain(n) for n in comparison_notes(explain_vectors((row,), NormSpec("layernorm")), "en")
    )
    assert "LayerNorm changes the direction" not in notes and "keeps the direction too" in notes


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
