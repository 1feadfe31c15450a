"""A dump file on disk rewritten between its opening and a later read (a training job writing
its dumps while they are looked at): refused by name, never read half old, half new.
Oracle: the arrays written, and the file's own size and modification time."""

from __future__ import annotations

import os

import numpy as np
import pytest

from engine.dumps.dump import open_dump, read_tokens
from engine.dumps.report import report
from engine.errors import EngineError
from tests.dumps import dump_files as files

WRITERS = {
    "safetensors": lambda path, x: files.write_safetensors(path, {"hidden_states": x}),
    "npy": lambda path, x: files.write_npy(path, x.numpy()),
    "npz": lambda path, x: files.write_npz(
        path, {f"layer_{i}": a.numpy() for i, a in enumerate(x)}
    ),
    "pt": lambda path, x: files.write_pt(path, {"hidden_states": x}),
}


def _rewrite(path, write, x) -> None:
    """``path`` written again with other values: the same size, a modification time 2 s later
    (as a file system that keeps whole seconds tells it apart)."""
    before = os.stat(path)
    write(path, x + 1)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 2_000_000_000))


@pytest.mark.parametrize("suffix", WRITERS)
def test_a_file_rewritten_after_it_was_opened_is_refused_at_the_next_read(tmp_path, suffix):
    x, write = files.stream(layers=3, tokens=5, d=8), WRITERS[suffix]
    path = write(tmp_path / f"dump.{suffix}", x)
    dump = open_dump(path)
    rows = list(range(dump.layout.batch * dump.layout.tokens))
    first = read_tokens(dump, [0], rows)  # as opened: read
    assert np.array_equal(first[0].numpy(), x[0].reshape(-1, 8).numpy())
    _rewrite(path, write, x)
    for read in (lambda: read_tokens(dump, [0], rows), lambda: report(dump)):
        with pytest.raises(EngineError) as refused:
            read()
        assert refused.value.key == "dumps.dump_rewritten"
        assert refused.value.params["file"] == f"dump.{suffix}"
    assert report(open_dump(path)).layout.d == 8  # opened again: read


def test_a_shard_rewritten_between_the_folders_opening_and_its_report_is_refused(tmp_path):
    x = files.stream(layers=4, tokens=5, d=8)
    for shard in range(2):
        files.write_npy(tmp_path / f"shard_{shard}.npy", x[2 * shard : 2 * shard + 2].numpy())
    dump = open_dump(tmp_path)
    _rewrite(tmp_path / "shard_1.npy", lambda p, a: files.write_npy(p, a.numpy()), x[2:])
    with pytest.raises(EngineError) as refused:
        report(dump)
    assert (refused.value.key, refused.value.params["file"]) == (
        "dumps.dump_rewritten",
        "shard_1.npy",
    )


def test_a_file_removed_after_it_was_opened_is_refused_by_the_same_name(tmp_path):
    path = files.write_npy(tmp_path / "gone.npy", files.stream(layers=2, tokens=3, d=4).numpy())
    dump = open_dump(path)
    path.unlink()
    with pytest.raises(EngineError) as refused:
        report(dump)
    assert refused.value.key == "dumps.dump_rewritten"
