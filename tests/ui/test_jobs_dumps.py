"""ui/jobs/dumps.py: opening an upload is a job that may run on the pool and stops when asked;
the open and the report are keyed without the thresholds, so a new threshold reads nothing."""

from __future__ import annotations

import pytest

from engine.config import DumpSpec
from engine.dumps.sources import Upload
from engine.threads import Cancelled
from ui import compute, jobs
from ui.widgets.dumps import UploadedDump


def _chosen(name: str, size: int):
    return UploadedDump("f1", Upload(name, b"\0" * size)).chosen()


def test_opening_a_large_pt_upload_is_predicted_for_the_pool_and_stops_when_asked():
    job = jobs.dump_open(_chosen("big.pt", 200 * 10**6), DumpSpec())
    assert job.seconds > compute.INLINE_S  # torch.load copies it: a progress bar, cancellable
    with pytest.raises(Cancelled):
        job.run(lambda *_: None, lambda: True)
    header_only = jobs.dump_open(_chosen("big.safetensors", 200 * 10**6), DumpSpec())
    assert header_only.seconds < compute.INLINE_S  # a header is read inline


def test_a_new_threshold_keeps_the_open_and_report_keys():
    source = _chosen("d.safetensors", 10)
    strict = DumpSpec(massive_abs=5.0, massive_ratio=2.0, outlier_ratio=1.5)
    assert jobs.dump_open(source, DumpSpec()).key == jobs.dump_open(source, strict).key
    assert (
        jobs.dump_judged(source, None, DumpSpec()).key != jobs.dump_judged(source, None, strict).key
    )
