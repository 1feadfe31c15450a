"""Models and dump files in operator-named folders: listed by kind, and nothing outside the
folders read — a symlink that leads out, a `..` in an id, an id the listing did not make."""

from __future__ import annotations

import os

import pytest

from engine.dumps import local_files
from engine.dumps.local_files import find_dump, find_model, list_dumps, list_models, named_folders
from engine.errors import EngineError


def _pretrained(directory):
    directory.mkdir(parents=True)
    (directory / "config.json").write_text("{}")
    (directory / "model.safetensors").write_bytes(b"")
    return directory


@pytest.fixture
def folders(tmp_path, monkeypatch):
    models = tmp_path / "models"
    _pretrained(models / "tiny-llama")
    (models / "gguf").mkdir()
    (models / "gguf" / "smol.Q4.gguf").write_bytes(b"GGUF")
    (models / "notes.txt").write_text("not a model")
    (models / "config-only").mkdir()
    (models / "config-only" / "config.json").write_text("{}")  # no weights: not a model
    outside = _pretrained(tmp_path / "secret-model")
    (tmp_path / "outside.gguf").write_bytes(b"GGUF")
    (models / "leak").symlink_to(outside)  # leads out of the folder
    (models / "leak.gguf").symlink_to(tmp_path / "outside.gguf")
    (models / "inner.gguf").symlink_to(models / "gguf" / "smol.Q4.gguf")  # stays inside
    other = tmp_path / "other"
    _pretrained(other / "a" / "b" / "deep")
    _pretrained(other / "a" / "b" / "c" / "d" / "too-deep")
    monkeypatch.setenv(
        "NORMSCOPE_MODEL_DIRS", os.pathsep.join([str(models), str(other), str(tmp_path / "none")])
    )
    return models, other


def test_the_named_folders_models_are_listed_by_kind_and_nothing_else(folders):
    models, other = folders
    assert named_folders() == (models.resolve(), other.resolve())  # a missing folder skipped
    listed = {m.id: m.kind for m in list_models()}
    assert listed == {
        "0/tiny-llama": "pretrained",
        "0/gguf/smol.Q4.gguf": "gguf",
        "1/a/b/deep": "pretrained",
    }  # the inner link resolves to a listed file; links out, and too deep, are not listed


def test_no_setting_lists_nothing(monkeypatch):
    monkeypatch.delenv("NORMSCOPE_MODEL_DIRS", raising=False)
    assert named_folders() == () and list_models() == ()


@pytest.mark.parametrize(
    "model_id", ["0/leak", "0/../secret-model", "/etc", "0/tiny-llama/..", "2/x", "0/notes.txt"]
)
def test_an_id_the_listing_did_not_make_is_refused(folders, model_id):
    with pytest.raises(EngineError) as refused:
        find_model(model_id, list_models())
    assert refused.value.key == "capture.unknown_model"
    assert "0/tiny-llama" in str(refused.value)


def test_an_id_where_no_model_is_listed_is_refused_naming_the_built_in_one():
    with pytest.raises(EngineError) as refused:
        find_model("zz", ())
    assert refused.value.key == "capture.no_models"
    assert "lists no models" in str(refused.value) and "built-in model" in str(refused.value)
    assert "—" not in str(refused.value)  # no empty list to show


def test_a_listed_id_gives_its_resolved_path(folders):
    models, _ = folders
    found = find_model("0/tiny-llama", list_models())
    assert found.path == str((models / "tiny-llama").resolve())


# ----- dump files (NORMSCOPE_DUMP_DIRS) -----------------------------------------------------


@pytest.fixture
def dump_folder(tmp_path, monkeypatch):
    dumps = tmp_path / "dumps"
    (dumps / "runs" / "a").mkdir(parents=True)
    (dumps / "one.safetensors").write_bytes(b"x" * 10)
    (dumps / "runs" / "a" / "hidden.NPZ").write_bytes(b"x" * 3)  # suffixes in any case
    (dumps / "runs" / "cache.pt").write_bytes(b"")
    (dumps / "notes.txt").write_text("not a dump")
    (dumps / "runs" / "a" / "b" / "c").mkdir(parents=True)
    (dumps / "runs" / "a" / "b" / "c" / "too-deep.npy").write_bytes(b"")
    _pretrained(dumps / "a-model")  # its model.safetensors is weights, not a dump
    (tmp_path / "secret.npy").write_bytes(b"")
    (dumps / "leak.npy").symlink_to(tmp_path / "secret.npy")  # leads out of the folder
    (dumps / "loop").symlink_to(dumps / "loop")  # a link to itself: skipped, no hang
    monkeypatch.setenv("NORMSCOPE_DUMP_DIRS", str(dumps))
    return dumps


def test_the_named_folders_dump_files_are_listed_with_their_size_and_nothing_else(dump_folder):
    listed = {d.id: d.size for d in list_dumps()}
    assert listed == {"0/one.safetensors": 10, "0/runs/a/hidden.NPZ": 3, "0/runs/cache.pt": 0}
    found = find_dump("0/one.safetensors", list_dumps())
    assert found.path == str((dump_folder / "one.safetensors").resolve())
    assert found.modified_ns == (dump_folder / "one.safetensors").stat().st_mtime_ns


def test_the_dump_setting_is_its_own(dump_folder, monkeypatch):
    monkeypatch.delenv("NORMSCOPE_MODEL_DIRS", raising=False)
    assert list_models() == ()  # the dump folders hold no model the Experiments page lists
    monkeypatch.delenv("NORMSCOPE_DUMP_DIRS")
    assert list_dumps() == ()


@pytest.mark.parametrize(
    "dump_id", ["0/leak.npy", "0/../secret.npy", "/etc/passwd", "0/notes.txt", "0/a-model"]
)
def test_a_dump_id_the_listing_did_not_make_is_refused(dump_folder, dump_id):
    with pytest.raises(EngineError) as refused:
        find_dump(dump_id, list_dumps())
    assert refused.value.key == "dumps.unknown_dump"
    assert "0/one.safetensors" in str(refused.value)


def test_a_huge_folder_is_listed_in_bounded_work(tmp_path, monkeypatch):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(60):
        (folder / f"{i:03}.npy").write_bytes(b"")
    monkeypatch.setattr(local_files, "MAX_LISTED", 10)
    assert [d.id for d in list_dumps((folder.resolve(),))] == [f"0/{i:03}.npy" for i in range(10)]
    monkeypatch.setattr(local_files, "MAX_LISTED", 200)
    monkeypatch.setattr(local_files, "MAX_SCANNED", 25)
    assert len(list_dumps((folder.resolve(),))) == 25  # 25 entries looked at, of 60
