"""The Activation dumps page through AppTest: an uploaded dump's diagnostics checked against
numbers computed here with torch in float64, bad files refused with the engine's message
naming the file, overrides and link settings applied, and an upload kept to its session.

AppTest cannot drive ``st.file_uploader``; the page takes an upload's bytes through
``ui.widgets.dumps.uploaded_dump`` alone, and these tests feed that function.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import re

import numpy as np
import pytest
import torch
from safetensors.torch import save

import ui.widgets.dumps as dump_widgets
from engine.dumps.limits import UPLOAD_LIMIT_MB
from engine.dumps.sources import Upload
from tests.dumps import dump_files as files
from ui.widgets.dumps import UploadedDump

PAGE = "app_pages/dumps.py"


@pytest.fixture
def upload(monkeypatch):
    """``upload(name, data, file_id)`` puts a file in the page's uploader (None: empty)."""
    current: dict = {"file": None}
    monkeypatch.setattr(dump_widgets, "uploaded_dump", lambda: current["file"])

    def put(name: str | None, data: bytes = b"", file_id: str = "f1") -> None:
        current["file"] = None if name is None else UploadedDump(file_id, Upload(name, data))

    return put


def _open(app, source: str = "upload"):
    """Open the page on ``source`` (these tests read uploads; the page opens on the example)."""
    if source != "example":
        app.query_params.setdefault("du_source", source)
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def _safetensors(tensors: dict[str, torch.Tensor]) -> bytes:
    return save({name: value.clone().contiguous() for name, value in tensors.items()})


def _text(app) -> str:
    parts = [m.value for m in app.markdown] + [c.value for c in app.caption]
    return "\n".join(parts)


def _subheaders(app) -> list[str]:
    return [s.value for s in app.subheader]


def _chart(app, title: str) -> dict:
    for chart in app.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        if spec["layout"].get("title", {}).get("text") == title:
            return spec
    raise AssertionError(f"no chart titled {title!r}")


def _array(value) -> np.ndarray:
    """A plotly array as AppTest gives it: a list, or base64 {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict):
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return data.reshape([int(n) for n in str(shape).split(",")]) if shape else data
    return np.asarray(value, dtype=float)


def _number_after(label: str, text: str) -> float:
    match = re.search(re.escape(label) + r"\s*(−?-?[\d.,]+(?:e[+-]?\d+)?)", text)
    assert match, (label, text)
    return float(match.group(1).replace("−", "-").replace(",", ""))


def test_without_a_file_the_page_states_the_limit_and_that_the_file_stays_private(app, upload):
    upload(None)
    _open(app)
    assert app.title[0].value == "Activation dumps"
    privacy = " ".join(c.value for c in app.caption)
    assert f"Up to {UPLOAD_LIMIT_MB} MB per file" in privacy
    assert "shown to no other visitor" in privacy and "never put in the share link" in privacy
    assert _subheaders(app) == [] and not app.error


def test_an_uploaded_dump_shows_every_section_with_numbers_torch_agrees_with(app, upload):
    x = files.stream(layers=5, batch=2, tokens=7, d=16)  # [L, B, T, d], 2500 at token 0, ch 3
    upload("hidden.safetensors", _safetensors(files.hf_names(x)))
    _open(app)
    assert _subheaders(app) == [
        "What was read",
        "Residual stream: RMS per layer and token",
        "What this stream shows",
        "Massive activations",
        "LayerNorm vs RMSNorm on this model",
        "Channels: what BatchNorm would pool",
        "A norm's input against its output: one token, then the DyT curve",
        "Downloads",
    ]
    text = _text(app)
    assert "`hidden_states.{i}`" in text and "L = 5 points of the stream, B = 2, T = 7" in text
    assert "All 1,120 values are finite" in text
    # every token's RMS, drawn on a log scale: sqrt(mean x^2) in float64 by hand
    heatmap = _chart(app, "RMS of each token at each layer")
    expected = x[:, 0].double().pow(2).mean(-1).sqrt().numpy()  # [L, T]
    np.testing.assert_allclose(10 ** _array(heatmap["data"][0]["z"]), expected, rtol=1e-6)
    # massive activations: |a| > 100 and > 1000x the layer's median |a| (Sun et al. 2024)
    values = x.double().numpy()
    threshold = np.maximum(100.0, 1000.0 * np.median(np.abs(values.reshape(5, -1)), axis=1))
    layer, batch, token, channel = np.nonzero(np.abs(values) > threshold[:, None, None, None])
    table = next(d.value for d in app.dataframe if "|a| / median" in d.value.columns)
    assert sorted(zip(table["layer"], table["sequence"], table["token"], table["channel"])) == (
        sorted(zip(layer, batch, token, channel))
    )
    assert len(table) == 6 and set(table["value"]) == {2500.0}
    # one token's LayerNorm vs RMSNorm: the middle layer (2), sequence 0, token 0
    token = x[2, 0, 0].double()
    ln = torch.nn.functional.layer_norm(token, (16,), eps=1e-5)
    rms = token / token.pow(2).mean().add(1e-5).sqrt()
    detail = next(m.value for m in app.markdown if m.value.startswith("**Layer 2, sequence 0"))
    assert _number_after("μ =", detail) == pytest.approx(token.mean().item(), abs=1e-4)
    assert _number_after("RMS =", detail) == pytest.approx(token.pow(2).mean().sqrt().item(), 1e-4)
    difference = (ln - rms).pow(2).mean().sqrt().item()
    assert _number_after("RMSNorm(x) is", detail) == pytest.approx(difference, rel=1e-3)
    tables = [b for b in app.get("download_button") if "dumps_download_" in b.proto.id]
    assert len(tables) == 11  # ten tables as CSV and the JSON summary (besides each chart's)


def test_norm_pairs_get_a_dyt_fit_and_a_dump_without_them_says_so(app, upload):
    x = files.stream(layers=4, batch=1, tokens=9, d=16)
    upload("hooks.safetensors", _safetensors(files.module_names(x)), "hooks")
    _open(app)
    assert "This dump holds the input and the output of 4 norms" in _text(app)
    fits = next(d.value for d in app.dataframe if "α" in d.value.columns)
    assert list(fits["norm"]) == [f"model.layers.{i}.input_layernorm" for i in range(4)]
    upload("hidden.safetensors", _safetensors(files.hf_names(x)), "plain")
    app.run()
    assert "holds no norm's input and output together" in app.info[0].value


class _Payload:
    """Unpickling this writes ``marker``: what a malicious checkpoint would do."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


def _pickle_payload(marker) -> bytes:
    buffer = io.BytesIO()
    torch.save({"h": torch.zeros(3, 4), "x": _Payload(marker)}, buffer)
    return buffer.getvalue()


def _truncated() -> bytes:
    data = _safetensors({"hidden_states.0": files.stream()[0]})
    return data[: len(data) * 2 // 3]


BAD_FILES = [
    ("evil.pt", "payload", "the file would run code when loaded (it calls exec)"),
    ("cut.safetensors", _truncated(), "the file is damaged or not a safetensors file"),
    ("acts.txt", b"1 2 3", "is not a dump format"),
    ("empty.safetensors", _safetensors({}), "holds no arrays"),
    (
        "mixed.safetensors",
        _safetensors({"hidden_states.0": torch.zeros(4, 8), "hidden_states.1": torch.zeros(5, 8)}),
        "the layers of one stream must share T and d",
    ),
    ("not_zip.pt", pickle.dumps([1, 2]), "is not a zip archive"),
]


@pytest.mark.parametrize("name, data, message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_files_get_the_engine_message_naming_the_file(
    app, upload, tmp_path, name, data, message
):
    marker = tmp_path / "ran.txt"
    upload(name, _pickle_payload(marker) if data == "payload" else data)
    _open(app)
    assert len(app.error) == 1, [e.value for e in app.error]
    error = app.error[0].value
    assert message in error and f"`{name}" in error  # the file's name, shown literally
    assert _subheaders(app) == ["What was read"]  # no diagnostics of a file that was refused
    assert not marker.exists()  # the pickle's payload never ran
    assert "weights_only=False" not in error and "\x1b" not in error  # no unsafe advice


def test_a_file_name_with_markup_is_shown_literally(app, upload):
    upload("[click](evil.example) **bold**.txt", b"x")  # a browser sends a base name
    _open(app)
    assert "`[click](evil.example) **bold**.txt`" in app.error[0].value


def _strings(value):
    """Every string in a chart's JSON (titles, labels, hover data, tick texts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_entry_names_with_markup_reach_every_chart_as_text(app, upload):
    markup = '<b>bold</b><a href="https://example.com">L</a>'
    x = files.stream(layers=5, batch=1, tokens=7, d=16)
    upload("marked.safetensors", _safetensors({f"{markup}.{i}": x[i] for i in range(5)}))
    app.query_params["du_channel_layer"] = "2"
    _open(app)
    charts = [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]
    texts = [text for chart in charts for text in _strings(chart)]
    assert len(charts) >= 8 and not any("<b>" in t or "<a " in t for t in texts)
    escaped = "&lt;b&gt;bold&lt;/b&gt;&lt;a href"
    assert any(t.startswith("Layer 2 (" + escaped) for t in texts)  # the channel detail's title
    assert any(t.startswith(escaped) for t in texts)  # the heatmap's hover names


def test_an_upload_stays_in_its_own_session(app, upload, browser_session, calls):
    reads = calls("ui.views.dumps_requests.report")
    data = _safetensors(files.hf_names(files.stream()))
    upload("hidden.safetensors", data, "mine")
    _open(app)
    assert "What was read" in _subheaders(app) and len(reads) == 1
    app.run()
    assert len(reads) == 1  # kept for this session
    assert "mine" not in json.dumps(dict(app.query_params))
    # another browser session opens the page: it sees an empty uploader, not this file
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    browser_session("other")
    upload(None)
    other = AppTest.from_file(APP, default_timeout=60)
    other.query_params["lang"] = "en"
    other.run()
    _open(other)
    assert _subheaders(other) == [] and "hidden.safetensors" not in _text(other)
    upload("hidden.safetensors", data, "mine")  # even the same file under the same id ...
    other.run()
    assert len(reads) == 2  # ... is read again: the first session's results are its own


def test_a_session_keeps_only_its_last_few_uploads(app, upload, calls):
    reads = calls("ui.views.dumps_requests.report")
    data = _safetensors(files.hf_names(files.stream()))
    _open(app)
    for index in range(6):
        upload(f"dump{index}.safetensors", data, f"upload-{index}")
        app.run()
    assert len(reads) == 6
    app.run()
    assert len(reads) == 6  # the last upload's results are kept ...
    upload("dump0.safetensors", data, "upload-0")
    app.run()
    assert len(reads) == 7  # ... the first one's are gone: its bytes are not held for ever


def test_overriding_the_axes_and_the_stream_rereads_the_dump(app, upload):
    x = files.stream(layers=4, batch=1, tokens=6, d=8)[:, 0]  # one [L, T, d] array
    upload("stack.safetensors", _safetensors({"resid_stack": x}))
    _open(app)
    assert "[L, T, d] — assumed" in _text(app) and "L = 4 points of the stream, B = 1" in _text(app)
    app.selectbox(key="du_axes").select("BTd").run()
    text = _text(app)
    assert "[B, T, d] — chosen by you" in text and "L = 1 points of the stream, B = 4" in text
    assert "Too few positive, finite layers" in text  # one layer: no growth to fit
    assert app.query_params["du_axes"] == "BTd"
    upload("hooks.safetensors", _safetensors(files.module_names(files.stream())), "hooks")
    app.selectbox(key="du_axes").select("auto").run()
    stream = "model.layers.{i}.input_layernorm.output"
    app.selectbox(key="dumps_stream_hooks").select(stream).run()
    assert f"`{stream}` — chosen by you" in _text(app)
    assert "dumps_stream" not in json.dumps(dict(app.query_params))  # an entry of the file


def test_link_values_past_the_dump_are_said_and_thresholds_apply(app, upload):
    upload("hidden.safetensors", _safetensors(files.hf_names(files.stream(tokens=7))))
    for key, value in {"du_token": "999", "du_massive_abs": "3000", "du_eps": "0"}.items():
        app.query_params[key] = value
    _open(app)
    warning = " ".join(w.value for w in app.warning)
    assert "`du_token`" in warning and "showing 6" in warning
    assert app.number_input(key="du_token").value == 6
    assert "No activation passes the threshold" in _text(app)  # 2500 < 3000


def test_a_new_threshold_is_applied_without_reading_the_dump_again(app, upload, calls):
    reads = calls("ui.views.dumps_requests.report")
    upload("hidden.safetensors", _safetensors(files.hf_names(files.stream(tokens=7))))
    _open(app)
    assert len(reads) == 1 and "6 massive activations" in _text(app)  # 2500 > 100
    for key, value in (("du_massive_abs", 3000.0), ("du_massive_ratio", 10.0), ("du_outlier", 2.0)):
        app.number_input(key=key).set_value(value).run()
        assert not app.exception
    assert len(reads) == 1 and "No activation passes the threshold" in _text(app)


def _odd_files() -> dict[str, bytes]:
    x = files.stream(layers=4, batch=1, tokens=5, d=8)
    layers = {f"h.{i}": x[i] for i in range(4)}
    extreme = np.full((5, 8), 1.7e308)
    extreme[:, ::2] *= -1
    scalars = {**{k: v[0].numpy() for k, v in layers.items()}, "ln.input": np.float32(1.0)}
    return {
        "grad.pt": _pt({k: v.clone().requires_grad_() for k, v in layers.items()}),
        "param.pt": _pt({k: torch.nn.Parameter(v.clone()) for k, v in layers.items()}),
        "extreme.npz": _npz({f"h.{i}": extreme for i in range(4)}),
        "scalars.npz": _npz({**scalars, "ln.output": np.float32(2.0)}),
    }


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # ±1.7e308: squares past float64
@pytest.mark.parametrize("name", ["grad.pt", "param.pt", "extreme.npz", "scalars.npz"])
def test_odd_tensors_are_read_whole_page_without_an_exception(app, upload, name):
    upload(name, _odd_files()[name])
    _open(app)
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert "Downloads" in _subheaders(app)


def test_a_dump_of_integers_only_is_refused_naming_the_dtype(app, upload):
    upload("ids.npz", _npz({f"h.{i}": np.arange(40).reshape(5, 8) for i in range(4)}))
    _open(app)
    assert "none of its 4 entries is a float array" in app.error[0].value
    assert "not floating-point (int64)" in app.error[0].value


@pytest.mark.parametrize("key", ["du_pair", "du_token_layer", "du_channel_layer"])
def test_a_select_box_holding_the_label_of_a_gone_option_falls_back_not_a_crash(app, upload, key):
    """Streamlit keeps a select box's label when its options change (a new prompt brings a
    new automatic norm); the page read it as a number: TypeError, in every later run."""
    upload("hooks.safetensors", _safetensors(files.module_names(files.stream(tokens=7))))
    app.session_state[key] = "★ model.layers.3.input_layernorm"  # a label, not an index
    _open(app)
    assert app.selectbox(key=key).value == -1 and "Downloads" in _subheaders(app)
    app.run()  # and the run after it
    assert not app.exception and app.selectbox(key=key).value == -1


def test_non_finite_values_are_counted_never_dropped_silently(app, upload):
    x = files.stream(layers=4, batch=1, tokens=5, d=8)
    x[1, 0, 2, 5] = float("nan")
    x[3, 0, 4, 0] = float("inf")
    upload("broken.safetensors", _safetensors(files.hf_names(x)))
    _open(app)
    warning = app.warning[0].value
    assert "1 NaN, 1 +inf and 0 −inf among 160 values, on 2 layers" in warning


def test_the_page_in_chinese(app, upload):
    upload("hidden.safetensors", _safetensors(files.hf_names(files.stream())))
    app.query_params["lang"] = "zh"
    app.session_state["language"] = "zh"
    _open(app)
    assert app.title[0].value == "激活转储"
    assert _subheaders(app)[0] == "读到了什么" and "巨量激活" in _subheaders(app)
    assert "What was read" not in _text(app)


EXTREMES = {  # every value the URL contract accepts at its edge, on a 5-layer, 7-token dump
    "du_token_layer": "1048576",
    "du_channel_layer": "1048576",
    "du_batch": "1048576",
    "du_token": "16777216",
    "du_pair": "1048576",
    "du_massive_abs": "0.001",
    "du_massive_ratio": "1000000000",
    "du_outlier": "1",
    "du_eps": "0",
    "du_log": "false",
    "du_order": "file",
}


def test_a_link_at_every_edge_opens_with_each_clamp_said(app, upload):
    upload("hooks.safetensors", _safetensors(files.module_names(files.stream(tokens=7))))
    for key, value in EXTREMES.items():
        app.query_params[key] = value
    _open(app)
    warning = " ".join(w.value for w in app.warning)
    for key in ("du_token_layer", "du_channel_layer", "du_batch", "du_token", "du_pair"):
        assert f"`{key}`" in warning, key
    assert not app.error and "Downloads" in _subheaders(app)
    assert "by the layer number" not in _text(app) and "as stored in the file" in _text(app)


def test_axes_that_do_not_fit_the_file_are_refused_by_the_engine_not_a_traceback(app, upload):
    upload("hidden.safetensors", _safetensors(files.hf_names(files.stream())))
    app.query_params["du_axes"] = "LBTd"
    _open(app)
    assert "Axes “LBTd” do not fit entry “`hidden_states.0`”" in app.error[0].value
    app.selectbox(key="du_axes").select("auto").run()  # the override stays reachable
    assert not app.error and "Downloads" in _subheaders(app)


def test_nothing_keeps_the_uploaded_bytes_once_the_session_is_gone(upload):
    import gc
    import sys

    from streamlit.runtime.caching import clear_session_resource_cache
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    data = _safetensors(files.module_names(files.stream()))
    alone = sys.getrefcount(data)
    upload("hooks.safetensors", data)
    session = AppTest.from_file(APP, default_timeout=60)
    session.query_params["lang"] = "en"
    session.run()
    _open(session)
    assert "Downloads" in _subheaders(session) and sys.getrefcount(data) > alone
    upload(None)  # the file is removed from the uploader ...
    del session  # ... and the browser session ends: Streamlit drops its caches
    clear_session_resource_cache("test session id")  # (AppTest's one session id)
    gc.collect()
    assert sys.getrefcount(data) == alone  # no cache or download writer holds it


def _pt(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _npz(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "name, make, stream",
    [
        ("hidden.pt", lambda x: _pt(tuple(x[i].clone() for i in range(5))), "{i}"),
        ("acts.npz", lambda x: _npz({f"layer_{i}": x[i].numpy() for i in range(5)}), "layer_{i}"),
        ("stack.npy", lambda x: _npy(x.numpy()), "stack"),  # one [L, B, T, d] array
    ],
)
def test_torch_and_numpy_uploads_are_read_too(app, upload, name, make, stream):
    x = files.stream(layers=5, batch=2, tokens=7, d=16)
    upload(name, make(x))
    _open(app)
    text = _text(app)
    assert f"`{stream}`" in text and "B = 2, T = 7, d = 16" in text and not app.error
