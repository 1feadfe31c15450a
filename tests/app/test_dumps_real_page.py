"""The Activation dumps page on real activations, through AppTest: it opens on the shipped
SmolLM2 example (numbers checked against the file read with safetensors alone), its Vector
Lab links carry a token's exact numbers, older links still open, its notes match the file,
and its report is computed once per process (the live model: test_dumps_live_page.py)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import numpy as np
import pytest
from safetensors import safe_open
from streamlit.testing.v1 import AppTest

from engine.dumps.example import EXAMPLE_DUMP
from tests.app.conftest import APP
from tests.app.dumps_page import deep_link, page_text, subheaders
from ui.url.codec import parse
from ui.url.pages import VECTOR_LAB
from ui.vector_input import parse_vectors


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


def test_the_page_opens_on_the_example_and_says_what_it_shows():
    at = deep_link({})
    assert not at.exception and not at.error
    assert at.segmented_control(key="du_source").value == "example"
    assert "du_source" not in at.query_params  # the default, left out of the link
    assert "What this stream shows" in subheaders(at)
    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        before = handle.get_tensor("model.layers.11.input")[0, 0].double()  # [576]
        after = handle.get_tensor("model.layers.12.input")[0, 0].double()
    rms = [float(v.pow(2).mean().sqrt()) for v in (before, after)]
    text = page_text(at)
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
    text = page_text(at)
    assert "**4 tokens carry them:**" in text and "`The` in sequence 0" in text
    assert "the largest has magnitude 26,464" in text  # as the story above writes it


def test_the_story_link_opens_the_vector_lab_on_the_tokens_stored_numbers_in_float16():
    at = deep_link({})
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
    lab_text = page_text(lab)
    assert "d = 576" in lab_text and "changed" not in lab_text  # the stored values, exactly
    overflow = "x₁₅² = (981.5)² = 9.633×10⁵ is beyond float16's largest finite number 65,504"
    assert overflow in lab.error[0].value  # the lab's precision story: the square overflows


def test_the_norm_link_carries_the_input_weight_and_epsilon():
    at = deep_link({"du_batch": "1", "du_io_token": "3"})
    assert at.selectbox(key="du_pair").value == -1  # the norm reading the largest entry
    text = page_text(at)
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
    first = deep_link({})
    assert not first.exception and len(reads) == 1
    browser_session("second")
    second = deep_link({"du_log": "false"}, lang="zh")
    assert not second.exception and second.title[0].value == "激活转储"
    assert len(reads) == 1  # the same report, not a second one


def test_older_links_without_du_source_open_the_example_with_their_settings():
    """And links from before the report's sections: at the section of their own settings."""
    at = deep_link({"du_log": "false", "du_token": "30", "du_eps": "0"})
    assert not at.exception and not at.error
    assert at.segmented_control(key="du_source").value == "example"
    assert at.segmented_control(key="du_section").value == "centering"  # du_token's
    warning = " ".join(w.value for w in at.warning)
    assert "`du_token`" in warning and "showing 23" in warning  # the example has 24 tokens
    at.segmented_control(key="du_section").set_value("stream").run()
    assert at.toggle(key="du_log").value is False
    assert (
        deep_link({"du_pair": "2", "du_channel_layer": "3"})
        .segmented_control(key="du_section")
        .value
        == "channels"
    )  # two sections' settings: the first of them
    upload = deep_link({"du_source": "upload"})
    assert "Up to" in page_text(upload) and "What was read" not in subheaders(upload)


@pytest.mark.slow
def test_the_example_is_read_and_reported_once_per_process_not_once_per_visit(
    calls, browser_session
):
    reports = calls("ui.requests.dumps.report")
    opens = calls("ui.requests.dumps.open_dump")
    for visitor in ("first", "second", "third"):
        browser_session(visitor)
        at = deep_link({})
        assert not at.exception
        assert at.subheader  # the report was drawn
    assert len(reports) == 1
    assert len(opens) >= 1 and len(opens) <= 2  # the file's headers, then its layout


def test_the_centering_note_says_the_pooled_share_and_a_single_tokens_own():
    """ "Over all tokens, the share is at most 0.65 %" read as a bound that single tokens
    passed (1.66 %): the note says what is pooled, and how far one token's share reaches.
    Oracle: the stream entries read with safetensors alone, in float64."""
    at = deep_link({"du_section": "centering"})
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


def test_an_outlier_table_cut_to_its_most_extreme_rows_says_how_many_there_are():
    """The example flags 261 (layer, channel) pairs (counted from the file: each channel's
    RMS over its layer's tokens against the layer's median channel); 200 are listed."""
    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        # the stream: each block's input, and the last block's output
        names = [f"model.layers.{i}.input" for i in range(30)] + ["model.layers.29.output"]
        stream = [handle.get_tensor(n).double().numpy() for n in names]
    flagged = 0
    for layer in stream:
        rms = np.sqrt((layer.reshape(-1, layer.shape[-1]) ** 2).mean(0))  # [d]
        flagged += int((rms > 5 * np.median(rms)).sum())
    at = deep_link({"du_section": "channels"})
    assert not at.exception
    assert f"The table lists the 200 most extreme; {flagged} are flagged in all." in page_text(at)
