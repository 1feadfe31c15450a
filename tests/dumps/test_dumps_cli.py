"""``python -m engine.dumps report``: prints the page's tables, writes JSON and CSV with the
same numbers, shows progress on stderr, and exits 2 with the message on a refusal."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from engine.dumps.cli import main
from engine.dumps.report import report
from engine.dumps.tables import TABLES, report_tables
from tests.dumps import dump_files as files

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def dump_path(tmp_path):
    x = files.stream()
    x[1, 0, 2, 4] = float("nan")
    return files.write_safetensors(tmp_path / "d.safetensors", files.tl_names(x))


def test_report_prints_writes_and_matches_the_engine(dump_path, tmp_path, capsys):
    out_json, out_csv = tmp_path / "r.json", tmp_path / "csv"
    assert main(["report", str(dump_path), "--json", str(out_json), "--csv", str(out_csv)]) == 0
    printed = capsys.readouterr()
    assert "blocks.{i}.hook_resid_pre" in printed.out and "Massive activations" in printed.out
    assert "1 NaN" in printed.out
    assert "100.0%" in printed.err  # the progress bar is on stderr
    tables = report_tables(report(dump_path))
    written = json.loads(out_json.read_text())
    assert set(written["tables"]) == set(TABLES)
    for name, table in tables.items():
        from_csv = pd.read_csv(out_csv / f"{name}.csv")
        assert list(from_csv.columns) == list(table.columns), name
        assert len(from_csv) == len(table) == len(written["tables"][name]), name
    layers = tables["layers"]
    for row, record in zip(layers.itertuples(), written["tables"]["layers"]):
        assert record["rms"] == pytest.approx(row.rms, rel=1e-12)
        assert record["massive_count"] == row.massive_count
    first = written["tables"]["layers"][0]
    assert first["growth_vs_previous"] is None  # NaN is written as null, valid JSON
    assert not any(
        isinstance(v, float) and not math.isfinite(v)
        for r in written["tables"]["tokens"]
        for v in r.values()
    )
    assert written["layout"]["stream"] == "blocks.{i}.hook_resid_pre"


def test_refusal_exits_2_with_the_message(tmp_path, capsys):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY garbage")
    assert main(["report", str(bad), "--no-progress"]) == 2
    assert "bad.npy" in capsys.readouterr().err


def test_override_flags_reach_the_spec(dump_path, capsys):
    assert (
        main(["report", str(dump_path), "--stream", "blocks.{i}.hook_resid_mid", "--no-progress"])
        == 0
    )
    assert "Stream: blocks.{i}.hook_resid_mid (override)" in capsys.readouterr().out
    assert main(["report", str(dump_path), "--top-k", "2", "--no-progress"]) == 2
    assert "--top-k = 2 is not accepted" in capsys.readouterr().err  # the option, as typed


def test_outputs_that_cannot_be_written_are_refused_before_the_read(
    dump_path, tmp_path, capsys, monkeypatch
):
    report_module = sys.modules["engine.dumps.report"]  # engine.dumps.report is also a function

    def never(*args, **kwargs):
        raise AssertionError("the dump was read before its outputs were checked")

    monkeypatch.setattr(report_module, "report", never)
    a_file = tmp_path / "taken.txt"
    a_file.write_text("")
    for flags, said in (
        (["--json", str(tmp_path)], "is a directory"),
        (["--csv", str(a_file)], "is a file, not a folder"),
        (["--json", str(a_file / "r.json")], "is a file, not a directory"),
    ):
        assert main(["report", str(dump_path), "--no-progress", *flags]) == 2, flags
        assert said in capsys.readouterr().err, flags


@pytest.mark.parametrize("workers", ["0", "-5"])
def test_workers_must_be_at_least_one(dump_path, workers):
    with pytest.raises(SystemExit):  # argparse's message names the option: exit 2
        main(["report", str(dump_path), "--workers", workers])


def test_json_goes_into_folders_made_for_it_and_rows_must_be_positive(dump_path, tmp_path):
    out = tmp_path / "new" / "deeper" / "r.json"
    assert main(["report", str(dump_path), "--no-progress", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["layout"]["stream"] == "blocks.{i}.hook_resid_pre"
    for rows in ("0", "-1", "x"):
        with pytest.raises(SystemExit) as caught:
            main(["report", str(dump_path), "--rows", rows])
        assert caught.value.code == 2


@pytest.mark.slow  # a fresh interpreter imports torch
def test_module_entry_point_runs(dump_path):
    done = subprocess.run(
        [sys.executable, "-m", "engine.dumps", "report", str(dump_path), "--rows", "3"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "first 3 of" in done.stdout


def test_a_directory_of_thousands_of_files_is_refused_from_its_listing(tmp_path, capsys):
    from engine.dumps.limits import MAX_FILES

    for index in range(MAX_FILES + 1):
        (tmp_path / f"part-{index:05d}.npy").write_bytes(b"")
    assert main(["report", str(tmp_path), "--no-progress"]) == 2
    assert f"matched {MAX_FILES + 1} files; at most {MAX_FILES} shards" in capsys.readouterr().err


def test_shards_holding_more_arrays_than_accepted_are_refused_while_scanning(tmp_path, capsys):
    from engine.dumps.limits import MAX_ENTRIES

    layer = files.stream(layers=1, batch=1, tokens=2, d=4)[0, 0].numpy()
    for shard in range(3):
        arrays = {f"h.{shard * 2000 + i}": layer for i in range(2000)}
        files.write_npz(tmp_path / f"s{shard}.npz", arrays)
    assert main(["report", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "s0.npz … s2.npz holds 6000 arrays" in err and f"at most {MAX_ENTRIES}" in err


def test_symlink_loops_are_skipped_in_a_directory_and_named_as_a_source(tmp_path, capsys):
    x = files.stream(layers=3, batch=1, tokens=4, d=8)
    files.write_safetensors(tmp_path / "good.safetensors", files.hf_names(x))
    (tmp_path / "loop.safetensors").symlink_to(tmp_path / "loop.safetensors")
    (tmp_path / "a.npy").symlink_to(tmp_path / "b.npy")
    (tmp_path / "b.npy").symlink_to(tmp_path / "a.npy")
    assert main(["report", str(tmp_path), "--no-progress"]) == 0
    assert "good.safetensors" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "loop.safetensors"), "--no-progress"]) == 2
    assert "loop.safetensors: no such file or directory" in capsys.readouterr().err
    (tmp_path / "sub").symlink_to(tmp_path)  # a directory that contains itself
    assert main(["report", str(tmp_path / "sub" / "sub" / "sub"), "--no-progress"]) == 0


def test_the_dump_being_read_is_never_the_reports_output(dump_path, tmp_path, capsys):
    """`--json` over the dump replaced it with JSON text; a shard of a folder the same."""
    before = dump_path.read_bytes()
    assert main(["report", str(dump_path), "--no-progress", "--json", str(dump_path)]) == 2
    assert "is a file of the dump being read" in capsys.readouterr().err
    assert dump_path.read_bytes() == before
    folder = str(dump_path.parent)
    assert main(["report", folder, "--no-progress", "--json", str(dump_path)]) == 2
    assert dump_path.read_bytes() == before


def test_a_failed_write_is_a_message_and_leaves_no_file_and_a_device_stays_a_device(
    dump_path, tmp_path, capsys
):
    """A full disk raised OSError (exit 1, a traceback) and left a cut JSON file; a rename
    over /dev/full made it a file."""
    assert main(["report", str(dump_path), "--no-progress", "--json", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert "could not be written (No space left on device)" in err and "Traceback" not in err
    assert Path("/dev/full").is_char_device()
    assert not list(Path("/dev").glob("full.partial*"))


@pytest.mark.slow  # a fresh interpreter imports torch
def test_a_reader_closing_the_pipe_early_gets_the_files_and_no_traceback(dump_path, tmp_path):
    """`report … --json OUT | head -2`: the text was printed before the files were written,
    and the closed pipe ended the run with BrokenPipeError before them."""
    out = tmp_path / "r.json"
    command = [sys.executable, "-m", "engine.dumps", "report", str(dump_path), "--json", str(out)]
    shell = " ".join(f"'{part}'" for part in command) + " --no-progress | head -2"
    run = subprocess.run(
        ["bash", "-o", "pipefail", "-c", shell],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert json.loads(out.read_text())["tables"]


def test_an_entry_names_control_characters_reach_the_terminal_as_escapes(tmp_path, capsys):
    """A name holding an escape sequence set the terminal's colours, title or cleared it,
    from the report and from a refusal alike."""
    x = files.stream(layers=3)
    named = {f"hidden\x1b[31m_states.{i}": x[i] for i in range(3)}
    path = files.write_safetensors(tmp_path / "c.safetensors", named)
    assert main(["report", str(path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "hidden\\x1b[31m_states.{i}" in out
    bad = {f"h\x1b]0;pwned\x07.{i}": x[i].to(torch.int64) for i in range(3)}
    path = files.write_safetensors(tmp_path / "i.safetensors", bad)
    assert main(["report", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b]0;pwned\\x07" in err
