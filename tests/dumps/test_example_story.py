"""What the dumps page says about a stream (engine.dumps.story), one norm worked on one token
(engine.dumps.norm_step) and the example slice the Axes page reads (engine.dumps.example),
each checked against the shipped file read with safetensors alone and computed in float64,
or against Hugging Face's own LlamaRMSNorm."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save

from engine.axes import limits as axes_limits
from engine.config import AxesSpec
from engine.dumps.example import EXAMPLE_DUMP, EXAMPLE_SHAPE, example_slice, stream_entry
from engine.dumps.live import read_norm_io
from engine.dumps.norm_step import norm_step
from engine.dumps.report import report
from engine.dumps.sources import Upload
from engine.dumps.story import stream_story
from engine.errors import EngineError
from tests.dumps import dump_files as files


def _saved(tensors: dict[str, torch.Tensor]) -> bytes:
    return save({name: value.clone().contiguous() for name, value in tensors.items()})


@pytest.fixture(scope="module")
def stream() -> torch.Tensor:
    """[L, B, T, d] float64, the example's stream read entry by entry with safetensors."""
    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        points = [handle.get_tensor(stream_entry(p)).double() for p in range(EXAMPLE_SHAPE[0])]
    return torch.stack(points)


@pytest.fixture(scope="module")
def example():
    return report(EXAMPLE_DUMP, fit_norms=False)


def test_the_shape_constants_are_the_files(stream):
    assert tuple(stream.shape) == EXAMPLE_SHAPE
    limits = (
        axes_limits.EXAMPLE_POINTS,
        axes_limits.EXAMPLE_BATCH,
        axes_limits.EXAMPLE_TOKENS,
        axes_limits.EXAMPLE_CHANNELS,
    )
    assert limits == EXAMPLE_SHAPE


@pytest.mark.parametrize("batch", range(4))
def test_the_story_of_each_sequence_is_the_files(stream, example, batch):
    story = stream_story(example, batch)
    rms = stream[:, batch].pow(2).mean(-1).sqrt()  # [L, T]
    first, others = rms[:, 0], rms[:, 1:].median(dim=-1).values  # [L], [L]
    outgrow = (first[1:] / first[:-1]) / (others[1:] / others[:-1])  # [L - 1]
    assert story.jump_point == int(outgrow.argmax()) + 1 == 12
    assert story.jump_before == pytest.approx(float(first[11]), rel=1e-5)
    assert story.jump_after == pytest.approx(float(first[12]), rel=1e-5)
    assert story.jump_ratio > 100  # two orders of magnitude in one block
    # numpy's median of an even count averages the middle two; torch's takes the lower
    assert story.others_start == pytest.approx(float(np.median(rms[1, 1:].numpy())), rel=1e-5)
    assert story.others_end == pytest.approx(float(np.median(rms[-1, 1:].numpy())), rel=1e-5)
    assert story.others_max_step < 2.0 and story.others_end / story.others_start > 10


def test_the_largest_entry_and_its_float16_square(stream, example):
    story = stream_story(example)
    magnitude = stream.abs()
    largest = float(magnitude.max())
    where = tuple(int(i) for i in (magnitude == largest).nonzero()[0])
    assert story.largest == largest and story.largest_at == where
    half = torch.tensor(largest, dtype=torch.float16)
    assert story.fits_float16 == bool(torch.isfinite(half))
    assert story.square_overflows_float16 == bool(torch.isinf(half * half)) is True
    pair = example.layout.norm_pairs[story.largest_pair]
    assert pair.label == "model.layers.12.input_layernorm"  # block 12 reads point 12


def test_a_stream_without_a_jump_says_so():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(5, 1, 6, 8, generator=generator)  # [L, B, T, d] Gaussian: no jump
    rep = report(Upload("plain.safetensors", _saved(files.hf_names(x))))
    story = stream_story(rep)
    largest = float(x.double().abs().max())
    assert story.largest == pytest.approx(largest, rel=1e-6)
    assert not story.square_overflows_float16 and story.fits_float16
    outgrow = story.jump_ratio / story.others_step
    assert outgrow < 10  # no token jumps in Gaussian noise
    assert story.largest_pair is None  # no norm pairs in hidden states


@pytest.mark.parametrize("label", ["model.layers.12.input_layernorm", "model.norm"])
@pytest.mark.parametrize("token", [0, 5])
def test_a_norm_worked_on_one_token_is_hugging_faces_rmsnorm(example, label, token):
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    step = norm_step(read_norm_io(example, label, 1, token))
    io = step.io
    norm = LlamaRMSNorm(io.x.shape[0], eps=io.eps).double()
    with torch.no_grad():
        norm.weight.copy_(torch.from_numpy(io.weight))
        expected = norm(torch.from_numpy(io.x)[None])[0].numpy()  # [d]
    # LlamaRMSNorm upcasts to float32 whatever the input: agreement to float32 precision
    np.testing.assert_allclose(step.recomputed, expected, rtol=1e-6, atol=1e-6)
    assert step.rms == pytest.approx(float(np.sqrt((io.x**2).mean())), rel=1e-12)
    # NormResult keeps rstd in float32 (engine.normalize's contract)
    assert step.rstd == pytest.approx(1 / np.sqrt((io.x**2).mean() + io.eps), rel=1e-6)
    # the model's own output, stored in float16: equal up to float16's rounding
    assert step.max_difference <= 2 * float(np.abs(io.y).max()) * 2.0**-11
    assert step.peak_channel == int(np.abs(io.x).argmax())


def test_an_upload_without_a_kind_is_not_recomputed():
    x = files.stream(layers=4, batch=1, tokens=5, d=8)
    rep = report(Upload("hooks.safetensors", _saved(files.module_names(x))))
    step = norm_step(read_norm_io(rep, rep.layout.norm_pairs[0].label, 0, 2))
    assert step.io.kind == "" and step.recomputed is None and np.isnan(step.max_difference)


def test_the_example_slice_takes_the_largest_channels_in_order(stream):
    spec = AxesSpec(source="example", layer=12, batch=3, tokens=20, d=16, kind="rmsnorm")
    from engine.axes.sources import make_tensor

    tensor = make_tensor(spec)
    x = stream[12, :3, :20]  # [B, T, 576]
    channels = sorted(x.pow(2).mean(dim=(0, 1)).sqrt().topk(16).indices.tolist())
    assert tensor.channels == tuple(channels) and 507 in channels
    torch.testing.assert_close(tensor.x.double(), x[:, :, channels], rtol=0, atol=0)
    assert tensor.real.all() and tensor.lengths == (20, 20, 20)
    every = example_slice(12, 1, 2, list(range(576)))  # [1, 2, 576]
    torch.testing.assert_close(every, stream[12, :1, :2], rtol=0, atol=0)


@pytest.mark.parametrize(
    "change, key",
    [
        ({"batch": 5}, "axes.example_too_large"),
        ({"tokens": 25}, "axes.example_too_large"),
        ({"d": 577}, "axes.example_too_large"),
        ({"layer": 31}, "axes.out_of_range"),
        ({"layer": -1}, "axes.out_of_range"),
    ],
)
def test_an_example_slice_past_the_file_is_refused(change, key):
    with pytest.raises(EngineError) as caught:
        AxesSpec(source="example", **change)
    assert caught.value.key == key
    if key == "axes.example_too_large":
        name = next(iter(change))
        assert caught.value.params["name"] == name and caught.value.params["max_d"] == 576


def test_the_synthetic_sources_accept_sizes_the_example_does_not():
    assert AxesSpec(batch=2, tokens=30, d=600).d == 600  # the example's limits are its own


@pytest.mark.parametrize(
    "label, flat",
    [
        ("model.layers.0.input_layernorm", 0),
        ("model.layers.12.input_layernorm", 4),
        ("model.layers.12.post_attention_layernorm", 4),
        ("model.norm", 4),
    ],
)
def test_the_flat_band_of_a_dyt_chart_is_the_tokens_of_far_larger_scale(label, flat):
    """Each token's output ÷ weight against its input, a line of slope 1/RMS: the tokens the
    fit calls flat are those whose slope, fitted here by least squares over all 96 tokens of
    the file in float64, is far below the median token's (about 6 to 180 times, every other
    token under 2: ``FLAT_FACTOR``'s margin), and without them tanh fits."""
    from engine.dumps.norm_views import FLAT_FACTOR, fit_dyt

    with safe_open(EXAMPLE_DUMP, framework="pt") as handle:
        x = handle.get_tensor(f"{label}.input").double().reshape(-1, 576)  # [B·T, d]
        y = handle.get_tensor(f"{label}.output").double().reshape(-1, 576)
        y = y / handle.get_tensor(f"{label}.weight").double()
    dx, dy = x - x.mean(-1, keepdim=True), y - y.mean(-1, keepdim=True)
    slope = ((dx * dy).sum(-1) / (dx * dx).sum(-1)).numpy()  # [96]
    ratio = np.median(slope) / slope  # how many times flatter than the median token
    order = np.argsort(-ratio)
    assert ratio[order[flat]] < 2 and (flat == 0 or ratio[order[flat - 1]] > 6 > FLAT_FACTOR)
    layout = report(EXAMPLE_DUMP, fit_norms=False).layout
    fit = fit_dyt(next(pair for pair in layout.norm_pairs if pair.label == label))
    if not flat:
        assert fit.flat is None and fit.r2 > 0.98
        return
    band, rows = fit.flat, order[:flat]  # every flat token is among the 64 the fit reads
    assert band.tokens == flat and band.read == 64 and band.factor > 6
    assert band.largest == float(x[rows].abs().max())
    assert band.scale == "rms"  # their RMS, by which RMSNorm divides, is what sets them apart
    assert band.largest_scale == pytest.approx(float(x[rows].pow(2).mean(-1).sqrt().max()), 1e-12)
    assert fit.r2 < 0.65 < 0.95 < band.r2_rest  # tanh follows the other tokens


def test_the_norm_reading_the_largest_entry_is_found_whatever_the_threshold():
    """At a massive threshold above the largest entry (30,000 > 26,464) its place was looked
    for among the massive activations, found nowhere, and the ★ norm fell back to block 0's."""
    from engine.config import DumpSpec
    from engine.dumps.example import EXAMPLE_DUMP
    from engine.dumps.report import report
    from engine.dumps.story import stream_story

    for spec in (DumpSpec(), DumpSpec(massive_abs=30000.0), DumpSpec(layer_order="file")):
        story = stream_story(report(EXAMPLE_DUMP, spec, fit_norms=False))
        assert story.largest == 26464 and story.largest_at[1:] == (2, 0, 507)
        labels = report(EXAMPLE_DUMP, spec, fit_norms=False).labels
        assert labels[story.largest_at[0]] == "model.layers.12.input"  # in the file's order too
        pairs = report(EXAMPLE_DUMP, spec, fit_norms=False).layout.norm_pairs
        assert pairs[story.largest_pair].label == "model.layers.12.input_layernorm"
