"""What the Activation dumps page says where a number needs a caveat or was read from too
little: massive activations counted from the reduction (not the 256 listed per layer), a
token holding NaN/inf, a token of equal entries, a stream of two points, a median |a| read
on bfloat16's grid, and singular and translated words.  Numbers checked here by hand or with
numpy on the arrays written."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from engine.dumps.diagnostics import massive_carriers, massive_channels
from engine.dumps.limits import ACCEPTED_SUFFIXES
from engine.dumps.norm_views import token_norms
from engine.dumps.report import report
from engine.dumps.sources import Upload, resolve_files
from engine.dumps.story import stream_story
from engine.errors import EngineError, Listing
from tests.plain_text import plain
from ui.i18n import translate
from ui.text import dumps_notes as notes
from ui.text.dumps_story import massive_tokens_sentence, story_sentences


def _npy(array: np.ndarray, name: str) -> Upload:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return Upload(name, buffer.getvalue())


def _chan() -> np.ndarray:
    """Channel 5 of layer 1 is 5,000 on all 300 tokens; one entry of channel 9, 3,000, is
    past the threshold too (about 700) but not among the layer's 256 largest."""
    a = np.random.default_rng(0).standard_normal((2, 300, 16)).astype(np.float32)
    a[1, :, 5] = 5000
    a[1, 7, 9] = 3000
    return a


def _many() -> np.ndarray:
    """300 entries of token 0 at 5,000 on each layer fill the 256 listed; token 3's five
    entries of 3,000 pass the threshold too."""
    a = 0.5 * np.random.default_rng(0).standard_normal((2, 8, 512))
    a[:, 0, :300] = 5000
    a[:, 3, 400:405] = 3000
    return a


def test_massive_channels_and_carriers_count_every_entry_past_the_threshold():
    rep = report(_npy(_chan(), "chan.npy"))
    assert rep.massive.count.tolist() == [0, 301]  # 300 in channel 5, 1 in channel 9
    assert len(rep.massive.value) == 256  # only the largest are listed
    channels = massive_channels(rep.channels.maxabs, rep.massive.threshold)
    assert channels.tolist() == [5, 9]
    carriers = massive_carriers(rep.stats.row_maxabs, rep.massive.threshold)
    assert len(carriers.token) == 300 and set(carriers.layers.tolist()) == {1}
    rep = report(_npy(_many(), "many.npy"))
    carriers = massive_carriers(rep.stats.row_maxabs, rep.massive.threshold)
    assert list(zip(carriers.token.tolist(), carriers.layers.tolist())) == [(0, 2), (3, 2)]
    np.testing.assert_array_equal(carriers.peak, [5000, 3000])


@pytest.mark.parametrize(
    ("lang", "chan", "many"),
    [
        ("en", "**300 tokens carry them:**", "**2 tokens carry them:**"),
        ("zh", "**有 300 个 token 带有巨量激活**", "**有 2 个 token 带有巨量激活**"),
    ],
)
def test_the_carriers_sentence_names_every_token_that_passes(lang, chan, many):
    assert massive_tokens_sentence(report(_npy(_chan(), "chan.npy")), None, lang).startswith(chan)
    sentence = massive_tokens_sentence(report(_npy(_many(), "many.npy")), None, lang)
    assert sentence.startswith(many) and "3000" not in sentence
    assert ("token 3 in sequence 0 (2 layers, up to 3,000)" in sentence) == (lang == "en")


@pytest.mark.parametrize(
    ("lang", "one"), [("en", "(1 layer, up to 5,000)"), ("zh", "（1 层，最大 5,000）")]
)
def test_a_token_carrying_them_on_one_layer_is_said_in_the_singular(lang, one):
    sentence = massive_tokens_sentence(report(_npy(_chan(), "chan.npy")), None, lang)
    assert one in sentence and "1 layers" not in sentence


def test_a_token_holding_nan_has_its_finite_mean_and_undefined_outputs():
    x = torch.arange(16, dtype=torch.float64)[None] - 3.0  # [1, 16]
    x[0, 1] = float("nan")
    norms = token_norms(x, 2, [2], 1e-5)
    finite = np.delete(x[0].numpy(), 1)
    assert norms.finite.tolist() == [15]
    np.testing.assert_allclose(norms.mean, [finite.mean()], rtol=1e-12)
    np.testing.assert_allclose(norms.rms, [np.sqrt((finite**2).mean())], rtol=1e-12)
    assert np.isnan(norms.cosine[0]) and np.isnan(norms.layernorm).all()
    en = plain(notes.token_detail_text(norms, 0, 2, 16, "en"))
    assert "it holds 1 non-finite value (NaN or ±inf)" in en and "NaN," not in en
    assert "outputs are undefined" in en and "over its 15 finite values" in en.lower()
    assert "μ = 4.9333" in en  # by hand: (−3 + … + 12 + 2) / 15 = 74 / 15
    zh = notes.token_detail_text(norms, 0, 2, 16, "zh")
    assert "它含有 1 个非有限值" in zh and "没有定义" in zh and "15 个有限值" in zh


def test_a_token_of_equal_entries_has_no_cosine():
    norms = token_norms(torch.full((1, 8), 2.0, dtype=torch.float64), 2, [0], 1e-5)
    assert np.isnan(norms.cosine[0])  # LayerNorm(x) = 0: no angle (torch's similarity says 0)
    en = plain(notes.token_detail_text(norms, 0, 0, 8, "en"))
    assert "LayerNorm(x) is the zero vector" in en
    assert "cosine between the two outputs is undefined" in en
    assert "余弦没有定义" in notes.token_detail_text(norms, 0, 0, 8, "zh")


@pytest.mark.parametrize(
    ("lang", "said"), [("en", "from 0.900 at layer 0"), ("zh", "从第 0 层的 0.900")]
)
def test_with_two_points_the_ordinary_tokens_start_at_point_0(lang, said):
    a = np.full((2, 6, 16), 0.9, np.float32)  # every token's RMS 0.9, then 2.7
    a[:, :, ::2] *= -1
    a[1] *= 3
    story = stream_story(report(_npy(a, "l2.npy")))
    assert story.others_start_at == 0
    text = plain(" ".join(story_sentences(story, None, lang)))
    assert said in text and "after the first block" not in text and "第一个块之后" not in text


def test_the_largest_entry_is_written_with_the_digits_its_square_is_taken_from():
    a = np.full((3, 4, 8), 0.5, np.float16)
    a[2, 1, 3] = 2.325  # 2.32421875 in float16; its square 5.402
    text = plain(" ".join(story_sentences(stream_story(report(_npy(a, "h.npy"))), None, "en")))
    assert "The largest |a| in the dump is 2.32422" in text and "its square 5.402" in text


def test_a_median_read_on_bfloat16s_grid_is_said_approximate():
    a = np.full((2, 125, 8), 1.0039, np.float32)
    a[0, 0, 0] = a[1, 0, 0] = 1001.5
    rep = report(_npy(a, "medflip.npy"))
    assert notes.median_approximate(rep)  # read 1.0, not 1.0039
    assert not notes.median_approximate(report(_npy(a.astype(np.float16), "h.npy")))
    # a bfloat16 dump is histogrammed on its own bits: its median is exact, said so by nothing
    buffer = io.BytesIO()
    torch.save([torch.from_numpy(layer).to(torch.bfloat16) for layer in a], buffer)
    bf16 = report(Upload("b.pt", buffer.getvalue()))
    assert bf16.layout.dtype == "bfloat16" and not notes.median_approximate(bf16)
    assert bf16.stats.median_abs[0] == float(torch.tensor(1.0039, dtype=torch.bfloat16))
    assert notes.approximate(1001.5 / 1.0) == "≈1,000"
    assert notes.approximate(1.0039) == "≈1.00" and notes.approximate(997.6) == "≈998"
    assert notes.approximate(float("nan")) == "—"


def test_the_suffixes_a_refusal_accepts_are_listed_with_chinese_commas(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(EngineError) as refused:
        resolve_files(str(tmp_path / "a.txt"))
    accepted = refused.value.params["accepted"]  # joined in the reader's language (ui.errors)
    assert isinstance(accepted, Listing) and accepted.items == ACCEPTED_SUFFIXES
    zh = translate(accepted.separator, "zh").join(accepted.items)
    assert ".safetensors、.npy" in zh
