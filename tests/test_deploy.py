"""The class topology's two descriptions agree: ``compose.yaml`` runs HAProxy with the
``deploy/haproxy.cfg`` that ``scripts/serve_class.py`` (and the class test) use, and sets the
variables that file reads; HAProxy, started with that file, tells the app the browser's
address, and the app reads HAProxy's, not one the browser forged."""

from __future__ import annotations

import http.server
import re
import socket
import subprocess
import threading
import time
import types
import urllib.request
from pathlib import PurePosixPath

import pytest
import yaml
from streamlit.runtime.context import StreamlitHeaders

import ui.classroom
from scripts.serve_class import CONFIG, ROOT, haproxy_binary

COMPOSE = ROOT / "compose.yaml"
FORGED = "6.6.6.6"


def _balancer() -> dict:
    return yaml.safe_load(COMPOSE.read_text())["services"]["balancer"]


def test_compose_mounts_the_config_the_class_script_uses():
    mounts = [v.split(":")[0] for v in _balancer()["volumes"]]
    assert [(ROOT / m).resolve() for m in mounts] == [CONFIG.resolve()]


def test_compose_sets_the_address_and_one_slot_per_app_service():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    apps = sorted(name for name in services if name.startswith("app"))
    environment = _balancer()["environment"]
    read = set(re.findall(r"NORMSCOPE_[A-Z0-9_]+", CONFIG.read_text()))
    assert set(environment) <= read
    assert environment["NORMSCOPE_BIND"].endswith(":8501")
    for index, app in enumerate(apps, start=1):
        assert environment[f"NORMSCOPE_APP{index}"] == f"{app}:8501"


def test_the_app_containers_share_one_class_database_and_one_model_cache():
    """Each container with a folder of its own would keep its own classes: a learner sent
    to the other container would be told that the class does not exist."""
    compose = yaml.safe_load(COMPOSE.read_text())
    apps = [service for name, service in compose["services"].items() if name.startswith("app")]
    shared = set()
    for app in apps:
        volume_at = {target: volume for volume, target in (v.split(":") for v in app["volumes"])}
        environment = app["environment"]
        assert "NORMSCOPE_DATABASE_URL" not in environment  # SQLite in the shared volume
        cache = str(PurePosixPath(environment["NORMSCOPE_MODEL_CACHE"]).parent)
        shared.add((volume_at[environment["NORMSCOPE_DATA_DIR"]], volume_at[cache]))
    assert len(apps) == 2 and len(shared) == 1
    assert set(shared.pop()) <= set(compose["volumes"])


def test_haproxy_accepts_the_config_with_composes_addresses(tmp_path):
    binary = haproxy_binary()
    if binary is None:
        pytest.skip("Debian's haproxy is not installed (scripts/test.sh installs it as root)")
    environment = {k: str(v) for k, v in _balancer()["environment"].items()}
    checked = subprocess.run(
        [binary, "-c", "-f", str(CONFIG)], env=environment, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_apps_believe_the_balancers_forwarded_address_and_only_its():
    compose = yaml.safe_load(COMPOSE.read_text())
    balancer = compose["services"]["balancer"]["networks"]["class"]["ipv4_address"]
    for name, service in compose["services"].items():
        if name.startswith("app"):
            assert service["environment"]["NORMSCOPE_TRUSTED_PROXIES"] == balancer


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


def test_the_balancer_tells_the_app_the_browsers_address():
    """A request through HAProxy with the class config reaches the process with the client's
    address in X-Forwarded-For (what NORMSCOPE_TRUSTED_PROXIES lets the app believe)."""
    lines = _through_haproxy({})
    assert [v for k, v in lines if k.lower() == "x-forwarded-for"] == ["127.0.0.1"]


def test_a_forged_forwarded_for_line_is_not_the_client_the_class_counts(monkeypatch):
    """HAProxy adds its own X-Forwarded-For line after any the browser sent (it does not
    append to the browser's line), and ``st.context.headers.get`` gives the first line: read
    that way, every browser would name its own address, and the class's per-address limits
    (wrong codes, new classes) would be one forged header away: anyone could spend a venue's
    allowance of wrong codes, locking out every learner there who has not joined yet."""
    lines = _through_haproxy({"X-Forwarded-For": FORGED})
    forwarded = [v for k, v in lines if k.lower() == "x-forwarded-for"]
    assert forwarded == [FORGED, "127.0.0.1"]  # two lines: the browser's, then HAProxy's
    # what the app's page reads (HAProxy on this machine: the peer is the loopback, None)
    context = types.SimpleNamespace(headers=StreamlitHeaders(lines), ip_address=None)
    monkeypatch.setattr(ui.classroom, "st", types.SimpleNamespace(context=context))
    monkeypatch.delenv(ui.classroom.PROXIES_VARIABLE, raising=False)
    assert ui.classroom.client() == "127.0.0.1"


def test_the_balancer_and_each_process_take_a_request_head_of_the_same_size():
    """A link the app accepts passes both (HAProxy's buffer less its 1 KiB of rewrite room),
    and a longer one reaches the page, which refuses it in words; the requests themselves:
    tests/e2e/test_links_browser.py and test_class_browser.py."""
    from scripts.serve import REQUEST_HEAD_BYTES
    from ui.url.codec import MAX_URL_CHARS

    (bufsize,) = re.findall(r"^\s*tune\.bufsize (\d+)$", CONFIG.read_text(), re.MULTILINE)
    assert int(bufsize) == REQUEST_HEAD_BYTES
    assert REQUEST_HEAD_BYTES - 1024 > 2 * MAX_URL_CHARS  # a link past the limit, and headers


def test_the_server_parses_http_with_h11_whose_limit_serve_py_raises():
    """uvicorn prefers httptools where it is installed (its "auto"), and scripts/serve.py
    raises h11's limit on a request's head only: with httptools the 256 KiB would not hold."""
    import importlib.util

    assert importlib.util.find_spec("httptools") is None
