"""engine.dumps.cost: the report's predicted time grows with the values read and the norm
pairs fitted, and is of the order of a measured run (timings are never asserted tightly)."""

from __future__ import annotations

import time

from safetensors.torch import save

from engine.dumps.cost import BASE_S, PAIR_S, VALUE_S, report_seconds
from engine.dumps.dump import open_dump
from engine.dumps.report import report
from engine.dumps.sources import Upload
from tests.dumps import dump_files as files


def _dump(tensors):
    return open_dump(Upload("d.safetensors", save({k: v.clone() for k, v in tensors.items()})))


def test_prediction_counts_every_value_and_every_norm_pair():
    x = files.stream(layers=4, batch=2, tokens=8, d=16)
    plain = _dump(files.hf_names(x))
    assert report_seconds(plain.layout) == BASE_S + VALUE_S * 4 * 2 * 8 * 16
    paired = _dump(files.module_names(x))  # the same stream with 4 norm pairs
    assert report_seconds(paired.layout) == BASE_S + VALUE_S * 4 * 2 * 8 * 16 + 4 * PAIR_S


def test_prediction_is_the_order_of_a_measured_report():
    dump = _dump(files.hf_names(files.stream(layers=8, batch=2, tokens=256, d=256)))
    report(dump)  # warm: imports, first-call overheads
    start = time.perf_counter()
    report(dump)
    measured = time.perf_counter() - start
    predicted = report_seconds(dump.layout)
    assert predicted / 20 < measured < predicted * 20  # a busy 2-core machine varies a lot
