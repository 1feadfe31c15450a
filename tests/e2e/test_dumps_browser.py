"""The Activation dumps page in a real browser: upload a dump made here, see its diagnostics;
upload a bad file, see the message naming it; a second browser session sees none of it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import torch
from playwright.sync_api import expect
from safetensors.torch import save_file

from tests.dumps import dump_files as files
from tests.e2e.browser import SLOW_MS, address_holds, new_context, wait_idle
from ui.i18n import translate

pytestmark = pytest.mark.e2e

UPLOADER = "[data-testid='stFileUploaderDropzoneInput']"


def _dump(tmp_path):
    x = files.stream(layers=6, batch=1, tokens=12, d=32)  # 2500 on token 0, channel 3
    tensors = {name: value.clone() for name, value in files.module_names(x).items()}
    path = tmp_path / "tiny_dump.safetensors"
    save_file(tensors, str(path))
    return path


def _upload(page, path) -> None:
    page.locator(UPLOADER).set_input_files(str(path))
    wait_idle(page)
    page.locator("h2, h3").filter(has_text="What was read").wait_for(timeout=60_000)
    wait_idle(page)


def _alert(page, text: str):
    return page.locator("[data-testid='stAlert']").filter(has_text=text)


SECTIONS = (  # the switch's label, the section in the link, the charts it draws
    ("LayerNorm vs RMSNorm", "centering", 3),
    ("Channels", "channels", 2),
    ("A norm's input and output", "norms", 2),
    ("Massive activations", "massive", 1),
    ("Residual stream", "stream", 2),
)


def test_upload_see_the_diagnostics_then_a_bad_file_and_a_second_session(
    browser, page, server_url, screenshot, tmp_path
):
    page.goto(server_url + "/dumps?lang=en&du_source=upload")  # the page opens on the example
    wait_idle(page)
    expect(page.get_by_text("Up to 200 MB per file")).to_be_visible()
    _upload(page, _dump(tmp_path))
    for heading in ("Residual stream: RMS per layer and token", "Downloads"):
        expect(page.get_by_role("heading", name=heading)).to_be_visible()
    # each section of the report with its charts (ten in all), one click away
    for label, section, charts in SECTIONS:
        page.locator(".st-key-du_section").get_by_text(label, exact=True).click()
        wait_idle(page)
        expect(page.locator(".stPlotlyChart")).to_have_count(charts, timeout=SLOW_MS)
        assert page.locator("[data-testid='stException']").count() == 0
        if section != "stream":  # the default: left out
            address_holds(page, f"du_section={section}")
        screenshot(page, f"dumps_en_{section}.png", full_page=True)
    page.locator(".st-key-du_section").get_by_text("Massive activations").click()
    wait_idle(page)
    expect(page.get_by_role("heading", name="Massive activations")).to_be_visible()
    expect(page.get_by_text("4 massive activations", exact=False)).to_be_visible()
    assert "tiny_dump" not in page.url  # the file is not in the link
    # the downloads are written when clicked: the JSON summary and one table as CSV
    with page.expect_download() as download:
        page.get_by_role("button", name="Summary and every table (JSON)").click()
    summary = json.loads(Path(download.value.path()).read_text())
    assert download.value.suggested_filename == "tiny_dump_report.json"
    assert summary["layout"]["stream"] == "model.layers.{i}"
    assert len(summary["tables"]["massive_activations"]) == 4
    with page.expect_download() as download:
        page.get_by_role("button", name="layers (6 rows)").click()
    lines = Path(download.value.path()).read_text().splitlines()
    assert lines[0].startswith("layer,entry,rms,") and len(lines) == 7

    # a pickle that would run code, under the same uploader: refused, named, never run
    marker = tmp_path / "ran.txt"
    buffer = io.BytesIO()
    torch.save({"h": torch.zeros(2, 3), "x": _Payload(marker)}, buffer)
    bad = tmp_path / "evil.pt"
    bad.write_bytes(buffer.getvalue())
    page.locator(UPLOADER).set_input_files(str(bad))
    wait_idle(page)
    expect(_alert(page, "refused without running it")).to_be_visible(timeout=SLOW_MS)
    expect(_alert(page, "evil.pt")).to_be_visible()
    assert not marker.exists()
    expect(page.get_by_role("heading", name="Massive activations")).to_have_count(0)

    # another browser session, even from the same link (in Chinese), sees an empty uploader,
    # its button in the page's language and no English limit line under it
    other_context = new_context(browser, viewport={"width": 1400, "height": 2400}, locale="zh-CN")
    try:
        other = other_context.new_page()
        assert "lang=en" in page.url
        other.goto(page.url.replace("lang=en", "lang=zh"))
        wait_idle(other)
        expect(other.get_by_role("heading", name="激活转储")).to_be_visible()
        assert other.locator("[data-testid='stFileUploaderFile']").count() == 0
        button = other.locator("[data-testid='stFileUploaderDropzone'] button p")
        assert button.evaluate("p => getComputedStyle(p, '::after').content") == '"上传"'
        assert button.evaluate("p => getComputedStyle(p).fontSize") == "0px"  # "Upload" unseen
        assert not other.get_by_text("per file").is_visible()
        assert "evil.pt" not in other.content() and "tiny_dump" not in other.content()
        heading = translate("dumps.inferred_title", "zh")
        expect(other.get_by_role("heading", name=heading)).to_have_count(0)
    finally:
        other_context.close()


class _Payload:
    """Unpickling this writes ``marker``: what a malicious checkpoint would do."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


LINES = """node => { const range = document.createRange(); range.selectNodeContents(node);
  return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size; }"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_examples_names_stay_whole_and_its_prompts_are_a_list(page, server_url, lang):
    """At 1280 px "model.layers.{i}.post_attention_layernorm.input" broke inside the name,
    the first column ran two characters a line in Chinese, and the four prompts ran together
    in one cell."""
    page.set_viewport_size({"width": 1280, "height": 1600})
    page.goto(server_url + f"/dumps?lang={lang}")
    wait_idle(page)
    facts = page.locator(".st-key-dumps_facts [data-testid='stMarkdownContainer']")
    expect(facts.locator("td code").first).to_be_visible(timeout=60_000)
    codes = facts.locator("td code")
    assert codes.count() > 10
    assert {codes.nth(i).evaluate(LINES) for i in range(codes.count())} == {1}
    firsts = facts.locator("tr > td:first-child")
    assert {firsts.nth(i).evaluate(LINES) for i in range(firsts.count())} == {1}
    assert facts.evaluate("box => box.scrollWidth <= box.clientWidth + 1")
    expect(page.locator(".st-key-dumps_prompts li")).to_have_count(4)
