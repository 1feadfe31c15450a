"""ui.text.vector_lab_compare: the Vector Lab's LayerNorm-vs-RMSNorm notes, checked against
PyTorch and float64 directly, not against the engine that computed them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine import NormSpec
from engine.norms.worked import explain_vectors
from tests.plain_text import plain
from ui.formatting import format_reading
from ui.i18n import translate
from ui.text.vector_lab_compare import broken_statistic, comparison_notes, ratios


def test_all_zero_outputs_get_no_direction_claims():
    rows = ((-300.0, 300.0, -300.0, 300.0),)
    ex = explain_vectors(rows, NormSpec("layernorm", compute_dtype="float16"), "float16")
    assert not np.any(ex.comparison.layernorm) and math.isnan(ex.comparison.layernorm_cos_input)
    assert broken_statistic(ex, "layernorm") == "variance"
    assert broken_statistic(ex, "rmsnorm") == "mean_square"
    for lang in ("en", "zh"):
        notes = plain(" ".join(comparison_notes(ex, lang)))
        assert "NaN" not in notes.replace("含 NaN 或 ∞", "").replace("zeros, NaN or ∞", "")
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


def test_outputs_are_called_what_torch_returns_infinite_nan_or_partly_nan():
    """ε = 0: [1, −2, 3]·10⁻³⁰ has RMS² = 0 in float32 (squares underflow), so F.rms_norm
    gives ±∞, never NaN (the note said NaN); [0, 0, 0] gives NaN from RMS² = 0 itself, which
    only the zero vector has (the note said "a constant row"); in float16, [60000, −60000,
    30000, 1] gives 0s from rstd = 0 and one NaN, from a deviation that overflowed itself."""
    tiny = (1e-30, -2e-30, 3e-30)
    assert torch.isinf(F.rms_norm(torch.tensor(tiny), (3,), eps=0.0)).all()
    ex = explain_vectors((tiny,), NormSpec("rmsnorm", eps=0.0))
    notes = [plain(note) for note in comparison_notes(ex, "en")]
    assert "RMSNorm's output on this row is infinite (±∞)" in " ".join(notes)
    assert "is NaN" not in " ".join(notes)
    zero = explain_vectors(((0.0, 0.0, 0.0),), NormSpec("rmsnorm", eps=0.0))
    note = plain(" ".join(comparison_notes(zero, "en")))
    assert "RMS² + ε = 0 (every entry 0 and ε = 0)" in note
    assert "常数行" not in plain(" ".join(comparison_notes(zero, "zh"))).split("RMSNorm")[-1]
    row = (60000.0, -60000.0, 30000.0, 1.0)
    half = torch.tensor(row, dtype=torch.float16)
    torch_y = (half - half.mean()) * torch.rsqrt(((half - half.mean()) ** 2).mean() + 1e-5)
    assert torch_y.isnan().sum() == 1 and (torch_y == 0).sum() == 3  # the formula in float16
    ex = explain_vectors((row,), NormSpec("layernorm", compute_dtype="float16"), "float16")
    note = plain(comparison_notes(ex, "en")[0])
    assert note.startswith("LayerNorm's output on this row is NaN in places")
    assert "a deviation xᵢ − μ that overflowed itself gives ∞ · 0 = NaN" in note


def test_rms_over_sigma_is_taken_from_mu_and_sigma_not_two_rounded_roots():
    """[−2, −1, 1, 2.0000002]: σ and RMS rounded apart made RMS/σ "1 − 3.6×10⁻⁸" right after
    "RMS ≥ σ"; from the steps' own μ and σ², √(1 + μ²/σ²) − 1 = 7.1×10⁻¹⁶ (float64 on the
    stored row agrees), below float32's precision, and is said so."""
    row = torch.tensor([-2.0, -1.0, 1.0, 2.0000002])  # stored in float32
    exact = row.double()
    assert abs(float(exact.pow(2).mean().sqrt() / exact.std(correction=0)) - 1) < 1e-15
    ex = explain_vectors((tuple(row.tolist()),), NormSpec("layernorm"), "float32")
    notes = plain(" ".join(comparison_notes(ex, "en")))
    assert "1 − 3.6" not in notes and "so the two outputs differ" not in notes
    assert "RMS/σ = √(1 + μ²/σ²) = 1 + 7.105×10⁻¹⁶, closer to 1 than float32 can tell" in notes
    ex = explain_vectors(((-2.0, -1.0, 1.0, 2.01),), NormSpec("layernorm"), "float32")
    stored = torch.tensor([-2.0, -1.0, 1.0, 2.01]).double()
    ratio = float(stored.pow(2).mean().sqrt() / stored.std(correction=0))
    assert f"{(ratio - 1) * 1e6:.1f}" == "1.2"  # float64's 1 + 1.245×10⁻⁶: "1.3" was said
    assert "RMS is (1 + 1.2×10⁻⁶)× σ" in plain(" ".join(comparison_notes(ex, "en")))
