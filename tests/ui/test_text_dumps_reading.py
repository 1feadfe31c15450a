"""How the dumps page tells a reader to read what it shows: a table's numbers written as its
sentences write them, the DyT chart's r² and flat band, the LayerNorm − RMSNorm chart's
scale, and how a stream of one point was read (``ui.text.dumps``, ``ui.text.dumps_story``)."""

from __future__ import annotations

import dataclasses
import io
import math

import numpy as np
import pytest

from engine.config import DumpSpec
from engine.dumps.live import NormIO
from engine.dumps.norm_step import norm_step
from engine.dumps.norm_views import DyTFit, FlatBand
from engine.dumps.report import NormComparison, report
from engine.dumps.sources import Upload
from tests.plain_text import plain
from ui.text import dumps as text
from ui.text.dumps_story import dyt_reading, norm_step_sentence


def _read(markdown: str) -> str:
    """A sentence as a reader sees it: no bold or code marks."""
    return plain(markdown).replace("**", "").replace("`", "")


def _cells(values, digits=6, place=False) -> list[str]:
    write = text.cell_writer(np.asarray(values), digits, place)
    return [write(value) for value in values]


def test_a_column_of_many_decades_is_grouped_and_signed_as_the_sentences_are():
    """A column spanning more than three decades was written with printf's %g: "1082.81"
    beside "4,911.65", "-6.77409" with the ASCII hyphen."""
    means = [1082.81, 4911.65, -6.77409, -11.998, 0.00123]
    assert _cells(means) == ["1,082.81", "4,911.65", "−6.77409", "−11.998", "0.00123"]
    assert _cells([123456789.0, -3.25e-7, 2.0]) == ["1.23457×10⁸", "−3.25×10⁻⁷", "2"]


def test_a_column_of_few_decades_keeps_one_count_of_places():
    assert _cells([12545.9, 10695.14, -179.182]) == ["12,545.9", "10,695.1", "−179.2"]
    assert _cells([26464.0, -2500.0]) == ["26,464", "−2,500"]  # whole numbers stored as floats


def test_counts_are_grouped_places_are_as_typed_and_a_gap_is_a_dash():
    assert _cells(np.array([16384, 0], dtype=np.int64)) == ["16,384", "0"]
    assert _cells([1415.0, math.nan], place=True) == ["1415", "—"]  # channel 1415; no layer
    assert _cells([math.inf, -math.inf, 1.0]) == ["∞", "−∞", "1"]


def _fit(r2: float, flat: FlatBand | None) -> DyTFit:
    empty = np.zeros(0)
    return DyTFit("model.layers.12.input_layernorm", 12, 0.1291, 1.4711, r2, 16384, True,
                  empty, empty, 934.6, 10, empty, empty, r2 - 0.01, flat)  # fmt: skip


def _band(largest: float) -> FlatBand:
    return FlatBand(tokens=4, read=64, factor=152.98, scale="rms", largest_scale=1110.51,
                    median_scale=6.1889, largest=largest, median_abs=2.1406,
                    r2_rest=0.97876)  # fmt: skip


def test_the_dyt_reading_says_what_r2_is_and_what_the_flat_band_is():
    """SmolLM2's layer 12: r² = 0.473, and four tokens of far larger scale, whose 26,464 is a
    massive activation by the page's thresholds (past 100 and 1,000 × the median |x| 2.14)."""
    reading = _read(dyt_reading(_fit(0.47254, _band(26464.0)), DumpSpec(), "en"))
    assert reading.startswith("How to read it: r² = 0.473 is the share of the output's variance")
    assert "(1: every point on it); here the points do not follow one S-curve." in reading
    assert "The flat band near y = 0 is 4 of the 64 tokens read" in reading
    assert "(RMS up to 1,111, against 6.189 for the median token; inputs up to |x| = 26,464:" in (
        reading
    )
    assert "26,464: massive activations), so their points lie along lines at least 152 times" in (
        reading
    )  # 152.98: "at least" rounds down
    assert reading.endswith("Fitted to the other tokens alone, the curve has r² = 0.979.")


def test_an_input_short_of_the_thresholds_is_not_called_massive():
    spec = DumpSpec(massive_ratio=20_000.0)  # 20,000 × 2.14 = 42,800 > 26,464
    reading = _read(dyt_reading(_fit(0.47254, _band(26464.0)), spec, "en"))
    assert "inputs up to |x| = 26,464)" in reading and "massive" not in reading


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_close_fit_without_a_flat_band_says_only_what_r2_is(lang):
    reading = _read(dyt_reading(_fit(0.98280, None), DumpSpec(), lang))
    close = {"en": "near 1, as here", "zh": "像这里这样接近 1"}[lang]
    assert "r² = 0.983" in reading and close in reading
    assert "64" not in reading  # no flat band: nothing about tokens
    assert dyt_reading(_fit(math.nan, None), DumpSpec(), lang) is None  # nothing fitted


def test_the_flat_band_reads_in_chinese():
    reading = _read(dyt_reading(_fit(0.47254, _band(26464.0)), DumpSpec(), "zh"))
    assert "所读 64 个 token 中的 4 个" in reading and "至少平坦 152 倍" in reading
    assert "属于巨量激活" in reading and "r² = 0.979" in reading


def test_the_difference_charts_scale_is_its_largest_difference_over_the_output():
    """0.0412 against RMSNorm(x)'s RMS of 0.99999 there: 4.12 % of an output, whose RMS is
    written as a cosine near 1 is ("1 − 10⁻⁵", never "1.0000", which reads as exactly 1)."""
    comparison = NormComparison(
        batch=np.array([0, 1]),
        token=np.array([0, 3]),
        reasons=("first_token", "median_token"),
        difference_rms=np.array([[0.01, 0.0412], [0.02, 0.03]]),  # [L, k]
        output_rms=np.array([[1.0, 0.99999], [1.0, 1.0]]),
        cosine=np.ones((2, 2)),
        mu2_share=np.zeros((2, 2)),
    )
    scale = _read(text.difference_scale(comparison, "en"))
    assert scale == (
        "Scale of the difference chart: its largest difference, 0.0412 at layer 0 on the median "
        "token (sequence 1, token 3), is 4.12 % of the RMS of RMSNorm(x) there, 1 − 10⁻⁵ "
        "(without a weight, a norm's output has an RMS of at most 1, exactly 1 at ε = 0)."
    )
    assert "4.12\u00a0%" in text.difference_scale(comparison, "zh")
    nothing = NormComparison(**{**comparison.__dict__, "difference_rms": np.full((2, 2), np.nan)})
    assert text.difference_scale(nothing, "en") is None


def _npy(shape: tuple[int, ...]) -> Upload:
    buffer = io.BytesIO()
    np.save(buffer, np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    return Upload("acts.npy", buffer.getvalue())


def _npz(arrays: dict) -> Upload:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return Upload("acts.npz", buffer.getvalue())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_two_axis_array_is_said_to_be_one_layer_of_tokens_by_channels(lang):
    """A random [64, 64] array was read as one layer without a word."""
    note = _read(text.one_layer_note(report(_npy((64, 64)), fit_norms=False), lang))
    if lang == "en":
        assert note.startswith("One point of the stream: acts is read as [T, d], T = 64, d = 64,")
        assert "d = 64, so nothing on this page changes with depth" in note
        assert "[L, T, d] or [L, B, T, d]" in note and "layer_0, layer_1" in note
    else:
        assert "被读作 [T, d]，即 T = 64，d = 64" in note


def test_one_layer_of_sequences_says_so_and_several_layers_need_no_note():
    rng = np.random.default_rng(0)
    one = _npz({"layer_0": rng.standard_normal((2, 16, 32)).astype(np.float32)})
    note = _read(text.one_layer_note(report(one, fit_norms=False), "en"))
    assert "layer_0 is read as [B, T, d], B = 2, T = 16, d = 32," in note
    wide = _read(text.one_layer_note(report(_npy((2048, 1024)), fit_norms=False), "en"))
    assert "T = 2,048, d = 1,024" in wide  # grouped, as the page writes counts
    three = _npz({f"layer_{i}": rng.standard_normal((16, 32)).astype(np.float32) for i in range(3)})
    for upload in (_npy((3, 64, 64)), _npy((2, 3, 8, 16)), three):
        assert text.one_layer_note(report(upload, fit_norms=False), "en") is None


def test_a_flat_band_its_scale_does_not_account_for_is_told_without_that_cause():
    """An output unrelated to its input (a mis-paired upload) has tokens of flat slope too,
    of no larger scale: the reading gives the facts, not "a norm divides by its scale"."""
    plain_band = dataclasses.replace(_band(3.2), scale=None, largest_scale=1.111, factor=4.4)
    reading = _read(dyt_reading(_fit(0.0123, plain_band), DumpSpec(), "en"))
    assert "4 of the 64 tokens read lie along lines at least 4 times flatter" in reading
    assert "their input scale does not account for it (RMS up to 1.111, against 6.189" in reading
    assert "divides each token by its own scale" not in reading and "massive" not in reading
    level = dataclasses.replace(plain_band, factor=math.inf)
    assert "lie along lines with no slope at all" in _read(
        dyt_reading(_fit(0.5, level), DumpSpec(), "en")
    )
    sigma = dataclasses.replace(_band(26464.0), scale="sigma")
    assert "(σ up to 1,111, against 6.189 for the median token" in _read(
        dyt_reading(_fit(0.47254, sigma), DumpSpec(), "en")
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_negative_or_tiny_r2_is_not_called_a_share_and_reads_as_a_number(lang):
    negative = _read(dyt_reading(_fit(-0.25, None), DumpSpec(), lang))
    assert "r² = −0.25" in negative and {"en": "share", "zh": "占比"}[lang] not in negative
    tiny = _read(dyt_reading(_fit(5.91e-05, None), DumpSpec(), lang))
    assert "r² = 5.91×10⁻⁵" in tiny and "e-05" not in tiny


def test_the_difference_charts_scale_names_the_charts_largest_difference():
    """The chart draws the difference itself: its largest (0.5), not the largest share."""
    comparison = NormComparison(
        batch=np.array([0, 1]),
        token=np.array([0, 3]),
        reasons=("first_token", "median_token"),
        difference_rms=np.array([[0.5, 0.4]]),
        output_rms=np.array([[1.0, 0.5]]),
        cosine=np.ones((1, 2)),
        mu2_share=np.zeros((1, 2)),
    )
    scale = _read(text.difference_scale(comparison, "en"))
    assert "its largest difference, 0.5 at layer 0 on the first token" in scale
    assert "is 50 % of the RMS of RMSNorm(x) there" in scale


def test_a_one_token_fit_is_read_as_a_line_not_an_s_curve(tmp_path):
    """One token: RMSNorm divides every value by the same RMS, so output against input is the
    line y = x / RMS(x); a tanh fitted to it stays in its linear part (α·max|x| ≪ 1) with
    r² = 1, which said "along one S-curve, as DyT assumes"."""
    import torch
    from safetensors.torch import save

    x = torch.randn(1, 1, 64, generator=torch.Generator().manual_seed(0))  # [B, T, d]
    y = torch.nn.functional.rms_norm(x, (64,), eps=1e-6)
    tensors = {
        "model.layers.0.input_layernorm.input": x,
        "model.layers.0.input_layernorm.output": y,
    }
    (fit,) = report(Upload("one.safetensors", save(tensors))).dyt
    assert fit.r2 > 0.999 and fit.straight  # tanh(α·reach)/(α·reach) ≥ 0.99
    said = plain(dyt_reading(fit, DumpSpec(), "en"))
    assert "lie on a straight line" in said and "S-curve, as DyT assumes" not in said
    assert "直线" in dyt_reading(fit, DumpSpec(), "zh")
    curved = dataclasses.replace(fit, reach=10.0 / fit.alpha)  # tanh(10): deep in its bend
    assert "as DyT assumes" in plain(dyt_reading(curved, DumpSpec(), "en"))


@pytest.mark.parametrize(
    "kind, lang, name", [("rmsnorm", "en", "RMSNorm"), ("layernorm", "zh", "LayerNorm")]
)
def test_the_reference_check_of_one_token_names_its_norm_as_people_write_it(kind, lang, name):
    """Not the dump's id ("rmsnorm"), which the Chinese page showed inside its sentence."""
    x = np.array([1.0, -2.0, 3.0, 0.5])
    y = (x - (x.mean() if kind == "layernorm" else 0.0)) / np.sqrt(
        (x.var() if kind == "layernorm" else (x * x).mean()) + 1e-5
    )
    step = norm_step(NormIO("model.norm", 3, 0, 1, x, y, None, None, kind, 1e-5))
    sentence = _read(norm_step_sentence(step, None, "float32", lang))
    assert f"{name}, ε = " in sentence or f"{name}，ε = " in sentence, sentence
    assert kind not in sentence
