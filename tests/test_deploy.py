"""The class topology's two descriptions agree: ``compose.yaml`` runs HAProxy with the
``deploy/haproxy.cfg`` that ``scripts/serve_class.py`` (and the class test) use, and sets the
variables that file reads; HAProxy, started with that file, tells the app the browser's
address."""

from __future__ import annotations

import http.server
import re
import socket
import subprocess
import threading
import time
import urllib.request

import pytest
import yaml

from scripts.serve_class import CONFIG, ROOT, haproxy_binary

COMPOSE = ROOT / "compose.yaml"


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


def test_the_balancer_tells_the_app_the_browsers_address(tmp_path):
    """A request through HAProxy with the class config reaches the process with the client's
    address in X-Forwarded-For (what NORMSCOPE_TRUSTED_PROXIES lets the app believe)."""
    binary = haproxy_binary()
    if binary is None:
        pytest.skip("Debian's haproxy is not installed (scripts/test.sh installs it as root)")
    seen: list = []

    class App(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # the health check and the page alike: "ok"
            seen.append((self.path, self.headers.get("X-Forwarded-For")))
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
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{bind}/page", timeout=2) as answer:
                    assert answer.read() == b"ok"
                break
            except OSError:
                assert time.monotonic() < deadline and balancer.poll() is None
                time.sleep(0.1)
    finally:
        balancer.terminate()
        balancer.wait(10)
        app.shutdown()
    assert ("/page", "127.0.0.1") in seen
