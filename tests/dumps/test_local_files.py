"""Models in operator-named folders: listed by kind, and nothing outside the folders read —
a symlink that leads out, a `..` in an id, an id the listing did not make."""

from __future__ import annotations

import os

import pytest

from engine.dumps.local_files import find_model, list_models, named_folders
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


def test_a_listed_id_gives_its_resolved_path(folders):
    models, _ = folders
    found = find_model("0/tiny-llama", list_models())
    assert found.path == str((models / "tiny-llama").resolve())
