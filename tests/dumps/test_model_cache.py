"""The cache of models loaded from GGUF files (engine/dumps/model_cache.py), through
``load_model`` on a tiny GGUF Llama: a cached load answers as the GGUF load did without
reading the GGUF, and a damaged, stale or foreign entry is never used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from engine.dumps import model_cache
from engine.dumps.model_files import load_model
from tests.dumps import tiny_models

PROMPT = "abcabdefg"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(model_cache.CACHE_VARIABLE, str(root))
    monkeypatch.delenv(model_cache.LIMIT_VARIABLE, raising=False)
    return root


def logits(loaded) -> torch.Tensor:
    ids = loaded.tokenizer(PROMPT, return_tensors="pt")
    with torch.no_grad():
        return loaded.model(**ids).logits


def entry_folder(root: Path) -> Path:
    (folder,) = [p for p in root.iterdir() if p.is_dir()]
    return folder


@pytest.mark.parametrize("tied", [True, False], ids=["tied head", "own head"])
def test_a_cached_load_gives_the_gguf_loads_logits_without_reading_the_gguf(
    tmp_path, cache, gguf_reads, tied
):
    source = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf", tied=tied)
    cold = load_model(source)
    assert gguf_reads, "the first load reads the GGUF file"
    gguf_reads.clear()
    warm = load_model(source)
    assert gguf_reads == []
    assert torch.equal(logits(warm), logits(cold))
    assert warm.weights == cold.weights  # the same dequantized numbers, said the same way
    assert warm.tokenizer(PROMPT)["input_ids"] == cold.tokenizer(PROMPT)["input_ids"]
    head, embedding = warm.model.get_output_embeddings(), warm.model.get_input_embeddings()
    assert (head.weight is embedding.weight) == tied


def test_the_cached_weights_are_pages_of_the_cache_file(tmp_path, cache):
    """Mapped, not copied: every process serving the model shares them."""
    source = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf")
    load_model(source)
    warm = load_model(source)
    weights_file = str(entry_folder(cache) / model_cache.WEIGHTS)
    ranges = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split()
        if fields[-1] == weights_file:
            low, high = (int(v, 16) for v in fields[0].split("-"))
            ranges.append((low, high))
    assert ranges, "the weights file is mapped"
    for name, parameter in warm.model.named_parameters():
        pointer = parameter.data_ptr()
        assert any(low <= pointer < high for low, high in ranges), name


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) - 7] ^= 0x01  # in the last tensor's numbers; the size stays the same
    path.write_bytes(bytes(data))


def _garble_manifest(path: Path) -> None:
    path.parent.joinpath(model_cache.MANIFEST).write_text("{not json")


@pytest.mark.parametrize(
    ("damaged", "damage"),
    [
        (model_cache.WEIGHTS, _truncate),
        (model_cache.WEIGHTS, _flip_a_byte),
        ("tokenizer.json", _flip_a_byte),
        ("config.json", _truncate),
        (model_cache.WEIGHTS, _garble_manifest),
        (model_cache.WEIGHTS, Path.unlink),
    ],
    ids=[
        "truncated weights",
        "a changed byte",
        "changed tokenizer",
        "truncated config",
        "garbled manifest",
        "weights gone",
    ],
)
def test_a_damaged_entry_is_rebuilt_from_the_gguf(tmp_path, cache, gguf_reads, damaged, damage):
    source = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf")
    expected = logits(load_model(source))
    damage(entry_folder(cache) / damaged)
    gguf_reads.clear()
    rebuilt = load_model(source)
    assert gguf_reads, "the damaged entry was not used: the GGUF was read again"
    assert torch.equal(logits(rebuilt), expected)
    gguf_reads.clear()
    assert torch.equal(logits(load_model(source)), expected)
    assert gguf_reads == [], "and the rebuilt entry is used next time"


def test_an_entry_missing_a_weight_is_rebuilt(tmp_path, cache, gguf_reads):
    """Files that match their manifest but do not make the whole model (written by another
    version, say) are not used either: no parameter is left empty."""
    from safetensors.torch import load_file, save_file

    source = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf")
    expected = logits(load_model(source))
    folder = entry_folder(cache)
    weights = load_file(folder / model_cache.WEIGHTS)
    del weights["model.norm.weight"]
    save_file(weights, folder / model_cache.WEIGHTS)
    manifest = json.loads((folder / model_cache.MANIFEST).read_text())
    written = folder / model_cache.WEIGHTS
    manifest["files"][model_cache.WEIGHTS] = {
        "size": written.stat().st_size,
        "sha256": model_cache.file_sha256(written),
    }
    (folder / model_cache.MANIFEST).write_text(json.dumps(manifest))
    gguf_reads.clear()
    assert torch.equal(logits(load_model(source)), expected)
    assert gguf_reads


def test_an_entry_of_a_changed_source_is_not_used(tmp_path, cache, gguf_reads):
    source = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf", seed=0)
    before = logits(load_model(source))
    tiny_models.save_tiny_gguf(source, seed=1)  # same name, same size, other weights
    gguf_reads.clear()
    after = load_model(source)
    assert gguf_reads
    assert not torch.equal(logits(after), before)


def test_an_entry_under_another_key_is_not_used(tmp_path, cache, gguf_reads):
    """An entry copied or renamed to another source's key names its own source in its
    manifest: it is not taken for the other."""
    first = tiny_models.save_tiny_gguf(tmp_path / "first.gguf", seed=0)
    second = tiny_models.save_tiny_gguf(tmp_path / "second.gguf", seed=1)
    load_model(first)
    wrong = model_cache.cache_entry(second, "float32").folder
    shutil.copytree(entry_folder(cache), wrong)
    gguf_reads.clear()
    loaded = load_model(second)
    assert gguf_reads
    assert json.loads((wrong / model_cache.MANIFEST).read_text())["identity"]["source_name"] == (
        "second.gguf"
    )
    assert not torch.equal(logits(loaded), logits(load_model(first)))


def test_each_dtype_has_its_own_entry(tmp_path, cache):
    source = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf")
    load_model(source, "float32")
    half = load_model(source, "bfloat16")
    assert half.model.get_input_embeddings().weight.dtype == torch.bfloat16
    assert len([p for p in cache.iterdir() if p.is_dir()]) == 2


def test_the_cache_stays_within_its_bound(tmp_path, cache, monkeypatch):
    """Past the bound the least recently used entry goes; a model over it is not cached."""
    first = tiny_models.save_tiny_gguf(tmp_path / "first.gguf", seed=0)
    second = tiny_models.save_tiny_gguf(tmp_path / "second.gguf", seed=1)
    load_model(first)
    one_entry = sum(p.stat().st_size for p in entry_folder(cache).iterdir())
    monkeypatch.setenv(model_cache.LIMIT_VARIABLE, str(1.5 * one_entry / 2**20))
    load_model(second)
    (kept,) = [p for p in cache.iterdir() if p.is_dir()]
    assert kept == model_cache.cache_entry(second, "float32").folder
    monkeypatch.setenv(model_cache.LIMIT_VARIABLE, "0")
    shutil.rmtree(kept)
    assert torch.isfinite(logits(load_model(second))).all()
    assert [p for p in cache.iterdir() if p.is_dir()] == []


def test_with_the_cache_off_nothing_is_written(tmp_path, monkeypatch, gguf_reads):
    monkeypatch.setenv(model_cache.CACHE_VARIABLE, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    source = tiny_models.save_tiny_gguf(tmp_path / "tiny.gguf")
    load_model(source)
    gguf_reads.clear()
    load_model(source)
    assert gguf_reads, "every load reads the GGUF"
    assert not (tmp_path / "xdg").exists()


def test_the_default_folder_is_under_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(model_cache.CACHE_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert model_cache.cache_root() == tmp_path / "normscope" / "models"


def test_a_cache_folder_that_cannot_be_made_is_named_in_the_log_once(tmp_path, monkeypatch, caplog):
    """Every start then dequantizes again: the operator learns why from the server's log."""
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv(model_cache.CACHE_VARIABLE, str(blocker / "models"))
    model_cache._unusable.cache_clear()
    source = tmp_path / "model.gguf"
    source.write_bytes(b"GGUF")
    with caplog.at_level("WARNING", logger=model_cache.__name__):
        assert model_cache.cache_entry(source, "float32") is None
        assert model_cache.cache_entry(source, "float32") is None
    assert len(caplog.records) == 1 and str(blocker / "models") in caplog.text
