"""Every accepted format, dtype and layout loads, and reads back the arrays written.

Oracle: the arrays the test wrote (through safetensors, numpy and torch's own writers).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.config import DumpSpec
from engine.dumps.dump import open_dump, read_tokens
from engine.dumps.sources import Upload
from tests.dumps import dump_files as files

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _layer_rows(x: torch.Tensor, layer: int) -> torch.Tensor:
    return x[layer].reshape(-1, x.shape[-1]).float()  # [B*T, d]


def _check_stream(dump, x: torch.Tensor) -> None:
    """Every layer of ``dump`` holds exactly x[layer] ([L, B, T, d] or [L, T, d])."""
    layout = dump.layout
    assert len(layout.layers) == x.shape[0]
    assert layout.d == x.shape[-1] and layout.tokens == x.shape[-2]
    rows = list(range(layout.batch * layout.tokens))
    got = read_tokens(dump, list(range(x.shape[0])), rows)  # [L, B*T, d]
    for layer in range(x.shape[0]):
        torch.testing.assert_close(got[layer], _layer_rows(x, layer), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_safetensors_stacked_every_dtype(tmp_path, dtype):
    x = files.stream(dtype=dtype)
    path = files.write_safetensors(tmp_path / "d.safetensors", {"hidden_states": x})
    dump = open_dump(path)
    assert dump.layout.axes == "LBTd" and dump.layout.dtype == str(dtype).split(".")[1]
    _check_stream(dump, x)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_npy_stacked_is_memory_mapped_and_exact(tmp_path, dtype):
    x = files.stream().numpy().astype(dtype)
    dump = open_dump(files.write_npy(tmp_path / "acts.npy", x))
    assert dump.layout.axes == "LBTd"
    _check_stream(dump, torch.from_numpy(x))


def test_npy_big_endian_reads_the_same_values(tmp_path):
    x = files.stream().numpy()
    dump = open_dump(files.write_npy(tmp_path / "acts.npy", x.astype(">f4")))
    _check_stream(dump, torch.from_numpy(x))


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_per_layer_members(tmp_path, compressed):
    x = files.stream()
    arrays = {f"layer_{i}": x[i].numpy() for i in range(x.shape[0])}
    dump = open_dump(files.write_npz(tmp_path / "acts.npz", arrays, compressed))
    assert dump.layout.stream == "layer_{i}" and dump.layout.axes == "BTd"
    _check_stream(dump, x)


def test_npz_windows_read_in_order_open_each_member_once(tmp_path, monkeypatch):
    """A compressed member is decompressed once for windows read in order (a reopen per
    window decompresses its start again: quadratic); any order still reads the right rows."""
    from engine.dumps.formats import numpy_file
    from engine.dumps.sources import resolve_files

    x = files.stream(layers=2, batch=1, tokens=40, d=8)[:, 0]  # [2, 40, 8]
    path = files.write_npz(tmp_path / "w.npz", {"h0": x[0].numpy(), "h1": x[1].numpy()}, True)
    opened = []
    real_open = numpy_file.zipfile.ZipFile.open
    monkeypatch.setattr(
        numpy_file.zipfile.ZipFile,
        "open",
        lambda archive, name, *a, **k: opened.append(name) or real_open(archive, name, *a, **k),
    )
    dump = open_dump(path)
    (file,) = resolve_files(path)
    reader = numpy_file.NpzReader(file)
    entries = {e.key: e for slot in dump.layout.layers for e in (p.entry for p in slot.pieces)}
    opened.clear()
    for start in range(0, 40, 7):  # in order, with gaps: one open
        torch.testing.assert_close(
            reader.rows(entries["h0"], start, start + 3), x[0, start : start + 3]
        )
    assert opened == ["h0.npy"]
    torch.testing.assert_close(reader.rows(entries["h0"], 2, 4), x[0, 2:4])  # back: reopens
    torch.testing.assert_close(reader.rows(entries["h1"], 0, 40), x[1])  # another member
    assert opened == ["h0.npy", "h0.npy", "h1.npy"]


@pytest.mark.parametrize("container", [list, tuple])
def test_pt_list_of_layers_like_output_hidden_states(tmp_path, container):
    x = files.stream(dtype=torch.bfloat16)
    dump = open_dump(files.write_pt(tmp_path / "hs.pt", container(x.unbind(0))))
    assert dump.layout.stream == "{i}" and dump.layout.axes == "BTd"
    _check_stream(dump, x)


def test_pth_single_tensor_of_three_axes_is_read_as_layers(tmp_path):
    x = files.stream()[:, 0]  # [L, T, d]
    dump = open_dump(files.write_pt(tmp_path / "acts.pth", x))
    assert (dump.layout.axes, dump.layout.axes_reason) == ("LTd", "stack_assumed")
    _check_stream(dump, x)


def test_three_axes_override_to_batch(tmp_path):
    x = files.stream()[2]  # [B, T, d] of one layer
    path = files.write_pt(tmp_path / "acts.pt", x)
    dump = open_dump(path, DumpSpec(axes="BTd"))
    assert (dump.layout.axes, dump.layout.axes_reason, dump.layout.batch) == ("BTd", "override", 2)
    _check_stream(dump, x[None])


def test_two_axes_is_one_layer_of_one_sequence(tmp_path):
    x = files.stream()[1, 0]  # [T, d]
    dump = open_dump(files.write_npy(tmp_path / "one.npy", x.numpy()))
    assert dump.layout.axes == "Td" and len(dump.layout.layers) == 1
    _check_stream(dump, x[None])


def test_pt_nested_dict_names_join_with_dots(tmp_path):
    x = files.stream()
    obj = {"hidden_states": list(x.unbind(0)), "prompt": "hello", "ids": torch.arange(7)}
    dump = open_dump(files.write_pt(tmp_path / "run.pt", obj))
    assert dump.layout.stream == "hidden_states.{i}"
    assert ("prompt", "not_a_tensor", "str") in dump.layout.skipped
    assert ("ids", "dtype", "int64") in dump.layout.skipped
    assert dump.layout.skipped[0].english() == "not a tensor (str)"
    _check_stream(dump, x)


def test_directory_of_per_layer_files_orders_by_number(tmp_path):
    x = files.stream()
    for i in [3, 0, 4, 1, 2]:  # written out of order; layer_10 would sort before layer_2
        files.write_npy(tmp_path / f"layer_{i}.npy", x[i].numpy())
    dump = open_dump(tmp_path)
    assert [slot.label for slot in dump.layout.layers] == [f"layer_{i}" for i in range(5)]
    _check_stream(dump, x)


def test_layer_order_file_keeps_stored_order(tmp_path):
    x = files.stream()
    order = [2, 0, 1, 4, 3]
    tensors = {f"hidden_states.{i}": x[i] for i in order}
    path = files.write_pt(tmp_path / "hs.pt", tensors)
    dump = open_dump(path, DumpSpec(layer_order="file"))
    assert [slot.label for slot in dump.layout.layers] == [f"hidden_states.{i}" for i in order]
    _check_stream(dump, x[order])


def test_shards_with_the_same_names_join_their_batches(tmp_path):
    x = files.stream(batch=3)
    files.write_safetensors(tmp_path / "part-0.safetensors", files.hf_names(x[:, :2]))
    files.write_safetensors(tmp_path / "part-1.safetensors", files.hf_names(x[:, 2:]))
    dump = open_dump(tmp_path)
    assert dump.layout.batch == 3 and len(dump.files) == 2
    _check_stream(dump, x)


def test_glob_of_stacked_shards(tmp_path):
    x = files.stream(batch=4)
    for part in range(2):
        files.write_npy(tmp_path / f"acts_shard_{part}.npy", x[:, 2 * part : 2 * part + 2].numpy())
    dump = open_dump(str(tmp_path / "acts_shard_*.npy"))
    assert dump.layout.axes == "LBTd" and dump.layout.batch == 4
    _check_stream(dump, x)


@pytest.mark.parametrize(
    "suffix, write",
    [
        (".safetensors", lambda p, x: files.write_safetensors(p, {"hidden_states": x})),
        (".npy", lambda p, x: files.write_npy(p, x.numpy())),
        (".npz", lambda p, x: files.write_npz(p, {"h": x.numpy()}, compressed=True)),
        (".pt", lambda p, x: files.write_pt(p, list(x.unbind(0)))),
    ],
)
def test_upload_bytes_read_like_the_file(tmp_path, suffix, write):
    x = files.stream()
    path = write(tmp_path / f"dump{suffix}", x)
    dump = open_dump(Upload(name=f"dump{suffix}", data=path.read_bytes()))
    assert dump.files[0].data is not None
    _check_stream(dump, x)


def test_metadata_of_safetensors_is_kept(tmp_path):
    x = files.stream()
    path = files.write_safetensors(
        tmp_path / "d.safetensors", {"hidden_states": x}, metadata={"model": "tiny", "dtype": "f32"}
    )
    assert open_dump(path).metadata == {"model": "tiny", "dtype": "f32"}


def test_shards_in_different_dtypes_reduce_together(tmp_path):
    from engine.dumps.report import report

    x = files.stream(batch=2)
    files.write_safetensors(tmp_path / "part-0.safetensors", files.hf_names(x[:, :1].half()))
    files.write_safetensors(tmp_path / "part-1.safetensors", files.hf_names(x[:, 1:]))
    rep = report(tmp_path)
    assert {m.grid for m in rep.stats.magnitudes} == {"bfloat16"}  # one grid for a mixed stream
    want = x.clone()
    want[:, :1] = want[:, :1].half().float()
    np.testing.assert_allclose(rep.residual.rms, want.pow(2).mean(-1).sqrt().numpy(), rtol=1e-5)
