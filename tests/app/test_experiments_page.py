"""The Experiments page through AppTest, on a tiny random Llama (the SmolLM2 locator
monkeypatched to its folder; its 24-token context cuts every text): it opens on its
defaults asking for a prediction, each experiment runs after a committed prediction and a
click and states the measured result, precomputed results are shown at once with their
date and model, hostile link values are named, and the page reads as Chinese in Chinese."""

from __future__ import annotations

import pytest
import torch
from streamlit.testing.v1 import AppTest

from engine.config import EXPERIMENT_SPECS, EXPERIMENTS, SwapSpec, TextSpec
from engine.experiments.experiment import OPTIONS, run_experiment
from engine.experiments.stored import precompute
from tests.app.conftest import APP
from tests.dumps import tiny_models
from ui import live_model
from ui.text.experiments import number

PAGE = "app_pages/experiments.py"
SMALL = {"ex_tokens": "16", "ex_window": "4"}  # 16 tokens, windows of 4 for the mean


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A tiny Llama whose [BOS] embedding carries a massive entry, as SmolLM2's first token;
    no precomputed results unless a test writes them."""
    model = tiny_models.build("llama")
    with torch.no_grad():
        for param in model.parameters():
            if param.dim() == 2:
                param.mul_(15.0)
        model.model.embed_tokens.weight[2, 5] = 1000.0  # [BOS] is token 2
    folder = tmp_path / "model"
    model.save_pretrained(folder)
    tiny_models.tokenizer().save_pretrained(folder)
    monkeypatch.setattr("engine.dumps.live.smollm2_gguf", lambda: folder)
    monkeypatch.setenv("NORMSCOPE_EXPERIMENTS_DIR", str(tmp_path / "precomputed"))
    live_model.forget()
    return folder


def _open(query: dict, lang: str = "en") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"lang": lang, **query})
    at.switch_page(PAGE)
    return at.run()


def _text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for kind in ("success", "info", "warning", "error") for e in at.get(kind)]
    return "\n".join(parts)


def _commit(at, option: str) -> AppTest:
    at.radio[0].set_value(option).run()
    next(b for b in at.button if b.key.startswith("ex_commit_")).click().run()
    return at


def _refusals(at) -> list[str]:
    """Error messages other than a wrong prediction's verdict."""
    return [e.value for e in at.error if e.icon != ":material/cancel:"]


def _run(at) -> AppTest:
    assert live_model.model_load().wait(120)
    at.run()
    assert [b for b in at.button if b.key == "ex_run"], _text(at) + str(_refusals(at))
    at.button(key="ex_run").click().run()
    return at


def test_the_page_opens_on_its_defaults_asking_for_a_prediction_first(tiny):
    at = _open({})
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="ex_experiment").value == "massive"
    assert at.selectbox(key="ex_text").value == "en"
    assert at.number_input(key="ex_tokens").value == 512
    assert "Commit a prediction to run the experiment." in _text(at)
    assert not [b for b in at.button if b.key == "ex_run"]  # no run before a prediction
    commit = next(b for b in at.button if b.key.startswith("ex_commit_"))
    assert commit.disabled  # nothing picked yet


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_linked_model_on_a_server_that_lists_none_says_so(tiny, monkeypatch, lang):
    monkeypatch.delenv("NORMSCOPE_MODEL_DIRS", raising=False)
    at = _open({"ex_model": "zz"}, lang)
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "`ex_model`" in warning and "`zz`" in warning and "—" not in warning
    assert {"en": "lists no models", "zh": "没有列出自己的模型"}[lang] in warning
    assert "ex_model" not in {box.key for box in at.selectbox}  # nothing to choose from


@pytest.mark.slow
@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_each_experiment_runs_on_a_small_budget_and_states_its_measurement(tiny, experiment):
    at = _open({"ex_experiment": experiment, **SMALL})
    question = "same" if experiment not in ("lens", "sweep") else OPTIONS[experiment][0]
    _commit(at, question)
    _run(at)
    assert not at.exception and not _refusals(at), _refusals(at)
    shown = _text(at)
    assert "Measured on 16 of the text's" in shown
    assert at.get("plotly_chart"), "no chart"
    verdicts = [*at.success, *at.get("error"), *at.info]
    assert verdicts, "no verdict"
    # the verdict is the engine's answer to the same request
    live = live_model.model_load().live
    spec = {"massive": dict(window=4)}.get(experiment, {})
    run = run_experiment(live, TextSpec(max_tokens=16), EXPERIMENT_SPECS[experiment](**spec))
    truth = run.answer
    if truth == question:
        assert at.success and "Your prediction holds" in at.success[0].value
    elif truth is not None:
        assert "the measurement says" in at.get("error")[0].value
    if getattr(run.result, "effect", None) is not None:
        ratio = number(run.result.effect.perplexity_ratio)
        assert at.metric[2].value == f"×{ratio}"


def test_a_precomputed_result_is_shown_at_once_with_its_date_and_model(tiny, tmp_path, calls):
    live = live_model.model_load()
    assert live.wait(120)
    precompute(live.live, tmp_path / "precomputed", ("en",), say=lambda line: None)
    runs = calls("ui.requests.experiments.run_experiment")
    fresh = run_experiment(live.live, TextSpec(), SwapSpec())
    at = _open({"ex_experiment": "swap"})
    # the precompute's specs are the defaults, on the default 512 tokens (cut to 24 here)
    _commit(at, fresh.answer)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Precomputed on" in _text(at) and live.live.name in _text(at)
    assert not [b for b in at.button if b.key == "ex_run"] and not runs
    assert at.metric[1].value == number(fresh.result.effect.perplexity)
    # settings with no effect on the run find it too: every block written out, and the
    # window of a setting other than "mean" (greyed out)
    for query in (
        {"ex_experiment": "swap", "ex_swap_block": "0-2"},  # the tiny model's three blocks
        {"ex_experiment": "massive", "ex_window": "7"},
    ):
        at = _commit(_open(query), "same")
        assert not at.exception and "Precomputed on" in _text(at), query
    assert not runs


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"ex_experiment": "explode"}, "ex_experiment"),
        ({"ex_tokens": "99999"}, "ex_tokens"),
        ({"ex_window": "-3"}, "ex_window"),
        ({"ex_text": "<script>"}, "ex_text"),
        ({"ex_swap_block": "1e9", "ex_experiment": "swap"}, "ex_swap_block"),
        ({"ex_freeze_block": "0-", "ex_experiment": "freeze"}, "ex_freeze_block"),
        (
            {"ex_swap_block": " ", "ex_experiment": "swap", "ex_swap_final": "false"},
            "ex_swap_block",
        ),
        ({"ex_prompt": "x" * 9000}, "ex_prompt"),
    ],
)
def test_hostile_link_values_are_named_and_the_page_still_opens(tiny, query, named):
    at = _open(query)
    assert not at.exception
    said = " ".join(w.value for w in [*at.warning, *at.error])  # a clamp, or a refusal
    assert f"`{named}`" in said


@pytest.mark.parametrize(
    ("query", "lang", "said"),
    [
        ({"ex_experiment": "swap", "ex_swap_block": "40"}, "en", "Block 40 is not in this model"),
        ({"ex_experiment": "freeze", "ex_freeze_block": "0-9999"}, "en", "Block {blocks} is not"),
        ({"ex_experiment": "freeze", "ex_freeze_block": "1, 7"}, "zh", "这个模型没有第 7 块"),
    ],
)
def test_a_block_past_the_model_is_refused_as_it_is_typed(tiny, query, lang, said):
    """The model's block count comes from its config before it loads: no prediction is
    asked for, nothing is run (the run's own refusal stays as the backstop)."""
    blocks = tiny_models.build("llama").config.num_hidden_layers
    at = _open({**query, **SMALL}, lang)
    assert not at.exception and not at.radio  # no prediction, so no commit and no run
    refusals = " ".join(e.value for e in at.error)
    assert said.format(blocks=blocks) in refusals
    assert f"`ex_{query['ex_experiment']}_block`" in refusals  # the box that named it
    assert f"0 {'to' if lang == 'en' else '到'} {blocks - 1}" in refusals
    ok = _open({**query, "ex_swap_block": "0", "ex_freeze_block": "0", **SMALL}, lang)
    assert not ok.error and ok.radio


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("abc", "Blocks swapped: `abc` is not a block number"),
        ("", "Blocks swapped: no block is named"),
        ("40", "Blocks swapped: Block 40 is not in this model"),
    ],
)
def test_a_typed_block_is_refused_by_the_boxs_label_not_the_links_key(tiny, typed, said):
    at = _open({"ex_experiment": "swap", "ex_swap_final": "false", **SMALL})
    at.text_input(key="ex_swap_block").input(typed).run()
    refusals = " ".join(e.value for e in at.error)
    assert said in refusals and "ex_swap_block" not in refusals


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_range_written_downward_is_refused_with_it_written_upward(tiny, lang):
    at = _open({"ex_experiment": "swap", "ex_swap_block": "5-2", **SMALL}, lang)
    assert not at.exception
    refusals = " ".join(e.value for e in at.error)
    assert "`5-2`" in refusals and "`2-5`" in refusals


def test_a_set_of_blocks_is_swapped_as_the_engine_swaps_it(tiny):
    at = _open({"ex_experiment": "swap", "ex_swap_block": "1, 0", **SMALL})
    assert at.text_input(key="ex_swap_block").value == "1, 0"
    _commit(at, "same")
    _run(at)
    assert not at.exception and not _refusals(at), _refusals(at)
    live = live_model.model_load().live
    run = run_experiment(live, TextSpec(max_tokens=16), SwapSpec(layers=(0, 1)))
    assert f"{len(run.result.norms)} norms computed as LayerNorm" in _text(at)
    assert len(run.result.norms) == 5  # two blocks' two norms each, and the final norm
    assert at.metric[1].value == number(run.result.effect.perplexity)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_empty_block_box_changes_the_final_norm_alone_or_says_how_to(tiny, lang):
    """The engine swaps the final norm alone (``layers=()``); the page refused an emptied
    box even with "Also the final norm" on, and its refusal did not say how to ask for it."""
    at = _open({"ex_experiment": "swap", "ex_swap_block": "", **SMALL}, lang)
    assert not at.exception and not at.error and at.radio  # asks for the prediction
    if lang == "en":  # (AppTest reruns a Chinese select box by its English name)
        _commit(at, "same")
        _run(at)
        assert not at.exception and not _refusals(at), _refusals(at)
        said = _text(at).replace("\u00a0", " ")
        assert "1 norm computed as LayerNorm instead of RMSNorm: the final norm only" in said
    for experiment in ("swap", "freeze"):
        off = _open({"ex_experiment": experiment, f"ex_{experiment}_block": "",
                     f"ex_{experiment}_final": "false", **SMALL}, lang)  # fmt: skip
        refusals = " ".join(e.value for e in off.error)
        assert f"`ex_{experiment}_block`" in refusals and not off.radio
        final = off.toggle(key=f"ex_{experiment}_final").label
        assert final in refusals, refusals


@pytest.mark.parametrize("experiment", ["swap", "freeze"])
def test_in_chinese_the_block_box_says_it_takes_several_numbers(tiny, experiment):
    """A free-text box: not "multiple choice" (可多选), but what to type."""
    at = _open({"ex_experiment": experiment}, lang="zh")
    label = at.text_input(key=f"ex_{experiment}_block").label
    assert "可多选" not in label and "可填多个，如 0-5, 8" in label


def test_in_chinese_the_question_and_answers_are_chinese(tiny):
    at = _open({"ex_experiment": "lens"}, lang="zh")
    assert not at.exception
    assert at.title[0].value == "在真实模型上做实验"
    assert "哪种解码方式（lens）" in _text(at)
    assert "完全不做归一化" in at.radio[0].options


@pytest.fixture
def operator_models(tiny, tmp_path, monkeypatch):
    """The tiny model also served from an operator's folder, as a second model."""
    folder = tmp_path / "operator"
    folder.mkdir()
    model = tiny_models.build("qwen2")
    model.save_pretrained(folder / "tiny-qwen2")
    tiny_models.tokenizer().save_pretrained(folder / "tiny-qwen2")
    (tmp_path / "outside").mkdir()
    (folder / "leak").symlink_to(tmp_path / "outside")
    monkeypatch.setenv("NORMSCOPE_MODEL_DIRS", str(folder))
    return folder


@pytest.mark.slow
def test_an_operators_model_is_listed_chosen_and_run(operator_models):
    at = _open({"ex_experiment": "swap", **SMALL})
    assert at.selectbox(key="ex_model").options == ["SmolLM2-135M (built in)", "0/tiny-qwen2"]
    at.selectbox(key="ex_model").set_value("0/tiny-qwen2").run()
    _commit(at, "same")
    assert live_model.model_load(str((operator_models / "tiny-qwen2").resolve())).wait(120)
    at.run()
    at.button(key="ex_run").click().run()
    assert not at.exception and not _refusals(at), _refusals(at)
    assert "Measured on 16 of the text's" in _text(at)
    assert at.query_params["ex_model"] == "0/tiny-qwen2"


@pytest.mark.parametrize("value", ["../../etc", "0/leak", "/etc/passwd", "0/tiny-qwen2/.."])
def test_a_linked_model_the_server_does_not_list_is_refused_by_name(operator_models, value):
    at = _open({"ex_model": value})
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "`ex_model`" in warning and "0/tiny-qwen2" in warning
    assert at.selectbox(key="ex_model").value == ""


@pytest.mark.slow
@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_in_chinese_every_precomputed_result_reads_as_chinese(
    tiny, tmp_path, monkeypatch, experiment
):
    from tests.app.test_chinese_pages import _shown
    from tests.untranslated import problems

    # AppTest formats a select box's value in the test's own thread, which has no session
    # and so no language: there, too, the page's language is Chinese
    monkeypatch.setattr("ui.i18n.current_language", lambda: "zh")
    monkeypatch.setattr("ui.widgets.experiments.current_language", lambda: "zh")  # imported
    live = live_model.model_load()
    assert live.wait(120)
    precompute(live.live, tmp_path / "precomputed", ("en",), say=lambda line: None)
    at = _open({"ex_experiment": experiment}, lang="zh")
    question = OPTIONS[experiment][0]
    _commit(at, question)
    assert not at.exception and "已于" in _text(at)  # the precomputed run, at once
    found = {text[:80]: problems(text) for text in _shown(at) if problems(text)}
    assert not found


def test_a_prediction_changed_after_the_result_is_not_judged_as_made_before_it(tiny):
    """Change my prediction, pick the measured answer, commit: the page said "Your
    prediction holds" at once, the result in view the whole time."""
    at = _open({"ex_experiment": "swap", **SMALL})
    assert live_model.model_load().wait(120)
    live = live_model.model_load().live
    truth = run_experiment(live, TextSpec(max_tokens=16), EXPERIMENT_SPECS["swap"]()).answer
    wrong = next(option for option in OPTIONS["swap"] if option != truth)
    _commit(at, wrong)
    _run(at)
    assert "the measurement says" in at.get("error")[0].value
    next(b for b in at.button if b.key.startswith("ex_change_")).click().run()
    _commit(at, truth)
    shown = _text(at)
    assert "after seeing this result" in shown and not at.success, shown
    assert "the measurement says" in at.get("error")[0].value  # still the first one's verdict


def test_a_typed_text_longer_than_accepted_is_refused_with_its_length(tiny):
    """The box's browser limit dropped a 10,000-character paste without a word, and the run
    went on with the held-out text."""
    at = _open({"ex_experiment": "swap", **SMALL})
    assert at.text_area(key="ex_prompt").proto.max_chars == 0
    at.text_area(key="ex_prompt").input("word " * 2_000).run()  # 10,000 characters
    assert not at.exception
    refusals = " ".join(_refusals(at))
    assert "10,000" in refusals and "8,000" in refusals, refusals


def test_a_block_list_too_long_for_its_box_says_the_page_uses_every_block(tiny):
    """Past 200 characters the box's text is not used: the warning says what is (every
    block ran, unsaid, beside a warning that gave only the length)."""
    at = _open({"ex_experiment": "swap", **SMALL})
    box = next(w for w in at.text_input if w.key == "ex_swap_block")
    box.set_value("0, " * 80 + "0").run()
    said = [w.value for w in at.warning]
    assert any("at most 200 are accepted, so the page uses `all` instead" in w for w in said), said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_windows_the_tokens_read_cannot_fill_twice_are_refused_before_the_prediction(tiny, lang):
    """ex_window=512 with ex_tokens=2: a mean over windows cannot be taken from 2 tokens,
    which is known from the settings: refused before the page asks for a prediction (it
    asked, and the run then refused)."""
    query = {"ex_experiment": "massive", "ex_setting": "mean", "ex_window": "512", "ex_tokens": "2"}
    at = _open(query, lang)
    assert not at.exception
    said = " ".join(_refusals(at))
    assert ("at most 2 tokens of the text are read" if lang == "en" else "最多只读取 2 个") in said
    assert not [b for b in at.button if b.key.startswith("ex_commit_")]  # no prediction asked
