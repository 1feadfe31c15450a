"""--dask: the shards of a directory reduced on a distributed.LocalCluster give the local
result (to float32 precision); without dask the flag says how to install it."""

from __future__ import annotations

import builtins

import numpy as np
import pytest
import torch

from engine.config import DumpSpec
from engine.dumps.formats import numpy_file
from engine.dumps.report import report
from engine.dumps.sources import Upload
from engine.errors import EngineError
from tests.dumps import dump_files as files


@pytest.mark.slow  # starts a Dask cluster
def test_dask_local_cluster_equals_the_local_reduction(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.reduce.WINDOW_BYTES", 16 * 4 * 5)  # many tasks
    x = files.stream(layers=4, batch=4, tokens=9, d=16)
    x[2, 3, 4, 5] = float("nan")
    for part in range(2):
        tensors = files.hf_names(x[:, 2 * part : 2 * part + 2])
        files.write_safetensors(tmp_path / f"part-{part}.safetensors", tensors)
    on_dask = report(tmp_path, dask="local")
    local = report(tmp_path)
    assert on_dask.backend == "dask" and local.backend == "local"
    for name in ("row_mean", "row_ms", "row_maxabs", "channel_mean", "channel_var", "median_abs"):
        np.testing.assert_allclose(
            getattr(on_dask.stats, name), getattr(local.stats, name), rtol=1e-6, err_msg=name
        )
    for mine, theirs in zip(on_dask.stats.magnitudes, local.stats.magnitudes):
        np.testing.assert_array_equal(mine.dense(), theirs.dense())
    np.testing.assert_array_equal(on_dask.stats.top_values, local.stats.top_values)
    np.testing.assert_array_equal(on_dask.stats.nonfinite, local.stats.nonfinite)
    np.testing.assert_array_equal(on_dask.massive.layer, local.massive.layer)


@pytest.mark.slow  # starts a Dask cluster
def test_an_npz_member_is_decompressed_once_on_dask_as_locally(tmp_path, monkeypatch):
    """Its units are one task with one reader, which reads on: the member's header is read
    once per reduction, not once per unit (each reopening inflates the member's start)."""
    monkeypatch.setattr("engine.dumps.reduce.WINDOW_BYTES", 16 * 4 * 5)  # 8 units a member
    x = files.stream(layers=4, batch=4, tokens=10, d=16).numpy()
    path = files.write_npz(tmp_path / "d.npz", {"h": x[:2], "g": x[2:]}, compressed=True)
    opened = []
    real = numpy_file._read_header
    monkeypatch.setattr(
        numpy_file, "_read_header", lambda *args: opened.append(args[1]) or real(*args)
    )
    local = report(path, DumpSpec(stream="h"))
    local_opens, opened[:] = len(opened), []
    on_dask = report(path, DumpSpec(stream="h"), dask="local")
    assert len(opened) == local_opens
    np.testing.assert_allclose(on_dask.stats.row_ms, local.stats.row_ms, rtol=1e-6)


def test_a_refusal_on_a_worker_reaches_the_caller_whole(tmp_path, monkeypatch):
    path = files.write_safetensors(tmp_path / "d.safetensors", {"h": files.stream()})

    def broken(*args, **kwargs):
        from engine.dumps.refusals import refuse

        raise refuse("corrupt", file="d.safetensors", entry="h", format="x", detail="y", writer="z")

    monkeypatch.setattr("engine.dumps.cluster.reduce_unit", broken)
    with pytest.raises(EngineError) as caught:
        report(path, dask="local")
    assert caught.value.key == "dumps.corrupt" and caught.value.params["entry"] == "h"


def test_uploads_are_not_sent_to_a_cluster(tmp_path):
    path = files.write_npy(tmp_path / "d.npy", files.stream().numpy())
    with pytest.raises(EngineError) as caught:
        report(Upload("d.npy", path.read_bytes()), dask="local")
    assert caught.value.key == "dumps.dask_uploads"


def test_without_dask_the_flag_says_how_to_install_it(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_distributed(name, *args, **kwargs):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_distributed)
    path = files.write_npy(tmp_path / "d.npy", torch.zeros(2, 3, 4).numpy())
    with pytest.raises(EngineError) as caught:
        report(path, dask="local")
    assert caught.value.key == "dumps.dask_missing"
    assert "pip install -r requirements-scale.txt" in str(caught.value)


def test_unreachable_scheduler_is_a_refusal(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.cluster.CONNECT_TIMEOUT_S", 1)
    path = files.write_npy(tmp_path / "d.npy", files.stream().numpy())
    with pytest.raises(EngineError) as caught:
        report(path, dask="tcp://127.0.0.1:9")
    assert caught.value.key == "dumps.dask_failed" and "127.0.0.1:9" in str(caught.value)
