"""The Vector Lab's steps against the fused op that computed the output: where PyTorch's own
``F.layer_norm`` / ``F.rms_norm`` take other statistics for the worked row than the two-pass
steps, ``explain_vectors`` says so with both values and a cause (``FUSED_CAUSES``)."""

import math

import pytest
import torch
import torch.nn.functional as F

from engine import NormSpec
from engine.norms.dispatch import normalize
from engine.norms.worked import explain_vectors
from tests.plain_text import plain
from ui.formatting import format_power
from ui.i18n import translate
from ui.text.vector_lab_precision import path_messages
from ui.text.vector_lab_steps import worked_steps

F32_MAX = torch.finfo(torch.float32).max
_P, _G = format_power(F32_MAX), format_power(math.sqrt(F32_MAX))


def _layer(row) -> torch.Tensor:
    return F.layer_norm(torch.tensor([row]), (len(row),))[0]


@pytest.mark.parametrize(
    "row",
    [(1e20,) * 4, (3e19,) * 4, (1.9e19,) * 4, (1e20, 1e20, 1e20, 2e20), (1e20,) * 16],
)
def test_a_layernorm_whose_one_pass_moments_overflow_is_named_with_both_values(row):
    ex = explain_vectors((row,), NormSpec("layernorm"))
    assert _layer(row).isnan().all() and all(math.isnan(y) for y in ex.outputs[0])
    x = torch.tensor(row)  # the two-pass formula in float32: μ first, then (x − μ)²
    centred = x - x.sum() / len(row)
    assert ex.steps_rstd == float(torch.rsqrt((centred * centred).sum() / len(row) + 1e-5))
    fused = ex.fused
    assert fused is not None and fused.op == "aten.native_layer_norm"
    assert fused.cause == "moments_overflow" and math.isnan(fused.rstd) and math.isnan(fused.var)
    assert fused.steps_rstd == ex.steps_rstd and not math.isnan(ex.steps_rstd)


def test_the_overflow_is_a_squared_gap_of_means_beyond_float32_times_a_zero_weight():
    """Welford's merge adds δ²·c·n: (0 − μ)² with μ = 1e20 is inf in float32, and a weight of
    0 makes it NaN; below √max (1.8e19) the same row is finite, as F.layer_norm shows."""
    delta = torch.tensor(0.0) - torch.tensor(1e20)
    assert (delta * delta * 0.0).isnan() and delta * delta == math.inf
    assert 1.8e19 < math.sqrt(F32_MAX) < 1.9e19
    assert _layer((1.8e19,) * 4).eq(0).all() and _layer((1.9e19,) * 4).isnan().all()
    assert explain_vectors(((1.8e19,) * 4,), NormSpec("layernorm")).fused is None


_MIXED = (1e20, -1e20, 1e20, -1e20)
AGREE = [("rmsnorm", row) for row in [(1e20,) * 4, (3e19,) * 4, (1e19,) * 4, _MIXED, (2.0, -3.0)]]
AGREE += [("layernorm", row) for row in [(1e19,) * 4, _MIXED, (2.0, -3.0)]]


@pytest.mark.parametrize("kind, row", AGREE)
def test_rows_where_pytorch_agrees_with_the_steps_have_no_note(kind, row):
    """Mixed signs overflow σ² in both (rstd 0, every output 0); RMSNorm sums squares in
    both, so every row here has the steps' rstd and the op's output."""
    ex = explain_vectors((row,), NormSpec(kind))
    oracle = (
        _layer
        if kind == "layernorm"
        else lambda r: F.rms_norm(torch.tensor([r]), (len(r),), eps=1e-5)[0]
    )(row)
    assert torch.equal(torch.tensor(ex.outputs[0]).float(), oracle)
    assert ex.fused is None and ex.steps_rstd == ex.statistics_rstd[ex.row_index]


def test_a_constant_row_whose_rounded_mean_leaves_a_variance_is_named():
    """Seven 1e17s: sum / 7 in float32 is not 1e17, so the steps' σ² is 7e19; the op's running
    mean is exact, its σ² 0 and its output 0 (F.layer_norm), and the engine's σ² says 0 too."""
    row = (1e17,) * 7
    ex = explain_vectors((row,), NormSpec("layernorm"))
    assert _layer(row).eq(0).all() and ex.outputs[0] == (0.0,) * 7
    assert ex.fused is not None and ex.fused.cause == "mean_rounded"
    assert ex.fused.var == 0 and ex.fused.steps_var > 1e19 and ex.statistics_var == (0.0,)
    result = normalize(torch.tensor([row]), NormSpec("layernorm"))
    assert float(result.var[0]) == 0 and float(result.rstd[0]) == pytest.approx(1e-5**-0.5)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_steps_write_the_steps_rstd_and_the_ops_beside_it(lang):
    ex = explain_vectors(((1e20,) * 4,), NormSpec("layernorm"))
    steps = worked_steps(ex, lang)
    latex = "\n".join(step.latex for step in steps)
    assert r"&= 316.2278\end{aligned}" in latex  # the steps' own rstd, not the op's NaN
    assert r"&= \text{NaN} \neq 316.2278" in latex and r"&= \text{NaN} \neq 0" in latex
    note = next(step.caption for step in steps if "aten.native_layer_norm" in step.caption)
    assert "Welford" in note and "3.4×10³⁸" in note and "1.8×10¹⁹" in note


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_precision_story_names_the_fused_layernorms_nan_moments_in_bfloat16(lang):
    """bfloat16 holds 1e20; F.layer_norm on it, and on it upcast, takes the moments in
    float32 one pass and returns NaN (σ² is 0 in float64). Those two paths say why."""
    x = torch.full((1, 4), 1e20, dtype=torch.bfloat16)
    assert F.layer_norm(x, (4,)).isnan().all() and F.layer_norm(x.float(), (4,)).isnan().all()
    ex = explain_vectors(((1e20,) * 4,), NormSpec("layernorm"), "bfloat16")
    for path in ("upcast", "fused_half"):
        event = ex.precision.path(path).rows[0].diagnosis
        assert (
            event.failure == "moments_overflow" and event.exact == 0 and math.isnan(event.computed)
        )
    assert ex.precision.path("torch_half").rows[0].diagnosis is None  # x.var(): two passes
    texts = {m.path: plain(m.text) for m in path_messages(ex.precision, 0, lang)}
    assert "Welford" in texts["fused_half"] and "Welford" in texts["upcast"]
    assert "Welford" not in texts["sum_then_divide_half"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_precision_story_names_a_merge_that_overflows_to_infinity(lang):
    """Sixteen 1.9e19s and one 3.8e19 in bfloat16: both merge weights are nonzero, so the
    one-pass σ² is ∞ and F.layer_norm returns rstd 0 and y = 0, although σ² ≈ 2×10³⁷ fits
    in float32. The paths that call the fused op say why; x.var() (two passes) is right."""
    row = (1.9e19,) * 16 + (3.8e19,)
    x = torch.tensor([row], dtype=torch.bfloat16)
    for tensor in (x, x.float()):
        _, _, rstd = torch.native_layer_norm(tensor, [17], None, None, 1e-5)
        assert rstd.item() == 0 and not F.layer_norm(tensor, (17,)).any()
    exact = x.double().var(-1, unbiased=False).item()
    assert exact < torch.finfo(torch.float32).max
    ex = explain_vectors((row,), NormSpec("layernorm"), "bfloat16")
    for path in ("upcast", "fused_half"):
        event = ex.precision.path(path).rows[0].diagnosis
        assert event.failure == "moments_overflow" and math.isinf(event.computed)
        assert event.exact == pytest.approx(exact)
    assert ex.precision.path("torch_half").rows[0].diagnosis is None
    texts = {m.path: plain(m.text) for m in path_messages(ex.precision, 0, lang)}
    assert "Welford" in texts["fused_half"] and "σ² = ∞" in texts["fused_half"]
    assert "Welford" in texts["upcast"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_fused_layernorms_wrong_output_with_right_statistics_is_not_called_rounding(lang):
    """Four 60000s in float16: F.layer_norm's μ and rstd are right, yet y = 0.9922, not 0.
    Its y is x·rstd − fl32(rstd·μ) with x·rstd unrounded: both terms ≈ 1.897e7, where
    float32's spacing is 2 (this reproduces PyTorch's output bit for bit)."""
    x = torch.full((1, 4), 60000.0, dtype=torch.float16)
    got = F.layer_norm(x, (4,))[0, 0]
    rstd = torch.rsqrt(torch.tensor(1e-5))
    bias = -rstd * 60000.0  # rounded to float32
    assert float(got) == float((60000.0 * rstd.double() + bias.double()).half()) == 0.9921875
    ex = explain_vectors(((60000.0,) * 4,), NormSpec("layernorm"), "float16")
    state = ex.precision.path("fused_half").rows[0]
    assert state.outcome == "wrong" and state.cancelled == pytest.approx(1.897e7, rel=1e-3)
    assert state.cancelled_spacing == 2.0 and ex.precision.path("upcast").rows[0].outcome == "ok"
    text = plain(
        next(m.text for m in path_messages(ex.precision, 0, lang) if m.path == "fused_half")
    )
    assert "x·rstd − rstd·μ" in text and "0.9922" in text and "1.897×10⁷" in text
    assert "significant" not in text and "有效数字" not in text  # not the rounding sentence


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_welford_merge_is_told_in_one_text_by_the_note_and_the_precision_story(lang):
    """The steps' note (float32) and the bfloat16 story's fused path share one sentence."""
    note = next(
        s.caption
        for s in worked_steps(explain_vectors(((1e20,) * 4,), NormSpec("layernorm")), lang)
        if "native_layer_norm" in s.caption
    )
    ex = explain_vectors(((1e20,) * 4,), NormSpec("layernorm"), "bfloat16")
    story = next(m.text for m in path_messages(ex.precision, 0, lang) if m.path == "fused_half")
    merge = translate("vector_lab.welford.merge", lang, dtype="float32", largest=_P, gap=_G)
    assert merge in note and merge in story


def _native(row, eps=1e-5):
    """torch.native_layer_norm itself: (y, mean, rstd) of the one row."""
    y, mean, rstd = torch.native_layer_norm(torch.tensor([row]), [len(row)], None, None, eps)
    return y[0], float(mean[0, 0]), float(rstd[0, 0])


def _steps_y(row, eps=1e-5):
    """The steps' formula in float32: μ = Σx / d, then (x − μ)·rsqrt(Σ(x − μ)²/d + ε)."""
    x = torch.tensor(row)
    centred = x - x.sum() / len(row)
    return centred * torch.rsqrt((centred * centred).sum() / len(row) + eps)


def test_a_steps_mean_that_overflowed_is_named_as_the_sums_overflow_not_rounding():
    """Nine 3e38s: the float32 sum is ∞, so the steps' μ is ∞ and their y NaN; the op's
    running mean is 3e38, its σ² 0 and its y 0."""
    row = (3e38,) * 9
    y, mean, rstd = _native(row)
    assert y.eq(0).all() and mean == pytest.approx(3e38) and rstd == pytest.approx(1e-5**-0.5)
    assert torch.tensor(row).sum() == math.inf and _steps_y(row).isnan().all()
    ex = explain_vectors((row,), NormSpec("layernorm"))
    assert ex.row_stats.mean == math.inf and ex.outputs[0] == (0.0,) * 9
    assert ex.fused.cause == "sum_overflow" and not ex.fused.same_output


def test_a_welford_merge_that_overflows_to_infinity_is_named():
    """Sixteen 1.9e19s and one 3.8e19: merging means 1.9e19 apart with both weights nonzero gives
    σ² = ∞ (not NaN), rstd 0 and y = 0; the steps' σ² is finite and their y₁ is −0.25."""
    row = (1.9e19,) * 16 + (3.8e19,)
    y, _, rstd = _native(row)
    assert rstd == 0 and y.eq(0).all() and float(_steps_y(row)[0]) == pytest.approx(-0.25)
    delta = torch.tensor(1.9e19)
    assert delta * delta * 0.5 * 1 == math.inf  # δ·δ·c·m₀ from the left, c and m₀ ≠ 0
    ex = explain_vectors((row,), NormSpec("layernorm"))
    assert ex.fused.cause == "moments_overflow" and ex.fused.rstd == 0
    assert math.isfinite(ex.fused.steps_var) and ex.outputs[0] == (0.0,) * 17
    for lang in ("en", "zh"):
        note = next(s.caption for s in worked_steps(ex, lang) if "native_layer_norm" in s.caption)
        infinite, nan, source = (
            translate(f"vector_lab.welford.{o}", lang) for o in ("inf", "nan", "source")
        )
        assert note.endswith(infinite + source) and nan not in note and "δ·δ" in note


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_welford_merge_with_an_empty_part_is_told_as_nan_not_infinity(lang):
    """1e20 × 4: the four entries are one part (mean 1e20, summed squares 0); merging an empty
    vector lane (weight 0) gives δ·δ = ∞ and ∞·0 = NaN, so the note says NaN, as σ² and rstd
    below it do, and never that σ² is ∞; the source file comes last."""
    ex = explain_vectors(((1e20,) * 4,), NormSpec("layernorm"))
    note = next(s.caption for s in worked_steps(ex, lang) if "native_layer_norm" in s.caption)
    nan, infinite, source = (
        translate(f"vector_lab.welford.{o}", lang) for o in ("nan", "inf", "source")
    )
    assert note.endswith(nan + source) and infinite not in note
    assert "moments_utils.h" not in note.removesuffix(source)
    bf16 = explain_vectors(((1e20,) * 4,), NormSpec("layernorm"), "bfloat16")
    story = next(m.text for m in path_messages(bf16.precision, 0, lang) if m.path == "fused_half")
    assert nan in story and infinite not in story


@pytest.mark.parametrize("row", [(1e30,) * 9, (1e35,) * 20, (3e38,) * 2, (3e38,) * 8])
def test_a_note_on_other_statistics_says_when_the_output_is_the_steps_output(row):
    """1e30s: the steps' σ² is ∞ (rounded μ), the op's 0, and both y are 0; 3e38s, d ≤ 8:
    the steps' μ is ∞, the op's σ² NaN, and both y are NaN."""
    y, _, rstd = _native(row)
    steps_y = _steps_y(row)
    assert torch.equal(y, steps_y) or (y.isnan().all() and steps_y.isnan().all())
    ex = explain_vectors((row,), NormSpec("layernorm"))
    assert ex.fused is not None and ex.fused.same_output and ex.fused.rstd != ex.steps_rstd
    for lang in ("en", "zh"):
        captions = [s.caption for s in worked_steps(ex, lang)]
        note = next(c for c in captions if "native_layer_norm" in c)
        assert "not computed" not in note and "并不是" not in note
        assert "same as the steps'" in note or "输出相同" in note


def test_eps_zero_a_rounded_mean_gives_infinities_in_the_steps_and_nan_in_the_op():
    """Eleven 1e-20s, ε = 0: both σ² are 0 and both rstd ∞, but the steps' x − μ is not 0
    (μ rounded), so their y is ±∞, while the op's y is NaN."""
    row = (1e-20,) * 11
    y, mean, rstd = _native(row, eps=0.0)
    assert y.isnan().all() and rstd == math.inf and mean == float(torch.tensor(1e-20))
    assert _steps_y(row, eps=0.0).isinf().all()
    ex = explain_vectors((row,), NormSpec("layernorm", eps=0.0))
    assert ex.fused is not None and ex.fused.cause == "mean_rounded" and ex.fused.same_rstd
    for lang, words in (("en", "same σ² and rstd"), ("zh", "相同的 σ² 与 rstd")):
        note = next(s.caption for s in worked_steps(ex, lang) if "native_layer_norm" in s.caption)
        assert (
            words in note
            and translate("vector_lab.steps.fused_mean_rounded", lang, dtype="float32") in note
        )
