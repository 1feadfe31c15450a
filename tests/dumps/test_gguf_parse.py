"""One parse of a GGUF file per model load (engine/dumps/gguf_parse.py), on a tiny GGUF
Llama: the model, its config and its tokenizer come out as transformers makes them without
it, the file is parsed once instead of four times, and gguf's own functions are put back."""

from __future__ import annotations

from contextlib import nullcontext

import pytest
import torch

from engine.dumps import model_cache
from engine.dumps import model_files as files
from engine.dumps.gguf_parse import one_parse
from tests.dumps import tiny_models


def test_a_model_parsed_once_is_the_model_transformers_makes(tmp_path, monkeypatch, gguf_reads):
    monkeypatch.setenv(model_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    source = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf")
    folder, gguf = files.locate_model(source)
    start = 0.0
    with monkeypatch.context() as plainly:
        plainly.setattr(files, "one_parse", nullcontext)  # as transformers alone loads it
        plain = files._load(source, folder, gguf, "float32", None, start)
    assert len(gguf_reads) == 4  # the config twice, the tokenizer, the weights
    gguf_reads.clear()
    once = files._load(source, folder, gguf, "float32", None, start)
    assert gguf_reads == [str(source)]
    assert once.model.config.to_dict() == plain.model.config.to_dict()
    mine, theirs = once.model.state_dict(), plain.model.state_dict()
    assert mine.keys() == theirs.keys()
    for name, value in theirs.items():
        assert torch.equal(mine[name], value), name
    ids = plain.tokenizer("abcabdefg")["input_ids"]
    assert once.tokenizer("abcabdefg")["input_ids"] == ids


def test_gguf_is_put_back_after_the_outermost_scope_even_on_an_error(tmp_path, gguf_reads):
    import gguf

    source = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf")
    counting, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    with pytest.raises(RuntimeError):
        with one_parse():
            first = gguf.GGUFReader(source)
            with one_parse():  # a second load at the same time (another thread's)
                assert gguf.GGUFReader(source) is first
                table = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2)
                assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2) is table
            assert gguf.GGUFReader(source) is first  # the outer scope still keeps it
            raise RuntimeError("a load that fails")
    assert gguf.GGUFReader is counting and gguf.get_tensor_name_map is name_map
    assert gguf_reads == [str(source)]
    with one_parse():
        assert gguf.GGUFReader(source) is not first  # a new scope parses anew
