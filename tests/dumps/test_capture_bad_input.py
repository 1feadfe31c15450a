"""What the capture refuses, and how: every refusal an EngineError with a "capture.*" key
whose message names the value and what is accepted; the CLI exits 2 with that message."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from engine.config import LiveSpec
from engine.dumps.architectures import architecture_for, module_paths, supported_model_types
from engine.dumps.capture import Capture, capture
from engine.dumps.cli import _run_capture, build_parser, main, parse_norm_layers
from engine.dumps.model_files import load_model
from engine.errors import EngineError
from engine.models.loader import catalog
from tests.dumps import tiny_models


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return load_model(tiny_models.save_tiny("llama", tmp_path_factory.mktemp("llama")))


def _refused(key: str, call, *args, **kwargs) -> EngineError:
    with pytest.raises(EngineError) as caught:
        call(*args, **kwargs)
    assert caught.value.key == key, caught.value
    return caught.value


def test_a_missing_path_is_refused(tmp_path):
    error = _refused("capture.not_found", load_model, tmp_path / "nowhere")
    assert "nowhere" in str(error) and ".gguf" in str(error)


def test_a_folder_without_a_model_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    error = _refused("capture.not_a_model", load_model, tmp_path)
    assert "no config.json" in str(error)


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(b"\x00" * 64)
    _refused("capture.not_a_model", load_model, path)


def test_a_damaged_config_is_refused(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    error = _refused("capture.not_a_model", load_model, tmp_path)
    assert str(tmp_path) in str(error)


def test_a_model_without_a_tokenizer_is_refused(tmp_path):
    tiny_models.build("llama").save_pretrained(tmp_path)
    error = _refused("capture.no_tokenizer", load_model, tmp_path)
    assert str(tmp_path) in str(error)


def test_a_gguf_without_the_packages_that_read_it_names_the_one_to_install(tmp_path, monkeypatch):
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else found(name, *a)
    )
    path = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf")
    error = _refused("capture.missing_package", load_model, path)
    assert error.params["package"] == "gguf" and "pip install gguf" in str(error)


def test_a_broken_gguf_is_refused(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + b"\x00" * 60)
    _refused("capture.not_a_model", load_model, path)


def test_an_unknown_architecture_lists_the_supported_ones_and_how_to_add_one(tmp_path):
    from transformers import T5Config

    T5Config(d_model=16, num_layers=1, num_heads=2, d_kv=8, d_ff=32).save_pretrained(tmp_path)
    error = _refused("capture.unknown_architecture", load_model, tmp_path)
    assert error.params["model_type"] == "t5"
    for supported in ("llama", "qwen2", "gemma2", "olmo2", "gpt2", "bert"):
        assert supported in error.params["supported"]
    assert "engine/models/catalog.toml" in str(error)


def test_a_model_whose_modules_differ_from_its_catalog_row_is_refused(llama):
    model = llama.model
    elsewhere = replace(llama.architecture, blocks="decoder.layers")
    error = _refused("capture.modules_not_found", module_paths, model, elsewhere)
    assert error.params["path"] == "model.decoder.layers"
    norm = model.model.layers[1].input_layernorm
    model.model.layers[1].input_layernorm = None  # no such module any more
    try:
        error = _refused("capture.modules_not_found", capture, llama, ["ok"])
    finally:
        model.model.layers[1].input_layernorm = norm
    assert error.params["path"] == "model.layers.1.input_layernorm"
    assert "engine/models/catalog.toml" in str(error)


def test_every_model_type_the_capture_covers_names_its_blocks_and_every_norm_of_a_layer():
    for model_type in supported_model_types():
        arch = architecture_for(model_type)
        stack = next(f for f in catalog().families if model_type in f.model_types).stacks[0]
        assert arch.blocks == stack.layers_path and arch.head in ("causal", "masked")
        assert sorted(arch.block_norms) == sorted(stack.norm_modules()), model_type
    assert {"llama", "mistral", "qwen2", "gemma", "gemma2", "olmo2", "gpt2", "bert"} <= set(
        supported_model_types()
    )


def test_a_prompt_longer_than_the_context_is_refused(llama):
    long = "a" * tiny_models.CONTEXT  # + [BOS]: one token too many
    error = _refused("capture.prompt_too_long", capture, llama, ["ok", long])
    assert error.params == {"index": 2, "tokens": tiny_models.CONTEXT + 1, "limit": 24}
    capture(llama, ["a" * (tiny_models.CONTEXT - 1)])  # exactly the context: accepted


def test_the_live_token_cap_is_refused_with_its_own_message(llama):
    error = _refused("capture.live_prompt_too_long", capture, llama, ["abcdef"], limit=3)
    assert error.params == {"tokens": 7, "limit": 3}


def test_no_prompt_and_an_empty_prompt_are_refused(llama):
    from transformers import PreTrainedTokenizerFast

    _refused("capture.no_prompts", capture, llama, [])
    tokenizer = tiny_models.tokenizer()
    bare = PreTrainedTokenizerFast(tokenizer_object=tokenizer.backend_tokenizer, pad_token="[PAD]")
    bare.backend_tokenizer.post_processor = None  # no [BOS]: "" gives no token at all
    error = _refused("capture.empty_prompt", capture, replace(llama, tokenizer=bare), ["a", ""])
    assert error.params == {"index": 2}


def test_norm_layers_out_of_range_or_not_numbers_are_refused(llama):
    _refused("capture.bad_norm_layers", capture, llama, ["a"], norm_layers=(0, 3))
    _refused("capture.bad_norm_layers", parse_norm_layers, "0,x")
    assert parse_norm_layers("ALL") is None and parse_norm_layers("none") == ()
    assert parse_norm_layers("0, 2") == (0, 2)


def test_a_bad_dtype_is_refused(llama, tmp_path):
    _refused("capture.bad_value", load_model, tmp_path, "float8")
    _refused("config.unknown_value", LiveSpec, "hi", "int8")
    _refused("config.empty", LiveSpec, "   ")
    _refused("config.too_long", LiveSpec, "x" * 1001)


def test_float16_storage_refuses_a_value_it_would_turn_into_inf():
    big = Capture(
        tensors={"a.input": torch.tensor([[[70000.0, 1.0]]])},  # [1, 1, 2]
        metadata={},
        stream=("a.input",),
        norms=(),
        norm_layers=(),
        tokens=(("a",),),
        lengths=(1,),
        logits=None,
    )
    error = _refused("capture.storage_overflow", big.stored, "float16")
    assert error.params["entry"] == "a.input" and error.params["value"] == 70000.0
    assert big.stored("bfloat16")["a.input"].dtype == torch.bfloat16
    _refused("capture.bad_value", big.stored, "int8")


def test_cli_exits_2_with_the_message(tmp_path, capsys):
    code = main(["capture", "--model", str(tmp_path / "x"), "--prompt", "a", "--out", "o.st"])
    assert code == 2
    assert "a capture is written as a .safetensors file" in capsys.readouterr().err
    code = main(
        ["capture", "--model", str(tmp_path / "x"), "--prompt", "a", "--out", "o.safetensors"]
    )
    assert code == 2 and "no such file or directory" in capsys.readouterr().err


def test_cli_writes_a_capture_the_report_reads(tmp_path, capsys):
    folder = tiny_models.save_tiny("gpt2", tmp_path / "gpt2")
    out = tmp_path / "c.safetensors"
    args = ["capture", "--model", str(folder), "--prompt", "hello", "--prompt", "今天"]
    assert main(args + ["--out", str(out), "--store", "float16", "--norm-layers", "0"]) == 0
    printed = capsys.readouterr().out
    assert "padded on the right" in printed and f"report {out}" in printed
    assert main(["report", str(out), "--no-progress"]) == 0
    shown = capsys.readouterr().out
    assert "transformer.h.{i}.input" in shown and "B=2 T=6" in shown
    from safetensors import safe_open

    with safe_open(out, framework="pt") as handle:
        meta = handle.metadata()
        assert handle.get_tensor("transformer.h.0.ln_1.input").dtype == torch.float16
        assert "transformer.h.1.ln_1.input" not in handle.keys()  # --norm-layers 0
    assert json.loads(meta["prompts"]) == ["hello", "今天"]
    assert json.loads(meta["lengths"]) == [6, 3] and meta["storage_dtype"] == "float16"


def _capture_out(tmp_path, out, monkeypatch) -> str:
    """``capture --out OUT``'s refusal, which must come before the model is loaded."""
    import engine.dumps.model_files as model_files

    def never(*args, **kwargs):
        raise AssertionError("the model was loaded before --out was checked")

    monkeypatch.setattr(model_files, "load_model", never)
    args = ["capture", "--model", str(tmp_path), "--prompt", "a", "--out", str(out)]
    with pytest.raises(EngineError) as caught:
        _run_capture(build_parser().parse_args(args))
    return caught.value.key


def test_an_out_that_cannot_be_written_is_refused_before_the_model_loads(tmp_path, monkeypatch):
    folder = tmp_path / "x.safetensors"
    folder.mkdir()
    assert _capture_out(tmp_path, folder, monkeypatch) == "capture.out_is_directory"
    blocker = tmp_path / "file"
    blocker.write_text("")
    under_a_file = blocker / "sub" / "c.safetensors"
    assert _capture_out(tmp_path, under_a_file, monkeypatch) == "capture.out_parent_is_file"
    monkeypatch.setattr(os, "access", lambda *args: False)  # a directory not ours (even as root)
    key = _capture_out(tmp_path, tmp_path / "new" / "c.safetensors", monkeypatch)
    assert key == "capture.out_not_writable"


def test_a_full_disk_is_refused_with_the_sizes_and_a_failed_write_leaves_nothing(
    tmp_path, monkeypatch
):
    import errno
    import shutil
    from collections import namedtuple

    import engine.dumps.capture as capture

    tensors = {"h.input": torch.zeros(2, 3)}
    meta = {"compute_dtype": "float32"}
    result = capture.Capture(tensors, meta, ("h.input",), (), (), (("a",),), (1,), None)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 10, 10))
    out = tmp_path / "c.safetensors"
    with pytest.raises(EngineError) as caught:
        result.save(out)
    assert caught.value.key == "capture.out_no_space" and caught.value.params["free_mb"] == 0.0
    monkeypatch.undo()

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(EngineError) as caught:
        result.save(out)
    assert caught.value.key == "capture.out_write_failed"
    assert "No space left on device" in str(caught.value)
    assert not out.exists() and not list(tmp_path.iterdir())
