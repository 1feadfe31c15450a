"""A refusal names a keyless file's one array in the reader's language (``engine.errors.Phrase``),
while a key a file itself holds is shown as the file wrote it."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from engine.dumps.formats.entries import WHOLE_FILE
from engine.dumps.report import report
from engine.errors import EngineError, Listing, Phrase
from tests.dumps import dump_files as files
from tests.dumps.test_dumps_wrong_kind import _encrypted, _npz_bytes
from ui.errors import error_text, own_words


def _message(source, lang: str, monkeypatch) -> str:
    monkeypatch.setattr("ui.i18n.current_language", lambda: lang)
    with pytest.raises(EngineError) as caught:
        report(source)
    assert caught.value.key == "dumps.empty_array"
    return error_text(caught.value)


def test_a_plain_npy_is_named_in_the_readers_language(tmp_path, monkeypatch):
    path = files.write_npy(tmp_path / "zero.npy", np.zeros((0, 16), dtype=np.float32))
    chinese = _message(path, "zh", monkeypatch)
    assert "条目“（整个文件）”" in chinese and "(file)" not in chinese
    assert "entry “(file)”" in _message(path, "en", monkeypatch)


def test_a_key_that_reads_like_the_placeholder_stays_the_files_own_text(tmp_path, monkeypatch):
    path = files.write_npz(tmp_path / "odd.npz", {"(file)": np.zeros((0, 16), np.float32)})
    chinese = _message(path, "zh", monkeypatch)
    assert "`(file)`" in chinese and "整个文件" not in chinese


def test_the_placeholder_is_english_text_for_the_cli_and_survives_a_cache(monkeypatch):
    assert WHOLE_FILE == "(file)"
    copied = pickle.loads(pickle.dumps(WHOLE_FILE))
    assert isinstance(copied, Phrase) and copied.key == "dumps.whole_file"
    monkeypatch.setattr("ui.i18n.current_language", lambda: "zh")
    assert own_words(copied) == "（整个文件）" and own_words("(file)") == "(file)"


def _encrypted_npz(tmp_path) -> EngineError:
    data, _ = _encrypted(_npz_bytes(), 1)
    (tmp_path / "locked.npz").write_bytes(data)
    with pytest.raises(EngineError) as caught:
        report(tmp_path / "locked.npz")
    assert caught.value.key == "dumps.encrypted_member"
    return caught.value


@pytest.mark.parametrize(
    ("lang", "writers"),
    [("en", "np.savez, np.savez_compressed"), ("zh", "np.savez、np.savez_compressed")],
)
def test_a_formats_writers_are_listed_with_the_readers_separator(
    tmp_path, monkeypatch, lang, writers
):
    error = _encrypted_npz(tmp_path)
    monkeypatch.setattr("ui.i18n.current_language", lambda: lang)
    assert writers in error_text(error)
    assert "np.savez, np.savez_compressed" in str(error)  # the CLI's English


def test_a_listing_is_english_text_for_the_cli_and_survives_a_cache(tmp_path):
    writers = _encrypted_npz(tmp_path).params["writer"]
    copied = pickle.loads(pickle.dumps(writers))
    assert isinstance(copied, Listing) and copied.items == ("np.savez", "np.savez_compressed")
    assert copied == "np.savez, np.savez_compressed"


@pytest.mark.parametrize(
    ("lang", "examples"),
    [
        ("en", "(`ids`: dtype `int64`; `s`: a scalar, shape [])"),
        ("zh", "（`ids`：数据类型 `int64`；`s`：标量，形状 []）"),
    ],
)
def test_skipped_examples_are_written_in_the_readers_language(
    tmp_path, monkeypatch, lang, examples
):
    """The entries a file holds are shown literally; why each was skipped, our own words."""
    path = files.write_npz(tmp_path / "ids.npz", {"ids": np.arange(6), "s": np.float32(1)})
    with pytest.raises(EngineError) as caught:
        report(path)
    assert caught.value.key == "dumps.no_usable_entries"
    monkeypatch.setattr("ui.i18n.current_language", lambda: lang)
    assert examples in error_text(caught.value)
    copied = pickle.loads(pickle.dumps(caught.value.params["examples"]))
    assert copied == "ids: dtype int64; s: a scalar, shape []"  # the CLI's


def test_a_skipped_keyless_array_is_named_in_the_readers_language(tmp_path, monkeypatch):
    path = files.write_pt(tmp_path / "one.pt", torch.tensor(1.0))
    with pytest.raises(EngineError) as caught:
        report(path)
    monkeypatch.setattr("ui.i18n.current_language", lambda: "zh")
    assert "（文件本身：标量，形状 []）" in error_text(caught.value)  # once in parentheses
    monkeypatch.setattr("ui.i18n.current_language", lambda: "en")
    assert "(the file itself: a scalar, shape [])" in error_text(caught.value)


@pytest.mark.parametrize(
    "files, en, zh",
    [
        ((), "(no config.json)", "（没有 config.json）"),
        (
            ("a.gguf", "b.gguf"),
            "several .gguf files: a.gguf, b.gguf",
            "多个 .gguf 文件：a.gguf、b.gguf",
        ),
    ],
)
def test_a_folder_that_is_not_a_model_says_why_in_the_readers_language(
    tmp_path, monkeypatch, files, en, zh
):
    """The engine wrote why a folder is no model in English ("no config.json, several .gguf
    files: …") into the Chinese message too."""
    from engine.dumps.model_files import load_model

    for name in files:
        (tmp_path / name).write_bytes(b"GGUF")
    with pytest.raises(EngineError) as caught:
        load_model(tmp_path)
    assert caught.value.key == "capture.not_a_model" and en in str(caught.value)
    for lang, words in (("en", en), ("zh", zh)):
        monkeypatch.setattr("ui.i18n.current_language", lambda lang=lang: lang)
        assert words in error_text(caught.value).replace("\u00a0", " ")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_files_sizes_are_grouped_and_a_typed_number_stays_as_typed(tmp_path, monkeypatch, lang):
    """A text file read as safetensors "says" a header of quintillions of bytes: the page
    groups our own numbers; a number that came from a link is quoted as it came."""
    monkeypatch.setattr("ui.i18n.current_language", lambda: lang)
    path = tmp_path / "notes.safetensors"
    path.write_bytes(b"these are just some notes, not tensors\n" * 40)
    with pytest.raises(EngineError) as caught:
        report(path)
    claimed = int.from_bytes(path.read_bytes()[:8], "little")
    message = error_text(caught.value)
    assert f"{claimed:,}" in message and f"{path.stat().st_size:,}" in message
    assert str(claimed) not in message
    typed = error_text(EngineError("experiments.bad_layers", {"value": 12000, "last": 1999}))
    assert "12000" in typed and "1,999" in typed
