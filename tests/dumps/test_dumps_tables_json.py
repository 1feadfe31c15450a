"""engine.dumps.tables.json_text: the summary and every table as JSON text, written table by table,
so a page can write its JSON download from the tables without keeping the report (and the
upload) around, and a table of a million tokens does not become a million Python dicts."""

from __future__ import annotations

import json
import math

import numpy as np
from safetensors.torch import save

from engine.dumps.report import report
from engine.dumps.sources import Upload
from engine.dumps.tables import json_text, report_summary, report_tables
from tests.dumps import dump_files as files


def test_json_text_is_the_summary_and_every_table_with_nan_as_null():
    x = files.stream(layers=3, batch=1, tokens=5, d=8)
    x[1, 0, 2, 3] = float("nan")
    rep = report(Upload("d.safetensors", save(files.hf_names(x.clone()))))
    tables = report_tables(rep)
    data = json.loads(json_text(report_summary(rep), tables))
    assert data["layout"]["stream"] == "hidden_states.{i}" and set(data["tables"]) == set(tables)
    token_rows = data["tables"]["tokens"]
    assert token_rows[1 * 5 + 2]["finite_values"] == 7
    assert all(
        value is None or not isinstance(value, float) or math.isfinite(value)
        for row in token_rows
        for value in row.values()
    )
    want = tables["tokens"]["rms"].to_numpy()
    got = np.array([row["rms"] for row in token_rows], dtype=float)
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_an_empty_summary_still_makes_an_object():
    assert json.loads(json_text({}, {})) == {"tables": {}}
