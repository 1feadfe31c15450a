"""The Activation dumps page through AppTest, on files it must not trust: bad files refused
with the engine's message naming the file (a pickle's payload never runs), names with markup
shown as text on the page and in every chart, an upload kept to its own session, a session's
few last uploads kept and the bytes let go once the session ends.  Uploads go in through
``upload`` (tests/app/conftest.py)."""

from __future__ import annotations

import io
import json
import pickle

import numpy as np
import pytest
import torch

from tests.app.dump_uploads import (
    npz_bytes,
    open_dumps_page,
    page_text,
    safetensors_bytes,
    subheaders,
)
from tests.dumps import dump_files as files


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
    data = safetensors_bytes({"hidden_states.0": files.stream()[0]})
    return data[: len(data) * 2 // 3]


BAD_FILES = [
    ("evil.pt", "payload", "the file would run code when loaded (it calls exec)"),
    ("cut.safetensors", _truncated(), "claims 896 bytes of data but the file holds 568"),
    ("acts.txt", b"1 2 3", "is not a dump format"),
    ("empty.safetensors", safetensors_bytes({}), "holds no arrays"),
    (
        "mixed.safetensors",
        safetensors_bytes(
            {"hidden_states.0": torch.zeros(4, 8), "hidden_states.1": torch.zeros(5, 8)}
        ),
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
    open_dumps_page(app)
    assert len(app.error) == 1, [e.value for e in app.error]
    error = app.error[0].value
    assert message in error and f"`{name}" in error  # the file's name, shown literally
    assert subheaders(app) == ["What was read"]  # no diagnostics of a file that was refused
    assert not marker.exists()  # the pickle's payload never ran
    assert "weights_only=False" not in error and "\x1b" not in error  # no unsafe advice


def test_a_file_name_with_markup_is_shown_literally(app, upload):
    upload("[click](evil.example) **bold**.txt", b"x")  # a browser sends a base name
    open_dumps_page(app)
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
    upload("marked.safetensors", safetensors_bytes({f"{markup}.{i}": x[i] for i in range(5)}))
    app.query_params["du_channel_layer"] = "2"
    open_dumps_page(app)
    charts = []
    for section in ("stream", "massive", "centering", "channels", "norms"):  # every section's
        app.segmented_control(key="du_section").set_value(section).run()
        charts += [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]
    texts = [text for chart in charts for text in _strings(chart)]
    assert len(charts) >= 8 and not any("<b>" in t or "<a " in t for t in texts)
    escaped = "&lt;b&gt;bold&lt;/b&gt;&lt;a href"
    assert any(t.startswith("Layer 2 (" + escaped) for t in texts)  # the channel detail's title
    assert any(t.startswith(escaped) for t in texts)  # the heatmap's hover names


def test_an_upload_stays_in_its_own_session(app, upload, browser_session, calls):
    reads = calls("ui.requests.dumps.report")
    data = safetensors_bytes(files.hf_names(files.stream()))
    upload("hidden.safetensors", data, "mine")
    open_dumps_page(app)
    assert "What was read" in subheaders(app) and len(reads) == 1
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
    open_dumps_page(other)
    assert subheaders(other) == [] and "hidden.safetensors" not in page_text(other)
    upload("hidden.safetensors", data, "mine")  # even the same file under the same id ...
    other.run()
    assert len(reads) == 2  # ... is read again: the first session's results are its own


def test_a_session_keeps_only_its_last_few_uploads(app, upload, calls):
    reads = calls("ui.requests.dumps.report")
    data = safetensors_bytes(files.hf_names(files.stream()))
    open_dumps_page(app)
    for index in range(6):
        upload(f"dump{index}.safetensors", data, f"upload-{index}")
        app.run()
    assert len(reads) == 6
    app.run()
    assert len(reads) == 6  # the last upload's results are kept ...
    upload("dump0.safetensors", data, "upload-0")
    app.run()
    assert len(reads) == 7  # ... the first one's are gone: its bytes are not held for ever


def test_a_dump_of_integers_only_is_refused_naming_the_dtype(app, upload):
    upload("ids.npz", npz_bytes({f"h.{i}": np.arange(40).reshape(5, 8) for i in range(4)}))
    open_dumps_page(app)
    assert "none of its 4 entries can be read as a stream" in app.error[0].value
    assert "`h.0`: dtype `int64`" in app.error[0].value  # the file's words literal


def test_why_an_entry_was_skipped_is_said_in_chinese_on_a_chinese_page(app, upload):
    upload("ids.npz", npz_bytes({f"h.{i}": np.arange(40).reshape(5, 8) for i in range(4)}))
    app.session_state["language"] = "zh"  # as the sidebar's language choice sets it
    open_dumps_page(app)
    message = app.error[0].value
    assert "`h.0`：数据类型 `int64`；`h.1`" in message and "dtype `int64`" not in message


def test_nothing_keeps_the_uploaded_bytes_once_the_session_is_gone(upload):
    import gc
    import sys

    from streamlit.runtime.caching import clear_session_resource_cache
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    data = safetensors_bytes(files.module_names(files.stream()))
    alone = sys.getrefcount(data)
    upload("hooks.safetensors", data)
    session = AppTest.from_file(APP, default_timeout=60)
    session.query_params["lang"] = "en"
    session.run()
    open_dumps_page(session)
    assert "Downloads" in subheaders(session) and sys.getrefcount(data) > alone
    upload(None)  # the file is removed from the uploader ...
    del session  # ... and the browser session ends: Streamlit drops its caches
    clear_session_resource_cache("test session id")  # (AppTest's one session id)
    gc.collect()
    assert sys.getrefcount(data) == alone  # no cache or download writer holds it
