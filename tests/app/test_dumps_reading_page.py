"""The Activation dumps page tells its reader how to read the SmolLM2 example, through
AppTest: the DyT chart's r² and flat band, the LayerNorm − RMSNorm chart's scale (checked
against the file read with safetensors alone), and every table's numbers written as its
sentences write them, the values kept under the text."""

from __future__ import annotations

import re

import pytest
import torch
from safetensors import safe_open

from engine.dumps.example import EXAMPLE_DUMP, stream_entry
from tests.app.dump_uploads import shown_cells
from tests.app.dumps_page import deep_link, page_text
from ui.i18n import translate
from ui.views.dumps_tables import INDEX_COLUMNS


def test_the_final_norms_missing_layer_is_a_dash_not_none():
    at = deep_link({"du_section": "norms"})
    fits = shown_cells(next(d for d in at.dataframe if "α" in d.value.columns))
    layers = dict(zip(fits["norm"], fits["layer"]))
    assert layers["model.norm"] == "—" and layers["model.layers.12.input_layernorm"] == "12"


def test_the_dyt_chart_says_how_to_read_it_from_its_fit():
    """r² = 0.484 (on every value of the bulk) on block 12's first norm, and a flat band the
    reader was not told about: the 4 tokens (of the 64 the fit reads) holding SmolLM2's
    massive activation, without which tanh fits (engine.dumps.norm_views.FlatBand)."""
    reading = next(m.value for m in deep_link({"du_section": "norms"}).markdown
                   if "How to read it" in m.value)  # fmt: skip
    reading = reading.replace("\u00a0", " ").replace("**", "")
    assert reading.startswith("How to read it: r² = 0.484 is the share of the output's variance")
    assert "The flat band near y = 0 is 4 of the 64 tokens read:" in reading
    assert "inputs up to |x| = 26,464: massive activations), so their points lie" in reading
    assert "at least 152 times flatter" in reading
    assert "Fitted to the other tokens alone, the curve has r² = 0.979." in reading


def test_the_layernorm_minus_rmsnorm_chart_is_given_its_scale():
    """Its values (~0.04) had nothing to be judged against: the largest, as a share of the
    RMS of RMSNorm(x) there, computed here from the file in float64."""
    at = deep_link({"du_section": "centering"})
    scale = next(c.value for c in at.caption if "Scale of the difference chart" in c.value)
    found = re.search(
        r"difference, ([\d.]+) at layer (\d+) on the (.+?), is ([\d.]+)\u00a0%", scale
    )
    difference, layer, token, percent = found.groups()
    batch, position = (int(n) for n in re.search(r"sequence (\d+), token (\d+)", token).groups())
    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        x = handle.get_tensor(stream_entry(int(layer)))[batch, position].double()
    ln = torch.nn.functional.layer_norm(x, (576,), eps=1e-5)
    rms = x / x.pow(2).mean().add(1e-5).sqrt()
    gap = (ln - rms).pow(2).mean().sqrt().item()
    assert float(difference) == pytest.approx(gap, abs=5e-5)
    assert float(percent) == pytest.approx(100 * gap / rms.pow(2).mean().sqrt().item(), abs=5e-3)


@pytest.mark.parametrize("section", ["stream", "massive", "channels", "norms"])
def test_every_tables_numbers_read_as_the_sentences_write_them(section):
    """A column spanning more than three decades was written with printf's %g ("1082.81"
    beside "4,911.65"), a negative with the ASCII "-": every number is grouped and takes the
    true minus, a place (layer, channel) as typed, and the numbers stay under the text, so a
    column still sorts by value and the table's own CSV holds them."""
    places = {translate(f"dumps.col.{c}", "en") for c in INDEX_COLUMNS}
    at = deep_link({"du_section": section})
    tables = [d for d in at.dataframe if d.value.shape[0]]
    assert tables
    for table in tables:
        shown, values = shown_cells(table), table.value
        for column in [c for c in values.columns if values[c].dtype.kind in "iuf"]:
            cells = " ".join(shown[column])
            assert not re.search(r"-\d", cells), (column, cells)
            if column not in places:
                assert not re.search(r"(?<![\d,.])\d{4}", cells), (column, cells)
    if section == "channels":  # SmolLM2's channel 507, and a negative mean beside it
        channels = next(d for d in tables if "max |a|" in d.value.columns)
        shown = shown_cells(channels)
        assert shown["mean"][0] == "1,082.81" and round(channels.value["mean"][0], 2) == 1082.81
        assert shown["mean"].str.startswith("−").any()


@pytest.mark.parametrize(
    "query, section",
    [
        ({"du_token_layer": "3"}, "centering"),  # an older link: its setting names the section
        ({"du_section": "bogus", "du_pair": "2"}, "stream"),  # refused: the default, as said
        ({"du_section": "bogus", "du_channel_layer": "3"}, "stream"),
        ({"du_batch": "-1", "du_token": "1.5"}, "stream"),  # a refused setting chooses nothing
    ],
)
def test_only_an_accepted_setting_chooses_the_section_a_link_does_not_name(query, section):
    """A refused section was said to show the default while another setting chose a section,
    and settings the link refused chose one too."""
    at = deep_link(query)
    assert not at.exception
    assert at.segmented_control(key="du_section").value == section
    if "du_section" in query:
        assert "It shows the default instead" in " ".join(w.value for w in at.warning)


def test_in_the_files_order_the_facts_say_the_layer_numbers_are_not_the_names():
    """The example stores its entries in text order (0, 1, 10, 11, …): read in it, the story's
    "layer 3" is model.layers.11; the facts say how the page numbers its layers."""
    filed = page_text(deep_link({"du_order": "file"}))
    assert "the page's layer numbers count in this order, not by the names: layer 2 is" in filed
    assert "`model.layers.10.input`" in filed
    assert "layer numbers count in this order" not in page_text(deep_link({}))
