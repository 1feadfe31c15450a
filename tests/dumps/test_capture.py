"""The capture on tiny random models of every supported architecture (nothing downloaded):
names and shapes the dumps loader reads, norm outputs equal to the modules' own outputs,
the residual stream equal to transformers' ``output_hidden_states``, logits untouched by the
hooks, and ``report`` reading the capture from memory and from a file."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F

from engine.dumps.architectures import module_paths
from engine.dumps.capture import capture, capture_info
from engine.dumps.model_files import load_model
from engine.dumps.report import report
from tests.dumps import tiny_models

PROMPTS = ["hello world", "abc"]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """Each tiny model saved with save_pretrained and loaded back through load_model."""
    cache = {}

    def get(name: str):
        if name not in cache:
            folder = tmp_path_factory.mktemp(name)
            cache[name] = load_model(tiny_models.save_tiny(name, folder))
        return cache[name]

    return get


@pytest.mark.parametrize("name", tiny_models.NAMES)
def test_names_and_shapes_are_what_the_dumps_loader_reads(loaded, name):
    model = loaded(name)
    assert model.architecture.name == tiny_models.ARCHITECTURE_OF[name]
    result = capture(model, PROMPTS)
    paths = module_paths(model.model, model.architecture)
    batch, tokens = len(PROMPTS), max(result.lengths)
    d = model.model.config.hidden_size
    assert result.stream == tuple(f"{b}.input" for b in paths.blocks) + (
        f"{paths.blocks[-1]}.output",
    )
    for entry in result.stream:
        assert result.tensors[entry].shape == (batch, tokens, d), entry
    modules = dict(model.model.named_modules())
    for norm in paths.norms:
        width = modules[norm].weight.shape[0]
        assert result.tensors[f"{norm}.input"].shape == (batch, tokens, width), norm
        assert result.tensors[f"{norm}.output"].shape == (batch, tokens, width), norm
        assert result.tensors[f"{norm}.weight"].shape == (width,), norm
    rep = report(result.dump_file())
    blocks_template = paths.blocks[0].rsplit(".", 1)[0] + ".{i}.input"
    assert rep.layout.stream == blocks_template
    assert rep.labels == result.stream  # every block's input, then the last block's output
    assert (rep.layout.batch, rep.layout.tokens, rep.layout.d) == (batch, tokens, d)
    assert sorted(pair.label for pair in rep.layout.norm_pairs) == sorted(paths.norms)
    assert all(pair.weight is not None for pair in rep.layout.norm_pairs)
    assert len(rep.dyt) == len(paths.norms)


@pytest.mark.parametrize("name", tiny_models.NAMES)
def test_captured_norm_output_is_the_modules_output(loaded, name):
    model = loaded(name)
    result = capture(model, PROMPTS)
    modules = dict(model.model.named_modules())
    for norm in result.norms:
        x = result.tensors[f"{norm}.input"]
        with torch.no_grad():
            again = modules[norm](x)  # the module itself, on the recorded input
        assert torch.equal(again, result.tensors[f"{norm}.output"]), norm


@pytest.mark.parametrize("name", tiny_models.NAMES)
def test_stored_weight_is_what_the_output_is_multiplied_by(loaded, name):
    """An independent float64 formula with the stored weight reproduces each norm's output:
    for Gemma the stored weight is 1 + weight, or the RMSNorm output would not match."""
    model = loaded(name)
    result = capture(model, PROMPTS)
    modules = dict(model.model.named_modules())
    for norm in result.norms:
        x = result.tensors[f"{norm}.input"].double()  # [B, T, d]
        weight = result.tensors[f"{norm}.weight"].double()  # [d]
        eps = getattr(modules[norm], "eps", getattr(modules[norm], "variance_epsilon", None))
        if model.architecture.norm_kind == "rmsnorm":
            expected = x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight
        else:
            bias = result.tensors[f"{norm}.bias"].double()  # [d]
            expected = F.layer_norm(x, (x.shape[-1],), weight, bias, eps)  # [B, T, d]
        got = result.tensors[f"{norm}.output"].double()
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5, msg=norm)


@pytest.mark.parametrize("name", tiny_models.NAMES)
def test_stream_is_transformers_hidden_states(loaded, name):
    model = loaded(name)
    result = capture(model, PROMPTS, keep_logits="all")
    ids = torch.tensor([model.tokenizer(PROMPTS[0])["input_ids"]])  # [1, T]
    with torch.no_grad():
        hidden = model.model(input_ids=ids, output_hidden_states=True).hidden_states
    first = result.lengths[0]  # the longest prompt: no padding in row 0
    blocks = result.stream[:-1]
    for i, entry in enumerate(blocks):
        torch.testing.assert_close(result.tensors[entry][0, :first], hidden[i][0], msg=entry)
    last = result.tensors[result.stream[-1]][0, :first]  # [T, d]
    if name == "bert":  # no final norm: the last hidden state is the last block's output
        torch.testing.assert_close(last, hidden[-1][0])
    else:  # transformers' last hidden state is the final norm of the last block's output
        final = dict(model.model.named_modules())[result.norms[-1]]
        with torch.no_grad():
            torch.testing.assert_close(final(last), hidden[-1][0])


@pytest.mark.parametrize("name", tiny_models.NAMES)
def test_hooks_leave_the_logits_unchanged_and_are_removed(loaded, name):
    model = loaded(name)

    def hooks() -> list:  # transformers installs hooks of its own (output_hidden_states)
        return [(list(m._forward_hooks), list(m._forward_pre_hooks)) for m in model.model.modules()]

    before = hooks()
    result = capture(model, PROMPTS, keep_logits="all")
    assert hooks() == before
    ids = torch.tensor([model.tokenizer(PROMPTS[1])["input_ids"]])  # [1, T]
    with torch.no_grad():
        plain = model.model(input_ids=ids).logits  # [1, T, V]
    short = result.lengths[1]
    torch.testing.assert_close(result.logits[1, :short], plain[0], rtol=1e-5, atol=1e-6)
    alone = capture(model, [PROMPTS[1]], keep_logits="all")  # no padding, no other prompt
    assert torch.equal(alone.logits[0], plain[0])


def test_padding_leaves_real_tokens_as_the_prompt_alone(loaded):
    model = loaded("llama")
    together = capture(model, PROMPTS)
    alone = capture(model, [PROMPTS[1]])
    short = together.lengths[1]
    assert together.lengths == (12, 4) and alone.lengths == (4,)
    assert together.tokens[1][short:] == ("[PAD]",) * (12 - short)
    for entry in together.stream:
        torch.testing.assert_close(together.tensors[entry][1, :short], alone.tensors[entry][0])


def test_metadata_round_trips_through_a_file(loaded, tmp_path):
    model = loaded("llama")
    result = capture(model, ["今天天气很好", "hi"])
    path = result.save(tmp_path / "c.safetensors", "float16")
    rep = report(path)
    info = capture_info(rep.metadata)
    assert info.prompts == ("今天天气很好", "hi")
    assert info.tokens[0] == ("[BOS]", "今", "天", "天", "气", "很", "好")
    assert info.lengths == (7, 3)
    assert json.loads(dict(rep.metadata)["token_ids"])[1][:3] == [2, 75, 76]
    assert (info.compute_dtype, info.storage_dtype, info.architecture) == (
        "float32",
        "float16",
        "llama",
    )
    assert rep.layout.dtype == "float16"
    assert capture_info({"format": "something else"}) is None


def test_the_weights_origin_is_written_as_fields_not_a_sentence(loaded, tmp_path):
    model = loaded("llama")
    metadata = capture(model, ["hi"]).metadata
    assert "weights" not in metadata  # a sentence would be in one language on every page
    assert metadata["weights_kind"] == "folder" and metadata["weights_dtype"] == "float32"
    assert metadata["weights_file"] == model.name and metadata["weights_converter"] == ""
    assert capture_info(metadata).weights == model.weights


def test_norm_layers_keep_the_chosen_blocks_and_the_outer_norms(loaded):
    model = loaded("gpt2")
    result = capture(model, PROMPTS, norm_layers=(1,))
    assert result.norms == ("transformer.h.1.ln_1", "transformer.h.1.ln_2", "transformer.ln_f")
    assert result.norm_layers == (1, 1, None)
    rep = report(result.dump_file())
    assert len(rep.layout.layers) == 4  # the stream is whole
    assert {p.label for p in rep.layout.norm_pairs} == set(result.norms)
