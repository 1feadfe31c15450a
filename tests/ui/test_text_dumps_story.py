"""ui.text.dumps_story and the growth text: what the Activation dumps page says a stream
shows (the first token's jump, ordinary tokens' growth, the largest entry against float16),
checked against numbers computed here from the tensors written."""

from __future__ import annotations

import pytest
from safetensors.torch import save

from engine.dumps.report import report
from engine.dumps.sources import Upload
from tests.dumps import dump_files as files
from tests.plain_text import plain
from ui.text import dumps as text


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid:RuntimeWarning")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_story_of_a_stream_past_float64s_square_says_infinity(lang):
    import torch

    from engine.dumps.story import stream_story
    from ui.text.dumps_story import story_sentences

    tensors = {
        f"hidden_states.{i}": torch.full((1, 4, 8), 1e200, dtype=torch.float64) for i in range(3)
    }
    rep = report(Upload("huge.safetensors", save(tensors)))
    sentences = story_sentences(stream_story(rep), None, lang)
    assert any("∞" in sentence for sentence in sentences)  # 1e200² is past float64: said, no crash


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_story_writes_a_large_square_with_its_power_of_ten(lang):
    """12,345² = 152,399,025 (by hand), past float16's 65,504: "1.524×10⁸", as the
    formulas write it, never "1.524e+08"."""
    import torch

    from engine.dumps.story import stream_story
    from ui.text.dumps_story import story_sentences

    tensors = {f"hidden_states.{i}": torch.ones((1, 4, 8)) for i in range(3)}
    tensors["hidden_states.2"][0, 1, 3] = 12345.0
    rep = report(Upload("big.safetensors", save(tensors)))
    sentences = " ".join(plain(s) for s in story_sentences(stream_story(rep), None, lang))
    assert "1.524×10⁸" in sentences and "e+" not in sentences


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sequence_that_jumps_as_a_whole_is_not_said_to_grow_gradually(lang):
    """Every token's RMS ×40 from point 1 to point 2 (a repeated prompt does this in SmolLM2):
    no first-token jump (its step is the others'), said with the ×10 it is measured
    against, and the others' ×40 named as a jump at layer 2, not "gradually"."""
    import torch

    from engine.dumps.story import stream_story
    from ui.text.dumps_story import story_sentences

    scale = (1.0, 1.0, 40.0, 40.0)
    tensors = {f"hidden_states.{i}": torch.full((1, 5, 8), s) for i, s in enumerate(scale)}
    story = stream_story(report(Upload("whole.safetensors", save(tensors))))
    assert story.others_max_step == pytest.approx(40.0) and story.others_max_step_at == 2
    no_jump, others = (plain(s) for s in story_sentences(story, None, lang)[:2])
    assert "×10" in no_jump and "×1 " not in no_jump
    jump_words = {"en": "The other tokens jump too", "zh": "其他 token 也会跃升"}[lang]
    at_layer = {"en": "at layer 2", "zh": "第 2 层"}[lang]
    assert jump_words in others and "×40" in others and at_layer in others


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_first_token_jump_without_a_massive_entry_is_not_called_massive_activations(lang):
    """Token 0 ×100 from point 2 on, spread over all 8 entries (each 100 · ~1): no entry passes
    |a| > 100 and > 1000× the median, so the massive section lists none and the story does not
    send the reader there; a single entry of 20,000 on it is listed, and named so."""
    import torch

    from engine.dumps.story import stream_story
    from ui.text.dumps_story import story_sentences

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(4, 1, 6, 8, generator=generator)  # [L, B, T, d]
    x[2:, 0, 0] *= 100.0
    assert (x.abs() > 500).sum() == 0  # the oracle: each entry far below 1000× the median
    rep = report(Upload("whole_token.safetensors", save(files.hf_names(x))))
    assert int(rep.massive.count.sum()) == 0
    jump = plain(story_sentences(stream_story(rep), None, lang)[0])
    words = {"en": ("massive activations section's threshold", "the massive activations section counts them"),
             "zh": ("超过“巨量激活”一节的阈值", "巨量激活一节会逐一计数")}[lang]  # fmt: skip
    assert words[0] in jump and words[1] not in jump
    x[2:, 0, 0, 3] = 20000.0
    rep = report(Upload("massive.safetensors", save(files.hf_names(x))))
    assert int(rep.massive.count.sum()) > 0
    assert words[0] not in plain(story_sentences(stream_story(rep), None, lang)[0])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_layer_of_zeros_is_named_and_no_step_out_of_it_is_called_infinite(lang):
    """A stream whose point 3 is all zeros, each other step ×1.1: the step out of the zeros
    has no ratio, so the largest step is the finite ×1.1, and the zeros are named."""
    import torch

    from engine.dumps.story import stream_story
    from ui.text.dumps_story import story_sentences

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(1, 1, 6, 8, generator=generator) * 1.1 ** torch.arange(6.0).view(6, 1, 1, 1)
    x[3] = 0.0
    story = stream_story(report(Upload("zeros.safetensors", save(files.hf_names(x)))))
    rms = x[:, 0, 1:].pow(2).mean(-1).sqrt().median(-1).values.double()  # the oracle
    finite = [float(b / a) for a, b in zip(rms[1:-1], rms[2:]) if a > 0]
    assert story.others_max_step == pytest.approx(max(finite), rel=1e-6)
    assert story.others_zero_at == (3,)
    said = " ".join(plain(s) for s in story_sentences(story, None, lang))
    assert "∞" not in said
    named = {"en": "At layer 3 at least half", "zh": "在第 3 层，其他 token 中至少一半"}[lang]
    assert named in said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_growth_fit_and_a_square_are_written_as_the_page_writes_numbers(lang):
    """A stream ×10³⁰ fits an intercept near 10³⁰: "×10²⁹", never "e+29"; a largest entry of
    301.1 squares to 90,661.21 (by hand), past float16: four significant digits, "90,660"."""
    import torch

    from engine.dumps.story import stream_story
    from ui.text.dumps_story import story_sentences

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(4, 1, 6, 8, generator=generator, dtype=torch.float64) * 1e30
    rep = report(Upload("huge.safetensors", save(files.hf_names(x))))
    growth = plain(text.growth_text(rep.residual.growth, lang))
    assert "e+" not in growth and "×10" in growth
    y = torch.ones(4, 1, 6, 8)
    y[2, 0, 3, 1] = 301.1
    rep = report(Upload("square.safetensors", save(files.hf_names(y))))
    said = " ".join(plain(s) for s in story_sentences(stream_story(rep), None, lang))
    assert "90,660" in said and "90,661.2" not in said
