"""ui.text.dumps: what was read, said in both languages, with the file's own names shown
literally; the growth fit, the non-finite counts and safe download names."""

from __future__ import annotations

import re

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.torch import save

from engine.dumps import weights_origin
from engine.dumps.capture import capture_info
from engine.dumps.diagnostics import GrowthFit
from engine.dumps.example import EXAMPLE_DUMP
from engine.dumps.report import report
from engine.dumps.sources import Upload
from tests.dumps import dump_files as files
from tests.plain_text import plain
from ui.formatting import SHOWN_CHARS
from ui.text import dumps as text


@pytest.fixture(scope="module")
def rep():
    x = files.stream(layers=4, batch=2, tokens=5, d=8)
    tensors = {f"a|b.{i}": x[i].clone() for i in range(4)}  # a pipe in the names
    return report(Upload("my dump.safetensors", save(tensors, metadata={"model": "**tiny**"})))


def test_layout_facts_name_the_stream_shape_and_order(rep):
    rows = {k: plain(v) for k, v in text.layout_facts(rep, "en")}
    assert rows["File"].startswith("`my dump.safetensors` · ")
    if rep.nbytes < 10_000:  # in bytes already: said once, not "1,496 B (1,496 bytes)"
        assert rows["File"].endswith(f" · {rep.nbytes:,} B") and "bytes)" not in rows["File"]
    assert rows["Residual stream"] == "`a|b.{i}` — inferred: the only candidate"
    assert rows["Shape"] == (
        "L = 4 points of the stream, B = 2, T = 5, d = 8, float32 (320 values)"
    )
    assert rows["Layer order"] == ("by the layer number in the names: `a|b.0` first, `a|b.3` last")
    assert rows["Metadata in the file"] == "`model` = `**tiny**`"  # never bold
    zh = {k: plain(v) for k, v in text.layout_facts(rep, "zh")}
    assert zh["形状"].startswith("L = 4 个残差流位置")


def test_one_stacked_entry_is_ordered_along_its_first_axis_not_by_names():
    """A single [L, T, d] array has no layer numbers in names: its order is its first axis."""
    x = files.stream(layers=3, batch=1, tokens=5, d=8)[:, 0]  # [L, T, d]
    stacked = report(Upload("stack.safetensors", save({"stack": x.clone()})))
    rows = {k: plain(v) for k, v in text.layout_facts(stacked, "en")}
    assert rows["Layer order"].startswith("along the entry's first axis, L:")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_saved_tuple_and_a_single_tensor_are_described_in_words(tmp_path, lang):
    """A tuple of tensors (HF's hidden_states saved as it is) has keys 0, 1, …: no name
    template "{i}" shown as if a placeholder had leaked; a file of one point has no order."""
    x = files.stream(layers=3, batch=1, tokens=5, d=8)
    saved = report(files.write_pt(tmp_path / "states.pt", tuple(x.unbind(0))))
    rows = [plain(v) for _, v in text.layout_facts(saved, lang)]
    assert not any("`{i}`" in row for row in rows)
    by_position = {"en": "the file's tensors in their order, `0` to `2`",
                   "zh": "文件中按顺序排列的张量，`0` 到 `2`"}[lang]  # fmt: skip
    assert rows[1].startswith(by_position)
    alone = report(files.write_pt(tmp_path / "alone.pt", x[0, 0]))
    order = plain(text.layout_facts(alone, lang)[5][1])
    assert (
        order.count("alone") == 1 and {"en": "one point only", "zh": "只有一个位置"}[lang] in order
    )


def test_facts_table_escapes_pipes_so_a_name_stays_in_its_cell(rep):
    table = text.facts_table(text.layout_facts(rep, "en"), ("What", "Read as"))
    stream_row = next(line for line in table.splitlines() if line.startswith("| Residual"))
    assert "`a\\|b.{i}`" in stream_row
    assert stream_row.replace("\\|", "").count("|") == 3  # two cells, three borders


def test_growth_text_writes_the_fit_or_why_there_is_none():
    fits = (
        GrowthFit("all_tokens", 1.165, 4.207, 0.448),
        GrowthFit("median_token", float("nan"), float("nan"), float("nan")),
    )
    sentence = plain(text.growth_text(fits, "en"))
    assert "over all tokens gives ×1.165 per layer (r² = 0.45); that fit is not drawn" in sentence
    assert sentence.startswith("Too few positive, finite layers to fit the median token's")


def test_growth_text_leads_with_the_fit_the_chart_draws():
    """The chart's dashed line is the median token's fit (ui/figures/dumps.py): the sentence
    names it first, with its formula; the all-token fit is said not to be drawn."""
    fits = (GrowthFit("all_tokens", 1.188, 3.47, 0.63), GrowthFit("median_token", 1.1, 2.0, 0.9))
    sentence = plain(text.growth_text(fits, "en"))
    assert sentence.startswith("The median token's RMS grows ×1.1 per layer: the dashed line")
    assert (
        "RMS ≈ 2 · 1.1ˡ" in sentence
        and "gives ×1.188 per layer (r² = 0.63); that fit is not drawn" in sentence
    )
    chinese = plain(text.growth_text(fits, "zh"))
    assert "）。对全部 token" in chinese  # no space after a Chinese full stop


def test_nonfinite_summary_counts_each_kind_over_the_layers():
    counts = np.array([[0, 0, 0], [2, 1, 0], [0, 0, 3]])
    found, sentence = text.nonfinite_summary(counts, 1200, "en")
    assert found and "2 NaN, 1 +inf and 3 −inf among 1,200 values, on 2 layers" in sentence
    _, one = text.nonfinite_summary(np.array([[32, 0, 0], [0, 0, 0]]), 64, "en")
    assert "among 64 values, on 1 layer." in one  # not "1 layers"
    assert text.nonfinite_summary(np.zeros((2, 3), int), 10, "en") == (
        False,
        "All 10 values are finite: no NaN or ±inf.",
    )


@pytest.mark.parametrize(
    "name, expected",
    [
        ("smollm2.safetensors", "smollm2_layers.csv"),
        ("my dump (1).pt", "my_dump_1_layers.csv"),
        ("../../etc/passwd.npy", "passwd_layers.csv"),
        ("激活.npz", "dump_layers.csv"),
    ],
)
def test_download_names_keep_only_safe_characters(name, expected):
    assert text.download_name(name, "layers", "csv") == expected


GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
OLD_SENTENCE = f"GGUF file {GGUF_NAME}, dequantized to float32 by transformers"


@pytest.mark.parametrize(
    "metadata",
    [{"weights": OLD_SENTENCE}, weights_origin.gguf(GGUF_NAME, "float32").metadata()],
    ids=["old_sentence", "fields"],
)
def test_the_weights_row_is_worded_in_the_page_language(metadata):
    origin = weights_origin.from_metadata(metadata)
    assert text.weights_text(origin, "en") == (
        f"GGUF file `{GGUF_NAME}`, dequantized to float32 by transformers"
    )
    assert (
        text.weights_text(origin, "zh")
        == f"GGUF 文件 `{GGUF_NAME}`，由 transformers 反量化为 float32"
    )


def test_a_folders_weights_are_worded_in_both_languages():
    origin = weights_origin.from_metadata({"weights": "tiny-llama (bfloat16)"})  # old form
    assert origin == weights_origin.folder("tiny-llama", "bfloat16")
    assert text.weights_text(origin, "en") == (
        "the save_pretrained folder `tiny-llama`, loaded in bfloat16"
    )
    assert text.weights_text(origin, "zh") == "save_pretrained 目录 `tiny-llama`，以 bfloat16 加载"


def test_other_weights_text_is_shown_as_the_files_own_words():
    origin = weights_origin.from_metadata({"weights": "fine-tuned [here](http://x)"})
    assert text.weights_text(origin, "en") == "`fine-tuned [here](http://x)` (the file's own words)"
    assert text.weights_text(origin, "zh") == "`fine-tuned [here](http://x)`（文件自己的原话）"


def test_the_examples_model_and_weights_rows_are_worded_in_chinese():
    rep = report(EXAMPLE_DUMP)
    assert dict(text.layout_facts(rep, "zh"))["权重"] == (
        f"GGUF 文件 `{GGUF_NAME}`，由 transformers 反量化为 float32"
    )
    assert dict(text.layout_facts(rep, "en"))["Weights"].startswith("GGUF file `")
    assert dict(text.layout_facts(rep, "zh"))["模型"] == f"`{GGUF_NAME}`（`llama`）"


# an image (the browser would fetch it), a link, a line break that ends a table, math, 3 MB
MARKUP = "float32 ![p](https://attacker.example/p.png) [login](https://x.example)\n| a | b |\n$x$"
HOSTILE = {
    "weights_kind": "gguf",
    "weights_file": "m.gguf",
    "weights_dtype": MARKUP + "B" * 3_000_000,
    "weights_converter": "transformers",
    "compute_dtype": MARKUP + "C" * 1_000_000,
    "storage_dtype": MARKUP,
}


def _outside_code_spans(markdown: str) -> str:
    """The Markdown with its code spans (a run of backticks to the same run) taken out."""
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", markdown, flags=re.S)


@pytest.fixture(scope="module")
def hostile_capture():
    with safe_open(str(EXAMPLE_DUMP), "pt") as f:
        meta = {k: v for k, v in f.metadata().items() if k != "weights"} | HOSTILE
        tensors = {name: f.get_tensor(name) for name in f.keys()}
    return report(Upload("hostile.safetensors", save(tensors, metadata=meta)))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_markup_in_a_captures_dtype_metadata_is_shown_literally_and_cut(hostile_capture, lang):
    rows = text.layout_facts(hostile_capture, lang)
    table = text.facts_table(rows, ("What", "Read as"))
    outside = _outside_code_spans(table)
    assert "](" not in outside and "$x$" not in outside and "attacker" not in outside
    lines = table.split("\n")
    assert len(lines) == len(rows) + 2  # no line break got into a cell
    assert all(len(re.findall(r"(?<!\\)\|", line)) == 3 for line in lines[2:])  # two cells
    weights, precision = rows[-2][1], rows[-1][1]
    assert "weights_dtype=float32 ![p]" in weights  # the file's own words, as written
    assert len(weights) < SHOWN_CHARS + 100 and len(precision) < 2 * SHOWN_CHARS + 100
    assert text.storage_dtype(hostile_capture) == "float16"  # the stream's own dtype


@pytest.mark.parametrize(
    "metadata",
    [
        {"weights_kind": "folder", "weights_file": "m", "weights_dtype": "**float32**"},
        {"weights_kind": "gguf", "weights_file": "m", "weights_dtype": "float16"},  # no converter
        weights_origin.gguf("m", "float32").metadata() | {"weights_converter": "[x](http://x)"},
        {"weights": "GGUF file m, dequantized to __float32__ by transformers"},
    ],
    ids=["folder_dtype", "no_converter", "converter", "old_sentence"],
)
def test_weights_fields_of_unknown_values_are_kept_as_the_files_own_words(metadata):
    origin = weights_origin.from_metadata(metadata)
    assert origin.kind == "text"
    assert text.weights_text(origin, "en").startswith("`")  # a code span, never markup


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_examples_prompts_are_a_numbered_list_one_a_line_under_the_table(rep, lang):
    """In one table cell, joined by " · ", the four prompts ran together."""
    example = report(EXAMPLE_DUMP)
    prompts = capture_info(example.metadata).prompts
    title, blank, *items = text.prompt_list(example, lang).split("\n")
    assert title == "**" + ("Prompts (4)" if lang == "en" else "提示（4 条）") + "**" and not blank
    assert items == [f"{i}. `{prompt}`" for i, prompt in enumerate(prompts, 1)]
    assert len(prompts) == 4 and not any("·" in line for line in items)
    assert not any(what == title.strip("*") for what, _ in text.layout_facts(example, lang))
    assert text.prompt_list(rep, lang) is None  # a dump that names no prompt


@pytest.mark.parametrize(
    "token, expected",
    [
        ("\u200d", "\\u200d"),  # a joiner between emoji: a token of its own in SmolLM2
        ("\u200b", "\\u200b"),
        ("\u202eabc", "\\u202eabc"),  # a bidi override would reverse the label after it
        ("\u3000", "\\u3000"),
        (" a\n", "␣a⏎"),
        ("\ufffd", "⟨byte⟩"),
        ("abcdefghijk\u200d", "abcdefghijk…"),  # cut before an escape, never inside it
        ("abcdefghijklm\ufffd", "abcdefghijklm…"),
        ("abcdefghijklmnopq", "abcdefghijklmno…"),
    ],
)
def test_a_tokens_label_shows_invisible_characters_as_escapes(token, expected):
    """A chart's token axis (the RMS heatmap) labels a zero-width token with something to
    see, as the token chips above it do, and no label reorders the text after it."""
    assert text.token_text(token) == expected


def test_the_overflow_table_quotes_each_token_and_lists_them_as_the_language_does():
    """A "," token read as a separator unquoted; Chinese lists take the enumeration comma."""
    from engine.dumps.live_precision import NormOverflow, PrecisionComparison
    from ui.text.dumps_story import overflow_rows

    norm = NormOverflow("model.layers.3.input_layernorm", 3, 300.0, ("ok", "wrong", "nonfinite"),
                        "mean square", False)  # fmt: skip
    comparison = PrecisionComparison("a, b", ("a", ",", " b"), (), (), (norm,), "rmsnorm", 1e-6)
    assert overflow_rows(comparison, "en")[0]["tokens"] == "1 “,”, 2 “␣b”"  # a space shown
    assert overflow_rows(comparison, "zh")[0]["tokens"] == "1 “,”、2 “␣b”"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_stream_halved_at_every_layer_is_said_to_shrink(lang):
    """Every point half the one before (an uploaded dump): the fit is ×0.5 and the median goes
    from 0.5 to 0.125; before, both sentences said "grows" ("grows ×0.500 per layer", "from
    0.5 … to 0.125", in Chinese "增长到")."""
    import torch

    from engine.dumps.story import stream_story
    from ui.text.dumps_story import story_sentences

    tensors = {f"layers.{i}": torch.full((1, 5, 8), 0.5**i) for i in range(4)}
    rep = report(Upload("shrinking.safetensors", save(tensors)))
    growth = plain(text.growth_text(rep.residual.growth, lang))
    others = plain(story_sentences(stream_story(rep), None, lang)[1])
    shrink, grow = {"en": ("shrinks ×0.5", "grow"), "zh": ("每层缩小 ×0.5", "增长")}[lang]
    assert shrink in growth and grow not in growth.split("r²")[0]
    falls = {"en": "Ordinary tokens shrink", "zh": "普通 token 逐渐变小"}[lang]
    assert falls in others and grow not in others


@pytest.mark.parametrize(
    "median, drops", [((1.0, 2.0, 3.0, 0.8), True), ((1.0, 2.0, 2.2, 2.4), False)]
)
def test_the_hidden_states_note_says_the_last_point_drops_only_where_it_does(median, drops):
    note = text.hidden_states_note(np.array(median), "en")
    assert note.startswith("In Hugging Face's output_hidden_states, `hidden_states.0` is")
    assert ("That is why the last point drops." in note) is drops
    chinese = text.hidden_states_note(np.array(median), "zh")
    assert ("所以最后一个点掉了下来" in chinese) is drops


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_vector_lab_link_says_the_kind_and_eps_it_assumes_where_the_dump_names_none(lang):
    """A dump with no metadata names neither (kind "", ε None): the link says RMSNorm with the
    Vector Lab's ε, 10⁻⁵ (the first version read ε from the link, which leaves defaults out,
    and wrote "ε = —"); a named kind is not called assumed."""
    from ui.text.dumps_story import io_link_text

    named = plain(io_link_text(64, "layernorm", 1e-6, lang))
    assert "ε" in named and "RMSNorm" not in named and "LayerNorm" not in named
    for eps, shown in ((None, "ε = 10⁻⁵"), (1e-6, "ε = 10⁻⁶")):
        assumed = plain(io_link_text(64, "", eps, lang))
        assert "RMSNorm" in assumed and shown in assumed and "64" in assumed


def test_a_growing_stream_whose_final_norm_brings_it_down_is_not_said_to_shrink():
    """hidden_states: RMS 2 → 12 over the blocks, then about 1 after the final norm. The last
    point is lower than the first, but the stream grew: it "changes", it does not "shrink"."""
    import torch

    from engine.dumps.story import stream_story
    from ui.text.dumps_story import story_sentences

    scales = (1.0, 2.0, 5.0, 12.0, 1.0)
    tensors = {f"hidden_states.{i}": torch.full((1, 5, 8), s) for i, s in enumerate(scales)}
    story = stream_story(report(Upload("final_norm.safetensors", save(tensors))))
    others = plain(story_sentences(story, None, "en")[1])
    assert "Ordinary tokens change gradually" in others and "shrink" not in others
