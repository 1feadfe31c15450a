"""Serve a class: N NormScope processes behind HAProxy, on one machine.

    bash scripts/serve_class.sh 2                          # http://127.0.0.1:8501
    bash scripts/serve_class.sh 4 --address 0.0.0.0 --port 8080

Streamlit runs all of a process's sessions under one interpreter lock, so a process serves
about one core's worth of clicks however many cores the machine has.  Here N processes
(``scripts/serve.py``, as ``scripts/run.sh`` starts one) listen on loopback ports after the
class's port, and HAProxy (Debian's ``haproxy``) listens on the class's address: it sends a
new tab to the process with the fewest sessions and keeps that browser there with a cookie
(``deploy/haproxy.cfg``, the same file ``compose.yaml`` uses).  A process that stops loses
its sessions: their browsers reconnect through HAProxy to another process, where each page
is rebuilt from its URL.  Nothing restarts a stopped process; stop the whole class with
Ctrl+C (or SIGTERM), which stops every process.

``start_class`` does the same for tests and benchmarks (``tests/e2e/test_class_browser.py``,
``benchmarks/bench_sessions.py --processes N``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts.local_app import free_port, start_server, wait_healthy  # noqa: E402

CONFIG = ROOT / "deploy" / "haproxy.cfg"
MAX_PROCESSES = 8  # the server slots deploy/haproxy.cfg has (NORMSCOPE_APP1..8)
HAPROXY_INSTALL = "apt-get install -y haproxy  (as root, after apt-get update)"


def haproxy_binary() -> str | None:
    """Debian's haproxy, where installed (/usr/sbin is not on every user's PATH)."""
    found = shutil.which("haproxy") or "/usr/sbin/haproxy"
    return found if os.access(found, os.X_OK) else None


@dataclass
class ClassServer:
    """The running class: its URL, its app processes and their ports, and HAProxy."""

    url: str
    apps: list[subprocess.Popen]
    app_ports: list[int]
    balancer: subprocess.Popen
    socket_path: Path  # HAProxy's runtime API
    folder: Path  # the temporary folder holding the socket
    _closed: bool = field(default=False, repr=False)

    def stop_app(self, index: int, timeout_s: float = 10.0) -> None:
        """Stop app process ``index`` (0-based) as a crash or a restart would."""
        _stop(self.apps[index], timeout_s)

    def sessions(self) -> dict[str, tuple[int, int]]:
        """Per process ("app1", ...): (connections open now, connections so far), as
        HAProxy counts them; a Streamlit session holds one open connection (its websocket)."""
        rows = _ask(self.socket_path, "show stat").splitlines()
        counts = {}
        for row in rows:
            fields = row.split(",")
            if len(fields) > 7 and fields[0] == "normscope" and fields[1].startswith("app"):
                counts[fields[1]] = (int(fields[4]), int(fields[7]))
        return counts

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for process in [*self.apps, self.balancer]:
            _stop(process, 10.0)
        shutil.rmtree(self.folder, ignore_errors=True)


def _stop(process: subprocess.Popen, timeout_s: float) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout_s)


def _ask(path: Path, command: str) -> str:
    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect(str(path))
        connection.sendall(command.encode() + b"\n")
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()


def start_class(
    processes: int,
    port: int | None = None,
    address: str = "127.0.0.1",
    app_ports: list[int] | None = None,
    preload: bool = False,
    python: str = sys.executable,
    stdout=subprocess.DEVNULL,
    timeout_s: float = 120.0,
) -> ClassServer:
    """Start ``processes`` app processes on loopback and HAProxy on ``address:port``, and
    wait until HAProxy sees every process healthy.

    ``port`` None: free ports for HAProxy and the processes; else the processes take the
    ports after it (or ``app_ports``).  ``preload``: each process loads the live model in
    the background and opens Depth and the dumps page once itself, as ``scripts/serve.py``
    does by default (tests and benchmarks leave both off)."""
    binary = haproxy_binary()
    if binary is None:
        raise FileNotFoundError(f"haproxy is not installed: {HAPROXY_INSTALL}")
    if not 1 <= processes <= MAX_PROCESSES:
        raise ValueError(f"1 to {MAX_PROCESSES} processes (deploy/haproxy.cfg's slots)")
    if port is None:  # tests, benchmarks: any free ports
        port, app_ports = free_port(), app_ports or [free_port() for _ in range(processes)]
    app_ports = app_ports or [port + 1 + i for i in range(processes)]
    folder = Path(tempfile.mkdtemp(prefix="normscope-class-"))
    socket_path = folder / "haproxy.sock"
    apps = [start_server(p, stdout, python, preload=preload, warm=preload) for p in app_ports]
    environment = {
        **os.environ,
        "NORMSCOPE_BIND": f"{address}:{port}",
        "NORMSCOPE_HAPROXY_SOCKET": str(socket_path),
        **{f"NORMSCOPE_APP{i + 1}": f"127.0.0.1:{p}" for i, p in enumerate(app_ports)},
    }
    balancer = subprocess.Popen(
        [binary, "-db", "-f", str(CONFIG)], env=environment, stdout=stdout, stderr=stdout
    )
    server = ClassServer(
        url=f"http://{'127.0.0.1' if address == '0.0.0.0' else address}:{port}",
        apps=apps,
        app_ports=app_ports,
        balancer=balancer,
        socket_path=socket_path,
        folder=folder,
    )
    try:
        for app, app_port in zip(apps, app_ports):
            wait_healthy(f"http://127.0.0.1:{app_port}", app, timeout_s)
        _wait_all_up(server, timeout_s)
    except BaseException:
        server.close()
        raise
    return server


def _wait_all_up(server: ClassServer, timeout_s: float) -> None:
    """Until HAProxy's health checks have found every process up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.balancer.poll() is not None:
            raise RuntimeError(f"haproxy exited with code {server.balancer.returncode}")
        try:
            rows = _ask(server.socket_path, "show stat").splitlines()
            states = [r.split(",")[17] for r in rows if r.startswith("normscope,app")]
            if len(states) == len(server.apps) and all(s == "UP" for s in states):
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"haproxy did not see every process up within {timeout_s:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("processes", type=int, nargs="?", default=os.cpu_count() or 1)
    parser.add_argument("--port", type=int, default=8501, help="the class's port")
    parser.add_argument("--address", default="127.0.0.1", help="0.0.0.0: every interface")
    parser.add_argument(
        "--no-preload",
        action="store_true",
        help="load the live model on first use only, and open no page in advance",
    )
    args = parser.parse_args()
    server = start_class(
        args.processes,
        args.port,
        args.address,
        preload=not args.no_preload,
        stdout=None,  # the processes' and HAProxy's logs go to this terminal
        python=str(ROOT / ".venv" / "bin" / "python"),
    )
    print(f"NormScope for a class: {server.url} ({args.processes} processes)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    reported = set()
    try:
        while server.balancer.poll() is None:
            for index, app in enumerate(server.apps):
                if app.poll() is not None and index not in reported:
                    reported.add(index)
                    print(f"process app{index + 1} exited ({app.returncode})", flush=True)
            time.sleep(1.0)
        return server.balancer.returncode or 1
    except KeyboardInterrupt:
        return 0
    finally:
        server.close()


if __name__ == "__main__":
    sys.exit(main())
