"""The Experiments page's sentences write their numbers as its metrics do (``number``:
×10ⁿ), never in a program's e-notation."""

from __future__ import annotations

import re
from types import SimpleNamespace as Run

import numpy as np
import pytest

from engine.config.experiments import FreezeSpec, SwapSpec
from ui.text.experiments import fold_sentences, freeze_sentences, swap_sentences


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_folds_sentence_writes_small_numbers_as_powers_of_ten(lang):
    result = Run(
        max_logit_difference=7.63e-05,
        max_abs_logit=36.0,
        folded=("a",) * 60,
        multiplications_saved=34560,
        multiplications_per_token=10**8,
        parameters_removed=34560,
        parameters_added=0,
        unfoldable=(),
        untied=(),
    )
    first = fold_sentences(Run(result=result), lang)[0]
    assert not re.search(r"\de[-+]\d", first), first
    assert "7.63×10⁻⁵" in first and "2.119×10⁻⁶" in first and "10⁻⁵" in first


@pytest.mark.parametrize(
    ("layers", "final", "en", "zh"),
    [
        ((0, 1, 2, 3, 4, 5), True, "blocks 0–5 and the final norm", "块 0–5，以及最终归一化层"),
        ((3, 10, 11, 12), False, "blocks 3, 10–12", "块 3、10–12"),
        ((7,), False, "block 7", "块 7"),
        (None, True, "every block and the final norm", "所有块，以及最终归一化层"),
        ((), True, "the final norm only", "仅最终归一化层"),
    ],
)
def test_swap_and_freeze_sentences_say_which_blocks_changed(layers, final, en, zh):
    """In presentation's results view the inputs are hidden: the room read "13 norms computed
    as LayerNorm" without which blocks; the sentence names them, as the link gave them."""
    spec = SwapSpec(layers=layers, final=final)
    result = Run(spec=spec, norms=("n",) * 13, to_kind="layernorm", from_kind="rmsnorm",
                 effect=Run(top1_agreement=0.9))  # fmt: skip
    for lang, expected in (("en", en), ("zh", zh)):
        first = swap_sentences(Run(result=result), lang)[0].replace("\u00a0", " ")
        assert expected in first, first
    frozen = Run(spec=FreezeSpec(layers=layers, final=final), norms=("n",) * 8,
                 variation=np.array([0.1, 0.2]), exempt=())  # fmt: skip
    assert en in freeze_sentences(Run(result=frozen), "en")[0].replace("\u00a0", " ")


def test_a_token_is_named_as_the_dumps_page_names_it():
    """A token's leading space, line break or partial character is made visible ("␣market"),
    as on the Activation dumps page, not left as a space inside the code span."""
    from ui.text.experiments import token_label

    texts = (" market", "\n", "\ufffd")
    assert [token_label(texts, i) for i in range(3)] == ["`␣market`", "`⏎`", "`⟨byte⟩`"]
    assert token_label(texts, 3) == "—"


@pytest.mark.parametrize(
    "lang, said",
    [("en", "(where it was set), 1 massive entry: token 0"), ("zh", "有 1 个巨量数值")],
)
def test_one_massive_entry_is_said_in_the_singular(lang, said):
    from ui.text.experiments import massive_sentences

    effect = Run(perplexity_ratio=1.0, reference_perplexity=10.0, perplexity=10.0)
    result = Run(
        effect=effect,
        token=np.array([0]),
        channel=np.array([507]),
        value=np.array([26670.0]),
        replacement=np.array([25330.0]),
        point=12,
        spec=Run(setting="keep"),
        window_values=np.array([]),
    )
    lines = massive_sentences(
        Run(
            result=result,
            token_texts=("a", "."),
        ),
        lang,
    )
    assert said in lines[0] and "entries" not in lines[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_mean_windows_give_each_entry_its_own_range(lang):
    """SmolLM2's two massive entries (channels 247 and 507, ~1,700 and ~23,000) read "from
    1,645 to 24,660" when their windows were pooled, beside a relative spread of 3 %."""
    from ui.text.experiments import massive_sentences

    effect = Run(perplexity_ratio=1.0, reference_perplexity=44.26, perplexity=44.2)
    windows = np.array([[1645.0, 22552.0], [1798.0, 24662.0], [1730.0, np.nan]])
    result = Run(
        effect=effect, token=np.array([0, 0]), channel=np.array([247, 507]),
        value=np.array([1645.0, 22552.0]), replacement=np.array([1726.0, 23660.0]), point=12,
        spec=Run(setting="mean"), window_values=windows, windows=np.array([3, 2]),
    )  # fmt: skip
    (said,) = [line for line in massive_sentences(Run(result=result, token_texts=("a",)), lang)
               if "3" in line and ("windows" in line or "窗口" in line)]  # fmt: skip
    said = said.replace("\u00a0", " ")
    for channel, low, high in ((247, "1,645", "1,798"), (507, "22,550", "24,660")):
        assert str(channel) in said and low in said and high in said, said
    assert "1,645 to 24,660" not in said and "1,645 与 24,660" not in said
    spread = max(np.nanstd(windows, 0) / np.abs(np.nanmean(windows, 0)))
    assert f"{spread:.4g}" in said, said


@pytest.mark.parametrize("lang, swapped, frozen", [
    ("en", "1 norm computed as LayerNorm", "1 norm frozen (the final norm only)"),
    ("zh", "1 个归一化层改用 LayerNorm", "冻结了 1 个归一化层（仅最终归一化层）"),
])  # fmt: skip
def test_the_final_norm_alone_is_one_norm_in_the_singular(lang, swapped, frozen):
    swap = Run(spec=SwapSpec(layers=(), final=True), norms=("model.norm",), to_kind="layernorm",
               from_kind="rmsnorm", effect=Run(top1_agreement=1.0))  # fmt: skip
    assert swapped in swap_sentences(Run(result=swap), lang)[0]
    freeze = Run(spec=FreezeSpec(layers=(), final=True), norms=("model.norm",),
                 variation=np.array([0.07]), exempt=())  # fmt: skip
    said = freeze_sentences(Run(result=freeze), lang)[0]
    assert frozen in said and "0.07" in said and "至" not in said and " to " not in said, said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_values_the_charts_cannot_draw_are_counted_under_them(lang):
    """Freezing every block's scale gives an infinite perplexity: the changed loss line and
    the KL chart were empty, with nothing saying why."""
    from ui.text.experiments import left_out_sentence

    nll = np.array([2.0, np.inf, np.inf, np.nan])
    kl = np.array([0.5, np.inf, np.inf, np.inf, 0.0])  # the last position predicts nothing
    run = Run(result=Run(effect=Run(nll=nll, kl=kl)))
    said = left_out_sentence(run, lang)
    assert said and "3" in said and "4" in said and "∞" in said, said
    finite = Run(result=Run(effect=Run(nll=np.ones(4), kl=np.array([0.1, 0.2, 0.0, 0.1, np.inf]))))
    assert left_out_sentence(finite, lang) is None  # the last KL is never drawn
    assert left_out_sentence(Run(result=Run(effect=None)), lang) is None


def _mean_run(windows: np.ndarray) -> Run:
    entries = windows.shape[1]
    effect = Run(perplexity_ratio=1.0, reference_perplexity=44.26, perplexity=44.26)
    result = Run(
        effect=effect, token=np.zeros(entries, int), channel=np.arange(entries),
        value=windows[0], replacement=windows.mean(0), point=12, spec=Run(setting="mean"),
        window_values=windows, windows=np.full(entries, len(windows)),
    )  # fmt: skip
    return Run(result=result, token_texts=("a",))


def test_the_spread_covers_every_entry_and_the_unnamed_ones_are_counted():
    """Eight entries, only the eighth varying: the largest spread is the eighth's, which the
    sentence did not name; it now says how many it leaves unnamed."""
    from ui.text.experiments import massive_sentences

    windows = np.full((4, 8), 100.0)
    windows[:, 7] = [10.0, 100.0, 200.0, 400.0]
    (said,) = [s for s in massive_sentences(_mean_run(windows), "en") if "windows" in s]
    spread = windows[:, 7].std() / windows[:, 7].mean()
    assert f"at most {spread:.4g}" in said and "channel 5 from 100 to 100" in said
    assert "channel 6" not in said and "2 more" in said, said


@pytest.mark.parametrize("lang, said", [("en", "the entry's relative spread"), ("zh", "这个数值")])
def test_one_entry_over_the_windows_is_said_in_the_singular(lang, said):
    from ui.text.experiments import massive_sentences

    windows = np.array([[100.0], [110.0], [90.0]])
    lines = massive_sentences(_mean_run(windows), lang)
    (line,) = [s for s in lines if "3" in s and ("windows" in s or "窗口" in s)]
    assert said in line and "each entry" not in line and "每个数值" not in line, line


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presenting_each_experiment_names_its_settings_in_one_line(lang):
    """The questions say "set them as chosen", "in the chosen blocks": presenting, the box
    holding the choice is closed (hidden in results mode), so a line above the question
    names the experiment and each setting, by its control's own label."""
    from engine.config import EXPERIMENT_SPECS, FoldSpec, FreezeSpec, HalfSpec, MassiveSpec
    from ui.i18n import translate
    from ui.text.experiments import chosen_line

    chosen = {
        "massive": MassiveSpec(setting="mean", window=32),
        "freeze": FreezeSpec(layers=(0, 1, 2, 5), final=True, exempt="first"),
        "fold": FoldSpec(final=False),
        "half": HalfSpec(upcast=True),
    }
    for experiment, spec_class in EXPERIMENT_SPECS.items():
        line = chosen_line(experiment, chosen.get(experiment, spec_class()), lang)
        assert translate(f"experiments.names.{experiment}", lang) in line and "{" not in line
    words = {key: translate(f"experiments.{key}", lang) for key in (
        "setting.mean", "setting.window", "exempt.first", "fold.final", "half.upcast"
    )}  # fmt: skip
    massive = chosen_line("massive", chosen["massive"], lang)
    assert words["setting.mean"] in massive and words["setting.window"] in massive
    freeze = chosen_line("freeze", chosen["freeze"], lang)
    blocks = "0–2、5" if lang == "zh" else "0–2, 5"  # the runs of blocks, in its language
    assert blocks in freeze and words["exempt.first"] in freeze
    assert translate("app.no", lang) in chosen_line("fold", chosen["fold"], lang)
    assert translate("app.yes", lang) in chosen_line("half", chosen["half"], lang)


def _ran_caption(tokens: int, text_tokens: int) -> None:
    from types import SimpleNamespace

    from ui.views.experiments import ran

    ran(SimpleNamespace(tokens=tokens, text_tokens=text_tokens, seconds=2.04))


@pytest.mark.parametrize(
    ("tokens", "lang", "said"),
    [
        (512, "en", "Measured on 512 of the text's 973 tokens in 2.0\u00a0s."),
        (973, "en", "Measured on all 973 tokens of the text in 2.0\u00a0s."),
        (512, "zh", "在文本全部 973 个 token 中的前 512 个上测量，用时 2.0 秒。"),
        (973, "zh", "在文本全部 973 个 token 上测量，用时 2.0 秒。"),  # not "the first 973 of 973"
    ],
)
def test_a_run_says_how_much_of_the_text_it_measured(tokens, lang, said):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_ran_caption, args=(tokens, 973), default_timeout=30)
    at.session_state["language"] = lang
    assert [c.value for c in at.run().caption] == [said]


def test_the_mildest_single_freeze_is_the_least_change_up_or_down():
    """None within 5 %: ×0.50 halved the perplexity, ×1.20 raised it by a fifth; the mildest
    is the second (the least change), not the lowest ratio."""
    from ui.text.experiments import sweep_sentences

    runs = tuple(Run(effect=Run(perplexity_ratio=r)) for r in (0.5, 1.2))
    sweep = Run(
        perplexity_ratio=np.array([0.5, 1.2]),
        tolerated=np.array([False, False]),
        layers=(0, 1),
        spec=Run(tolerance=0.05),
        results=runs,
    )
    first = sweep_sentences(Run(result=sweep), "en")[0]
    assert "the mildest is block 1 (×1.2)" in first, first


def test_a_sweep_where_every_freeze_is_alike_names_no_worst_block():
    from ui.text.experiments import sweep_sentences

    sweep = Run(
        perplexity_ratio=np.array([1.0, 1.0, 1.0]),
        tolerated=np.array([True, True, True]),
        layers=(0, 1, None),
        spec=Run(tolerance=0.05),
    )
    said = " ".join(sweep_sentences(Run(result=sweep), "en"))
    assert "The worst is" not in said and "3 of 3" in said


def test_lists_cut_at_six_say_how_many_more():
    """Nine massive entries and nine exempt tokens: the sentences named six and stopped."""
    from engine.config.experiments import MassiveSpec
    from ui.text.experiments import massive_sentences

    nine = np.arange(9)
    effect = Run(perplexity_ratio=1.0, reference_perplexity=10.0, perplexity=10.0)
    result = Run(spec=MassiveSpec(), point=3, token=nine, channel=nine, value=nine * 100.0,
                 replacement=np.zeros(9), effect=effect, window_values=np.zeros((0, 9)),
                 windows=np.zeros(9, dtype=int))  # fmt: skip
    run = Run(result=result, token_texts=tuple(f"t{i}" for i in range(9)))
    assert "and 3 more" in massive_sentences(run, "en")[0]
    frozen = Run(spec=FreezeSpec(), norms=("n",) * 8, variation=np.array([0.1, 0.2]),
                 exempt=tuple(range(9)))  # fmt: skip
    assert "and 3 more" in " ".join(
        freeze_sentences(Run(result=frozen, token_texts=run.token_texts), "en")
    )
