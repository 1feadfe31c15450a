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

from engine.dumps import report, report_tables
from engine.dumps.cli import main
from engine.dumps.tables import TABLES
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
    assert "top_k = 2" in capsys.readouterr().err


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
