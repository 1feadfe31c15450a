"""Behind the class's HAProxy (deploy/haproxy.cfg), the address the class's limits count is
the one HAProxy saw, not one the browser wrote itself.

HAProxy's ``option forwardfor`` adds its own ``X-Forwarded-For`` header line after any the
client sent; it does not append to the client's line.  Streamlit's ``st.context.headers``
keeps both lines and ``.get`` returns the first: the client's.  Read that way, every client
would name its own address, and the per-address limits (wrong codes, new classes) would be
one forged header away: anyone could spend a venue's allowance of wrong codes by writing the
venue's address, locking out every learner there who has not joined yet.
"""

from __future__ import annotations

import http.server
import socket
import subprocess
import threading
import time
import types
import urllib.request

import pytest
from streamlit.runtime.context import StreamlitHeaders

import ui.classroom
from scripts.serve_class import CONFIG, haproxy_binary

FORGED = "6.6.6.6"


def _through_haproxy(headers: dict) -> list[tuple[str, str]]:
    """The header lines a request with ``headers`` reaches the app with, through HAProxy."""
    binary = haproxy_binary()
    if binary is None:
        pytest.skip("Debian's haproxy is not installed (scripts/test.sh installs it as root)")
    seen: list = []

    class App(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/page":
                seen.append(list(self.headers.items()))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    app = http.server.ThreadingHTTPServer(("127.0.0.1", 0), App)
    threading.Thread(target=app.serve_forever, daemon=True).start()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        bind = probe.getsockname()[1]
    environment = {
        "NORMSCOPE_BIND": f"127.0.0.1:{bind}",
        "NORMSCOPE_APP1": f"127.0.0.1:{app.server_address[1]}",
    }
    balancer = subprocess.Popen(
        [binary, "-db", "-f", str(CONFIG)],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not seen:
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{bind}/page", headers=headers)
                with urllib.request.urlopen(request, timeout=2) as answer:
                    answer.read()
            except OSError:
                assert time.monotonic() < deadline and balancer.poll() is None
                time.sleep(0.1)
    finally:
        balancer.terminate()
        balancer.wait(10)
        app.shutdown()
    return seen[0]


def test_a_forged_forwarded_for_header_is_not_the_client_the_class_counts(monkeypatch):
    lines = _through_haproxy({"X-Forwarded-For": FORGED})
    forwarded = [v for k, v in lines if k.lower() == "x-forwarded-for"]
    assert forwarded == [FORGED, "127.0.0.1"]  # two lines: the client's, then HAProxy's
    # what the app's page reads (HAProxy on this machine: the peer is the loopback, None)
    context = types.SimpleNamespace(headers=StreamlitHeaders(lines), ip_address=None)
    monkeypatch.setattr(ui.classroom, "st", types.SimpleNamespace(context=context))
    monkeypatch.delenv(ui.classroom.PROXIES_VARIABLE, raising=False)
    assert ui.classroom.client() == "127.0.0.1"
