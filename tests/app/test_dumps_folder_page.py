"""The Activation dumps page on the server's own dump folders (``NORMSCOPE_DUMP_DIRS``):
offered only where the setting lists a file, read with the numbers torch gives, named in the
link by its listing id (a linked path is refused by name), a large file read on a click, and
a file rewritten since read again."""

from __future__ import annotations

import base64
import json
import os
import shutil
from urllib.parse import parse_qs

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

import ui.compute
from engine.dumps.example import EXAMPLE_DUMP
from engine.errors import EngineError
from tests.app.conftest import APP
from tests.dumps import dump_files as files
from ui.formatting import bytes_text

PAGE = "app_pages/dumps.py"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A dump folder: the example under a new name, and a small HF-named dump in a subfolder."""
    dumps = tmp_path / "dumps"
    (dumps / "runs").mkdir(parents=True)
    shutil.copy(EXAMPLE_DUMP, dumps / "example_copy.safetensors")
    x = files.stream(layers=5, batch=2, tokens=7, d=16)  # [L, B, T, d]
    files.write_safetensors(dumps / "runs" / "small.safetensors", files.hf_names(x))
    monkeypatch.setenv("NORMSCOPE_DUMP_DIRS", str(dumps))
    return dumps, x


def _open(query: dict, lang: str = "en") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"lang": lang, **query})
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def _warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


def _heatmap_rms(at) -> np.ndarray:
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        if spec["layout"].get("title", {}).get("text") == "RMS of each token at each layer":
            z = spec["data"][0]["z"]
            if isinstance(z, dict):
                data = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"])
                z = data.reshape([int(n) for n in str(z["shape"]).split(",")])
            return 10 ** np.asarray(z, dtype=float)
    raise AssertionError("no RMS heatmap")


def test_without_the_setting_no_folder_is_offered_and_a_folder_link_opens_the_example(
    monkeypatch,
):
    monkeypatch.delenv("NORMSCOPE_DUMP_DIRS", raising=False)
    at = _open({})
    assert "folder" not in at.segmented_control(key="du_source").options
    at = _open({"du_source": "folder", "du_file": "0/x.safetensors"}, "zh")
    assert at.segmented_control(key="du_source").value == "example"
    assert "本服务器没有列出任何文件夹" in _warnings(at)
    assert "读到了什么" in [s.value for s in at.subheader]
    assert "du_file" not in at.query_params and "du_source" not in at.query_params


def test_a_folder_file_is_read_with_the_numbers_torch_gives_and_named_in_the_link(folder):
    dumps, x = folder
    at = _open({"du_source": "folder"})
    assert at.selectbox(key="du_file").value == "0/example_copy.safetensors"  # the first
    small = bytes_text((dumps / "runs" / "small.safetensors").stat().st_size)
    assert at.selectbox(key="du_file").options == [
        "example_copy.safetensors · 4.55\u00a0MB",  # a no-break space: one line
        f"runs/small.safetensors · {small}",
    ]  # one folder: its number is not shown
    at.selectbox(key="du_file").set_value("0/runs/small.safetensors").run()
    expected = x[:, 0].double().pow(2).mean(-1).sqrt().numpy()  # [L, T]
    np.testing.assert_allclose(_heatmap_rms(at), expected, rtol=1e-6)
    assert at.query_params["du_file"] == "0/runs/small.safetensors"  # a link reopens it
    assert not at.error


@pytest.mark.parametrize(
    "linked", ["0/../dumps/runs/small.safetensors", "/etc/passwd", "1/x.npy", "0/" + "x" * 290]
)
def test_a_linked_file_the_server_does_not_list_is_refused_by_name(folder, linked):
    at = _open({"du_source": "folder", "du_file": linked})
    warning = _warnings(at)
    assert "`du_file`" in warning and "is not one of the dump files this server lists" in warning
    assert "0/runs/small.safetensors" in warning  # what is accepted
    assert at.selectbox(key="du_file").value == "0/example_copy.safetensors"  # the first
    assert at.query_params["du_file"] == "0/example_copy.safetensors"  # the refused id is gone
    assert "What this stream shows" in [s.value for s in at.subheader]


def test_a_large_file_waits_for_a_click_then_every_session_sees_it(folder, monkeypatch):
    # the example's values times AUTO_START_FACTOR start on their own; the small dump is
    # 1/2,200 of the example, so a factor of 1/10,000 makes it "large" without a large file
    monkeypatch.setattr(ui.compute, "AUTO_START_FACTOR", 1e-4)
    query = {"du_source": "folder", "du_file": "0/runs/small.safetensors"}
    at = _open(query)
    button = at.button(key="dumps_read")
    assert button.label.startswith("Read the whole file (")
    assert "Residual stream: RMS per layer and token" not in [s.value for s in at.subheader]
    button.click().run()
    assert "Residual stream: RMS per layer and token" in [s.value for s in at.subheader]
    again = _open(query)  # another visitor: read already, no click
    assert "Residual stream: RMS per layer and token" in [s.value for s in again.subheader]


def test_a_file_rewritten_since_is_read_again(folder):
    dumps, x = folder
    query = {"du_source": "folder", "du_file": "0/runs/small.safetensors"}
    before = _heatmap_rms(_open(query))
    path = dumps / "runs" / "small.safetensors"
    files.write_safetensors(path, files.hf_names(2 * x))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    ui.compute._recent.clear()  # as RECENT_S seconds later: the folder listed again
    np.testing.assert_allclose(_heatmap_rms(_open(query)), 2 * before, rtol=1e-6)


def test_a_dump_of_nothing_but_nan_says_so_and_draws_no_empty_chart(tmp_path, monkeypatch):
    """Every value NaN: the counts were said, then every section drew empty charts (a token
    axis from −1 to 1 for three tokens)."""
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    x = torch.full((4, 1, 3, 8), float("nan"))  # [L, B, T, d]
    files.write_safetensors(dumps / "nan.safetensors", files.hf_names(x))
    monkeypatch.setenv("NORMSCOPE_DUMP_DIRS", str(dumps))
    for lang, said in (
        ("en", "is NaN or ±inf, so there is nothing to chart"),
        ("zh", "没有可画的东西"),
    ):
        at = _open({"du_source": "folder", "du_file": "0/nan.safetensors"}, lang)
        assert "96" in _warnings(at)  # the non-finite count: 4 · 1 · 3 · 8 NaN
        assert any(said in i.value for i in at.info)
        assert not at.get("plotly_chart")
        assert at.get("download_button")  # the counts can still be downloaded


def test_a_story_token_past_float16_opens_the_vector_lab_stored_in_float32(folder):
    """The largest entry does not fit float16: the story's link stores the token in float32
    (in float16 the Vector Lab refuses it) and computes in float16, where it overflows."""
    dumps, x = folder
    huge = x.clone()
    huge[3, 1, 0, 3] = 3e5  # the massive channel, past float16's 65,504
    files.write_safetensors(dumps / "runs" / "huge.safetensors", files.hf_names(huge))
    at = _open({"du_source": "folder", "du_file": "0/runs/huge.safetensors"})
    assert "does not even fit float16" in " ".join(m.value for m in at.markdown)
    links = {link.proto.label: link.proto.query_string for link in at.get("page_link")}
    label = next(name for name in links if name.startswith("Open this token in the Vector Lab"))
    assert label.endswith("stored in float32 and computed in float16")
    query = {key: values[-1] for key, values in parse_qs(links[label]).items()}
    assert (query.get("vl_dtype", "float32"), query["vl_compute"]) == ("float32", "float16")
    lab = AppTest.from_file(APP, default_timeout=120)
    lab.query_params.update(query)
    lab.switch_page("app_pages/vector_lab.py").run()
    assert not lab.exception
    assert "cannot be stored" not in " ".join(e.value for e in lab.error)
    assert "d = 16" in " ".join(m.value for m in [*lab.markdown, *lab.caption])


def test_a_listed_file_swapped_for_a_link_leading_out_is_not_read(folder, tmp_path):
    """The listing is kept for seconds: a listed file replaced in that time by a link to a
    file outside the folder was followed (its numbers shown); it is refused as changed."""
    dumps, x = folder
    outside = tmp_path / "outside"
    outside.mkdir()
    files.write_safetensors(outside / "secret.safetensors", files.hf_names(x * 1000))
    from engine.dumps.local_files import list_dumps, named_folders, unchanged_path

    (listed,) = [d for d in list_dumps(named_folders("NORMSCOPE_DUMP_DIRS")) if "small" in d.id]
    assert unchanged_path(listed) == listed.path  # as listed: read
    small = dumps / "runs" / "small.safetensors"
    small.unlink()
    small.symlink_to(outside / "secret.safetensors")
    with pytest.raises(EngineError) as refused:
        unchanged_path(listed)
    assert refused.value.key == "dumps.dump_changed"
    at = _open({"du_source": "folder", "du_file": listed.id})  # within the listing's seconds
    said = " ".join(e.value for e in at.error) + _warnings(at)
    assert "has changed since this server listed it" in said or "is not one of" in said
    assert not any("2.5×10⁶" in m.value for m in at.markdown)


def test_a_listing_cut_at_its_cap_says_it_lists_the_first_ones(tmp_path, monkeypatch):
    """250 files: the label said "200 in this server's folders" of a listing cut at 200."""
    from engine.dumps.local_files import MAX_LISTED

    many = tmp_path / "many"
    many.mkdir()
    for i in range(MAX_LISTED + 50):
        (many / f"f{i:03d}.npy").write_bytes(b"")
    monkeypatch.setenv("NORMSCOPE_DUMP_DIRS", str(many))
    at = _open({"du_source": "folder"})
    (box,) = [s for s in at.selectbox if s.key == "du_file"]
    assert (
        box.label
        == f"Dump file (the first {MAX_LISTED} in this server's folders: it lists at most {MAX_LISTED})"
    )


def test_a_file_deep_in_the_folder_is_named_in_the_link_and_opened_from_it(folder):
    """An id of 405 characters (three folders of 100 characters, a file of 100): a link made for it
    was refused as too long (300), and the page opened the first file instead."""
    dumps, x = folder
    deep = dumps.joinpath(*("d" * 100 for _ in range(3)))
    deep.mkdir(parents=True)
    files.write_safetensors(deep / ("f" * 88 + ".safetensors"), files.hf_names(x))
    wanted = "0/" + "/".join(["d" * 100] * 3) + "/" + "f" * 88 + ".safetensors"
    assert len(wanted) == 405
    at = _open({"du_source": "folder", "du_file": wanted})
    assert at.selectbox(key="du_file").value == wanted and not _warnings(at)
    assert at.query_params["du_file"] == wanted  # the share link carries it
    expected = x[:, 0].double().pow(2).mean(-1).sqrt().numpy()  # [L, T]
    np.testing.assert_allclose(_heatmap_rms(at), expected, rtol=1e-6)
