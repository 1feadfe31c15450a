"""engine.dumps.tables_json: the tables part of report_json on its own, so a page can write
its JSON summary from the tables without keeping the report (and the upload) around."""

from __future__ import annotations

import json
import math

from safetensors.torch import save

from engine.dumps import Upload, report, report_json, report_tables, tables_json
from tests.dumps import dump_files as files


def test_tables_json_is_what_report_json_writes_under_tables():
    x = files.stream(layers=3, batch=1, tokens=5, d=8)
    x[1, 0, 2, 3] = float("nan")
    rep = report(Upload("d.safetensors", save(files.hf_names(x.clone()))))
    tables = report_tables(rep)
    assert tables_json(tables) == report_json(rep, tables)["tables"]
    text = json.dumps(tables_json(tables), allow_nan=False)  # NaN written as null
    token_rows = json.loads(text)["tokens"]
    assert token_rows[1 * 5 + 2]["finite_values"] == 7
    assert all(
        value is None or not isinstance(value, float) or math.isfinite(value)
        for row in token_rows
        for value in row.values()
    )
