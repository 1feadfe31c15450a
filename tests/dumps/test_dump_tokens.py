"""Token texts from a dump file that is not a capture: a ``tokens`` entry of an .npz (a
string array), of a .pt dict (a list of strings) or of the safetensors metadata (JSON),
for one sequence or a batch; used only when their shape is the stream's, and said so."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.dumps.dump import open_dump
from engine.dumps.report import report
from tests.dumps import dump_files as files
from tests.plain_text import plain
from ui.text.dumps import dump_tokens, tokens_note

X = files.stream(layers=3, batch=1, tokens=5)  # [L, 1, T, d]
WORDS = ["The", " cat", " sat", " on", " 猫"]


def _hidden(batch: int = 1) -> dict:
    x = files.stream(layers=3, batch=batch, tokens=5)
    return {f"model.layers.{i}.input": x[i] for i in range(3)}


@pytest.mark.parametrize("fmt", ["npz", "pt", "safetensors"])
def test_a_files_tokens_label_its_positions(tmp_path, fmt):
    tensors = _hidden()
    if fmt == "npz":
        arrays = {k: v.numpy() for k, v in tensors.items()} | {"tokens": np.array(WORDS)}
        path = files.write_npz(tmp_path / "d.npz", arrays)
    elif fmt == "pt":
        path = files.write_pt(tmp_path / "d.pt", {**tensors, "tokens": WORDS})
    else:
        metadata = {"tokens": json.dumps(WORDS, ensure_ascii=False)}
        path = files.write_safetensors(tmp_path / "d.safetensors", tensors, metadata)
    rep = report(path)
    assert dump_tokens(rep) == (tuple(WORDS),)
    assert "`tokens` entry" in tokens_note(rep, "en")
    skipped = [item.key for scan in open_dump(path).scans for item in scan.skipped]
    assert not [key for key in skipped if key.startswith("tokens")]  # not listed as skipped
    assert all(not label.startswith("tokens") for label in rep.labels)


def test_a_batch_of_token_rows_labels_each_sequence(tmp_path):
    rows = [WORDS, ["A", " dog", " ran", " off", "!"]]
    path = files.write_pt(tmp_path / "d.pt", {**_hidden(batch=2), "tokens": rows})
    assert dump_tokens(report(path)) == tuple(tuple(r) for r in rows)


def test_tokens_of_another_shape_are_not_used_and_the_page_says_why(tmp_path):
    path = files.write_pt(tmp_path / "d.pt", {**_hidden(), "tokens": WORDS[:3]})
    rep = report(path)
    assert dump_tokens(rep) is None
    assert "not 1 × 5 strings" in plain(tokens_note(rep, "en"))


@pytest.mark.parametrize("bad", ["not json", json.dumps([1, 2, 3, 4, 5]), json.dumps({"a": 1})])
def test_malformed_token_metadata_is_ignored(tmp_path, bad):
    path = files.write_safetensors(tmp_path / "d.safetensors", _hidden(), {"tokens": bad})
    assert dump_tokens(report(path)) is None


def test_a_file_without_tokens_says_nothing(tmp_path):
    rep = report(files.write_safetensors(tmp_path / "d.safetensors", _hidden()))
    assert dump_tokens(rep) is None and tokens_note(rep, "en") is None
