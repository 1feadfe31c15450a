"""The Axes page's sentences about BatchNorm's failures, built from measured results."""

from __future__ import annotations

import pytest

from engine.axes.batch_of_one import batch_of_one
from engine.config import AxesSpec
from tests.plain_text import plain
from ui.text.axes import batch_of_one_facts


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_eps_the_batch_of_one_is_zero_times_infinity_not_its_inverse(lang):
    # "zero times an infinite inverse" read in Chinese as 0 × (1/∞), which is 0, not NaN:
    # the sentence names the factor, 1/√0 = ∞, and the product that is NaN
    result = batch_of_one(AxesSpec())
    facts = [plain(fact) for fact in batch_of_one_facts(result, lang)]
    (eps_zero,) = [fact for fact in facts if "NaN" in fact]
    assert "1/√0 = ∞" in eps_zero
    assert "0 × ∞ = NaN" in eps_zero
    assert f"{result.nan_count_eps0}" in eps_zero


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_instancenorm_legend_says_pytorchs_module_has_no_gamma_or_beta_by_default(lang):
    """nn.InstanceNorm1d is affine=False unless asked: its γ and β are conditional."""
    import torch

    from engine.axes.sharing import axes_statistics
    from ui.text.axes import legend

    module = torch.nn.InstanceNorm1d(4)
    assert module.affine is False and module.weight is None and module.bias is None
    lines = " ".join(legend(axes_statistics(AxesSpec(kind="instancenorm")), lang))
    assert "affine=False" in lines and "affine=True" in lines
    other = " ".join(legend(axes_statistics(AxesSpec(kind="layernorm")), lang))
    assert torch.nn.LayerNorm(4).elementwise_affine and "affine" not in other


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_batch_of_one_quotes_what_pytorchs_batch_norm_returns_in_the_pages_precision(
    lang, dtype
):
    """The formula gives β exactly; torch.batch_norm itself, in the page's precision, returns
    β up to rounding (2×10⁻⁵ in float32 at ε = 10⁻⁵), and the page quotes that, not 0."""
    import torch

    from ui.formatting import format_reading

    result = batch_of_one(AxesSpec(dtype=dtype))
    to = getattr(torch, dtype)
    x, gamma, beta = (torch.tensor(v).to(to) for v in (result.x, result.gamma, result.beta))
    y = torch.batch_norm(x[None], gamma, beta, None, None, True, 0.1, 1e-5, False)[0]
    native = (y.double() - beta.double()).abs().max().item()
    assert native > 0 and result.max_abs_y_minus_beta == 0
    assert result.native_max_abs_minus_beta == native
    facts = " ".join(plain(fact) for fact in batch_of_one_facts(result, lang))
    assert f"= {format_reading(native)}" in facts and dtype in facts


def test_the_batch_of_one_writes_eps_as_its_box_does():
    facts = [plain(fact) for fact in batch_of_one_facts(batch_of_one(AxesSpec()), "en")]
    assert any("With ε = 10⁻⁵:" in fact for fact in facts), facts  # as the slider, not "1e-05"


def test_the_heatmap_note_names_grey_pad_rows_only_where_the_tensor_has_them():
    from engine.axes.sharing import axes_statistics
    from ui.text.axes import heatmap_note

    synthetic = axes_statistics(AxesSpec())
    padded = axes_statistics(AxesSpec(source="padded"))
    assert synthetic.real.all() and not padded.real.all()
    assert "PAD" not in heatmap_note(synthetic, "en")
    assert heatmap_note(padded, "en").endswith(" Gray rows: PAD positions.")
    assert heatmap_note(padded, "zh").endswith("。灰色行：PAD 位置。")


def test_chinese_sentences_of_the_dyt_legend_follow_each_other_without_a_space():
    from engine.axes.sharing import axes_statistics
    from ui.text.axes import legend

    lines = legend(axes_statistics(AxesSpec(kind="dyt")), "zh")
    assert any("。DyT" in line for line in lines) and not any("。 " in line for line in lines)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_value_per_channel_is_said_once_and_its_missing_variance_dot_explained(lang):
    """At B = T = 1 a batch of b = 1 pools one value: its variance is 0 in every draw (the
    engine's spread is exactly 0, which a log axis drops), and "1 values" is never written."""
    from engine.axes.small_batch import small_batch_noise
    from ui.text.axes import small_batch_lesson

    lone = small_batch_noise(AxesSpec(batch=1, tokens=1, d=1))
    assert lone.values_per_channel[0] == 1 and lone.var_spread[0] == 0
    said = small_batch_lesson(lone, lang)
    assert "1 values" not in said and "n = 1 个值" not in said
    assert {"en": "that dot is missing", "zh": "那个点因此缺失"}[lang] in said
    pooled = small_batch_noise(AxesSpec(batch=2, tokens=4, d=8))  # b·T >= 4: every dot drawn
    assert (pooled.var_spread > 0).all()
    assert {"en": "missing", "zh": "缺失"}[lang] not in small_batch_lesson(pooled, lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_batch_size_is_not_compared_with_itself(lang):
    """``ax_sizes=1`` read "with b = 1 … 0.254σ; at b = 1 still by 0.254σ … 1.02 to 1.02"."""
    from engine.axes.small_batch import small_batch_noise
    from ui.text.axes import small_batch_lesson

    one = small_batch_noise(AxesSpec(), batch_sizes=(1,))
    said = small_batch_lesson(one, lang).replace("\u00a0", " ")
    assert said.count("b = 1") == 1 and {"en": "still by", "zh": "仍有"}[lang] not in said
    assert {"en": "values per channel", "zh": "个值"}[lang] in said
    assert {"en": "second batch size", "zh": "再选一个批大小"}[lang] in said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_nan_outputs_at_pad_positions_are_counted_apart_and_explained(lang):
    """RMSNorm at ε = 0 on zero padding: every PAD cell is 0/0.  The page said nothing (it
    counted the real tokens only, none NaN); it now counts the PAD outputs apart, with why.
    The count is torch's own: F.rms_norm on the same tensor."""
    import torch

    from engine.axes.sharing import axes_statistics
    from ui.i18n import sentence_joiner, translate
    from ui.text.axes import nan_note

    spec = AxesSpec(source="padded", kind="rmsnorm", eps=0.0)
    stats = axes_statistics(spec)
    y = torch.nn.functional.rms_norm(torch.from_numpy(stats.x).float(), (spec.d,), eps=0.0)
    nan = torch.isnan(y).numpy()
    assert not nan[stats.real].any() and nan[~stats.real].all()  # the oracle: PAD only
    total = f"{int((~stats.real).sum()) * spec.d:,}"
    counted = translate("axes.legend.nan_pad_only", lang, nan=f"{int(nan.sum()):,}", total=total)
    expected = sentence_joiner(lang).join((counted, translate("axes.legend.nan_cause", lang)))
    assert nan_note(stats, lang) == expected
    # with a nonzero PAD value RMSNorm divides by its square: no NaN, no note
    assert (
        nan_note(
            axes_statistics(AxesSpec(source="padded", kind="rmsnorm", eps=0.0, pad_value=1.0)), lang
        )
        is None
    )


def test_nan_outputs_of_real_tokens_and_pad_positions_are_said_in_one_note():
    """Real tokens' NaN outputs first, the PAD positions' after them, apart; then why."""
    import dataclasses

    from engine.axes.sharing import axes_statistics
    from ui.text.axes import nan_note

    stats = axes_statistics(AxesSpec(source="padded", kind="rmsnorm", eps=0.0))
    y = stats.y.copy()
    y[0, 0, :3] = float("nan")  # three real outputs (a sequence's first token is real)
    assert stats.real[0, 0]
    note = plain(nan_note(dataclasses.replace(stats, y=y), "en"))
    d, pads = stats.spec.d, int((~stats.real).sum())
    assert note.startswith(f"3 of the {int(stats.real.sum()) * d:,} outputs of real tokens are NaN")
    pad_sentence = f"{pads * d:,} of the {pads * d:,} outputs at PAD positions (the gray rows)"
    assert f" {pad_sentence} are NaN too. Their statistic is 0" in note
    assert note.endswith("Any ε > 0 gives 0 there instead.")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_leak_across_sequences_is_said_only_where_batchnorm_moved_another(lang):
    """B = 1 has no other sequence: "BatchNorm even leaks across sequences" was said of a
    measured 0; with B = 4 it is said with how far the others moved."""
    from engine.axes.causal_leak import causal_leak
    from ui.text.axes import causal_lesson

    across = "leaks across sequences" if lang == "en" else "跨序列泄露"
    alone = causal_leak(AxesSpec(batch=1, tokens=8))
    assert across not in plain(causal_lesson(alone, lang))
    several = causal_leak(AxesSpec(batch=4, tokens=8))
    other = float(several.other_samples[several.kinds.index("batchnorm")].max())
    assert other > 0 and across in plain(causal_lesson(several, lang))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_one_token_sentence_is_not_set_against_the_batch_of_one(lang):
    """At T = 1 the sentence is itself a batch of one: no "1 tokens … 1 values …, yet"."""
    facts = " ".join(plain(f) for f in batch_of_one_facts(batch_of_one(AxesSpec(tokens=1)), lang))
    assert "1 tokens" not in facts and "1 values" not in facts and "yet" not in facts
    assert ("T = 1" in facts) and ("refuses" in facts or "拒绝" in facts)
