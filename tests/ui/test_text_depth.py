"""ui.text.depth: the Depth page's notes say what the engine's numbers show."""

import numpy as np
import pytest

from engine import DepthSpec, simulate_depth
from engine.config import TrainSpec
from engine.threads import torch_threads
from engine.training.loop import TrainStep, learning_rate, summarize
from ui.formatting import format_reading
from ui.text.depth import coincidence_notes, residual_notes, run_name, update_notes, warmup_cut_note


@pytest.fixture(scope="module")
def post_deepnorm_none():
    with torch_threads(1):
        return [
            simulate_depth(DepthSpec(placement=p, layers=24, d=64, tokens=8))
            for p in ("post", "deepnorm", "none")
        ]


@pytest.mark.parametrize(
    "lang, apart, charts",
    [
        ("en", "charts below tell them apart:", ("relative update", "cosine", "weight on x₀")),
        ("zh", "图能把它们分开", ("相对更新", "余弦", "x₀ 权重")),
    ],
)
def test_post_and_deepnorm_share_a_line_only_where_their_numbers_agree(
    post_deepnorm_none, lang, apart, charts
):
    """Both renormalise the stream, so their mean squares are one line; their branches do
    not write the same amount (relative update about 1 against 0.05), and the note says so."""
    post, deepnorm, _ = post_deepnorm_none
    assert np.allclose(post.residual_ms, deepnorm.residual_ms, rtol=0.01)
    assert np.median(post.update_ratio) > 5 * np.median(deepnorm.update_ratio)
    (note,) = coincidence_notes(post_deepnorm_none, lang)
    assert "write the same amount" not in note and "写入的量相同" not in note
    assert ("norm on the stream itself" in note) or ("对残差流本身做归一化" in note)
    assert apart in note and all(chart in note for chart in charts)
    assert "coincide too" not in note and "同样重合" not in note


def test_pre_norms_update_note_shows_only_with_a_pre_norm_run(post_deepnorm_none):
    """ "Deep Pre-Norm layers barely change the stream" was written under a chart with no
    Pre-Norm line."""
    assert update_notes(post_deepnorm_none, "en") == []
    with torch_threads(1):
        pre = simulate_depth(DepthSpec(placement="pre", layers=24, d=64, tokens=8))
    (note,) = update_notes([*post_deepnorm_none, pre], "zh")
    assert "Pre-Norm" in note and "1/√l" in note


def test_pre_norms_notes_say_what_its_numbers_show():
    """Branches as large as the stream: ‖F_l‖/‖x_l‖ falls like 1/√l, and the note says by how
    much. Small branches (std 0.02, residual scaling): it stays flat and the stream barely
    grows; the notes said "falls like 1/√l" and "grows about linearly" all the same."""
    with torch_threads(1):
        wide = simulate_depth(DepthSpec(placement="pre", layers=24, d=64, tokens=8))
        small = simulate_depth(
            DepthSpec(placement="pre", layers=24, d=64, tokens=8, init_std=0.02,
                      residual_scaling=True, sublayer="mlp", norm="rmsnorm")
        )  # fmt: skip
    (note,) = update_notes([wide], "en")
    assert "falls like 1/√l" in note and "at layer 24" in note
    (note,) = update_notes([small], "en")
    assert "falls like" not in note and "not the 1/√l fall" in note
    assert 0.8 < small.update_ratio[0] / small.update_ratio[-1] < 1.25  # flat, as it says
    (note,) = residual_notes([small], "en")
    first, last = small.residual_ms[0], small.residual_ms[-1]
    said = f"from {format_reading(first, 3)} at the input to {format_reading(last, 3)} after"
    assert said in note and "Under Lemma 2's assumptions" in note and last / first < 1.1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_one_layer_post_norm_stack_is_not_averaged_over_1_layers(lang):
    """At L = 1 the note read "averaged over 1 layers (from 2.09 to 2.09)"."""
    with torch_threads(1):
        post = simulate_depth(DepthSpec(placement="post", layers=1, d=64, tokens=8))
    (note,) = residual_notes([post], lang)
    measured = f"{float(post.pre_norm_ms[0]):.2f}"
    assert measured in note and "1 layers" not in note and "averaged" not in note
    assert "范围" not in note and note.count(measured) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_no_norm_stack_is_said_to_grow_geometrically_by_its_measured_factor(
    post_deepnorm_none, lang
):
    """The factor is the geometric mean of the stack's own growth; with the default
    1/√fan-in init float32 overflows, and the note stops at the last finite layer."""
    none = post_deepnorm_none[2]
    (note,) = [n for n in residual_notes(post_deepnorm_none, lang) if "×" in n]
    ms = none.residual_ms
    factor = (ms[24] / ms[0]) ** (1 / 24)  # the oracle: first and last mean square
    assert f"×{factor:.3f}" in note and ("after layer 24" in note or "第 24 层" in note)
    with torch_threads(1):
        wild = simulate_depth(DepthSpec(placement="none", layers=300, d=64, tokens=8))
    last = int(np.flatnonzero(np.isfinite(wild.residual_ms))[-1])
    assert 1 < last < 300  # float32 overflowed at layer last + 1
    (note,) = residual_notes([wild], lang)
    assert (f"after layer {last}." in note) or (f"第 {last} 层之后" in note)


def _run(spec: TrainSpec):
    steps = [TrainStep(i, 2.3, 0.1, learning_rate(spec, i), 1.0) for i in range(1, spec.steps + 1)]
    return summarize(spec, steps)


@pytest.mark.parametrize("lang, words", [("en", "outlasted"), ("zh", "从未达到峰值")])
def test_a_warm_up_longer_than_the_run_says_the_peak_was_never_reached(lang, words):
    """50 steps with the 100-step warm-up: Run B "Post-Norm + warm-up" ended at half the
    learning rate its label names, and nothing said so."""
    short = _run(TrainSpec(steps=50, warmup=True))
    note = warmup_cut_note(short, lang)
    assert note is not None and words in note
    assert "100" in note and "50" in note and f"{short.lr[-1]:.2g}" in note and "0.003" in note
    assert warmup_cut_note(_run(TrainSpec(steps=300, warmup=True)), lang) is None
    assert warmup_cut_note(_run(TrainSpec(steps=50)), lang) is None


def test_a_runs_name_takes_the_punctuation_of_its_language():
    """Chinese runs were named "运行 A: Pre-Norm", an English colon in the legend and the
    outcome lines."""
    assert run_name("运行 B", "post", True, "zh") == "运行 B（Post-Norm + 预热）"
    assert run_name("Run A", "pre", False, "en") == "Run A (Pre-Norm)"


def test_the_x0_note_says_what_the_runs_measured_and_names_a_line_only_where_drawn():
    """Post-Norm with small branches (d = 64, an MLP, init 0.02) kept x₀'s weight near 1 under
    "the identity path … is washed out"; DeepNorm alone was told of "each Post-Norm layer" and of
    "the line", none drawn."""
    from ui.text.depth import x0_note

    small = simulate_depth(DepthSpec(placement="post", d=64, sublayer="mlp", init_std=0.02))
    big = simulate_depth(DepthSpec(placement="post"))
    assert small.x0_weight[-1] > 0.9 and big.x0_weight[-1] < 1e-3
    kept = x0_note([small], small.branch_gain, False, "en")
    assert "is still" in kept and "washed out" not in kept
    washed = x0_note([big], big.branch_gain, False, "en")
    assert f"falls to {format_reading(float(big.x0_weight[-1]))} by layer 48" in washed
    deep = simulate_depth(DepthSpec(placement="deepnorm"))
    alone = x0_note([deep], None, False, "en")
    assert "Each Post-Norm layer" not in alone and "The line is first order" not in alone


def test_two_pre_norm_layers_are_not_said_to_barely_change_the_stream():
    """L = 2: the relative update goes from 0.99 to 0.71, a 1/√l fall, yet the note said
    "Deep Pre-Norm layers barely change the stream"."""
    shallow = simulate_depth(DepthSpec(placement="pre", layers=2))
    assert shallow.update_ratio[-1] > 0.25
    (said,) = update_notes([shallow], "en")
    assert "barely change" not in said and "sizeable share" in said
    deep = simulate_depth(DepthSpec(placement="pre"))
    assert "barely change the stream" in update_notes([deep], "en")[0]
