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
is rebuilt from its URL.  Nothing restarts a stopped process; once every process has
stopped, so does the class.  Ctrl+C, SIGTERM or SIGHUP (a closed terminal) stop every
process, at any moment, during the start too.  A port already in use (another class still
running) stops the start with a message, as does a count of processes outside 1 to 8.
``NORMSCOPE_PRELOAD_MODEL=0`` and ``NORMSCOPE_WARM_PAGES=0`` apply to every process.

``start_class`` does the same for tests and benchmarks (``tests/e2e/test_class_browser.py``,
``benchmarks/bench_sessions.py --processes N``).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts import serve  # noqa: E402
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
    balancer: subprocess.Popen | None  # None until the processes are up
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
        """Stop every process: all asked at once, then waited for against one deadline and
        killed past it; a second Ctrl+C or SIGTERM meanwhile is dropped."""
        if self._closed:
            return
        self._closed = True
        with _signals_held(deliver=False):
            running = [p for p in [*self.apps, self.balancer] if p is not None and p.poll() is None]
            for process in running:
                process.terminate()
            deadline = time.monotonic() + 10.0
            for process in running:
                try:
                    process.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10.0)
            shutil.rmtree(self.folder, ignore_errors=True)


STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_held(deliver: bool = True):
    """Ctrl+C, SIGTERM and SIGHUP wait until the block is done (a process started and
    recorded, or every process stopped), then act; ``deliver=False`` (the stop itself, which
    already stops everything) drops them.  Recorded by a handler, not blocked: a process
    started in the block inherits a blocked mask, and the app processes then ignored their
    own SIGTERM (each stop waited 10 s, then killed them).  Outside the main thread, where
    Python sets no handler, nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = {signum: signal.getsignal(signum) for signum in STOPPING}
    for signum, handler in held.items():
        if handler is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(signum, lambda number, _frame: caught.append(number))
    try:
        yield
    finally:
        for signum, handler in held.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        if caught and deliver:
            signal.raise_signal(caught[0])


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
    warm: bool | None = None,
) -> ClassServer:
    """Start ``processes`` app processes on loopback and HAProxy on ``address:port``, and
    wait until HAProxy sees every process healthy.

    ``port`` None: free ports for HAProxy and the processes; else the processes take the
    ports after it (or ``app_ports``).  ``preload``: each process loads the live model in
    the background and (``warm``, None: as ``preload``) opens Depth and the dumps page once
    itself, as ``scripts/serve.py`` does by default (tests and benchmarks leave both off)."""
    binary = haproxy_binary()
    if binary is None:
        raise FileNotFoundError(f"haproxy is not installed: {HAPROXY_INSTALL}")
    if not 1 <= processes <= MAX_PROCESSES:
        raise ValueError(f"1 to {MAX_PROCESSES} processes (deploy/haproxy.cfg's slots)")
    if port is None:  # tests, benchmarks: any free ports
        port, app_ports = free_port(), app_ports or [free_port() for _ in range(processes)]
    else:  # HAProxy binds a port another HAProxy holds (SO_REUSEPORT): asked here first
        _refuse_taken([(address, port)])
    app_ports = app_ports or [port + 1 + i for i in range(processes)]
    _refuse_taken([("127.0.0.1", p) for p in app_ports])
    warm = preload if warm is None else warm
    server = None
    try:  # whatever stops the start (a signal, a process that fails) stops what it started
        with _signals_held():  # a folder made is a folder recorded, to be removed
            folder = Path(tempfile.mkdtemp(prefix="normscope-class-"))
            server = ClassServer(
                url=f"http://{_host_in_url(address)}:{port}",
                apps=[],
                app_ports=app_ports,
                balancer=None,
                socket_path=folder / "haproxy.sock",
                folder=folder,
            )
        for app_port in app_ports:
            with _signals_held():  # a process started is a process recorded, to be stopped
                server.apps.append(
                    start_server(app_port, stdout, python, preload=preload, warm=warm)
                )
        for app, app_port in zip(server.apps, app_ports):
            wait_healthy(f"http://127.0.0.1:{app_port}", app, timeout_s)
        environment = {  # HAProxy after the processes: its first checks find them up
            **os.environ,
            "NORMSCOPE_BIND": f"{address}:{port}",
            "NORMSCOPE_HAPROXY_SOCKET": str(server.socket_path),
            **{f"NORMSCOPE_APP{i + 1}": f"127.0.0.1:{p}" for i, p in enumerate(app_ports)},
        }
        with _signals_held():
            server.balancer = subprocess.Popen(
                [binary, "-db", "-f", str(CONFIG)], env=environment, stdout=stdout, stderr=stdout
            )
        _wait_all_up(server, timeout_s)
    except BaseException:
        if server is not None:
            server.close()
        raise
    return server


def _host_in_url(address: str) -> str:
    """Where this machine's browser reaches ``address``: every interface by the loopback, an
    IPv6 address in brackets."""
    if address in ("0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{address}]" if ":" in address else address


def _refuse_taken(places: list[tuple[str, int]]) -> None:
    """Raise if another program listens on one of ``places`` (address, port), or if this
    machine cannot listen there (an address it does not have)."""
    for address, port in places:
        if not 0 < port < 65536:
            raise OSError(f"cannot listen on {address} port {port}: ports are 1 to 65535")
        try:
            family, kind, _, _, where = socket.getaddrinfo(
                address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )[0]
        except (socket.gaierror, OverflowError) as error:
            raise OSError(f"cannot listen on {address} port {port}: {error}") from None
        with socket.socket(family, kind) as probe:
            # as the servers bind: a port a stopped class left in TIME_WAIT is free, one that
            # a process listens on (HAProxy's SO_REUSEPORT included) is not
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(where)
            except OSError as error:
                if error.errno != errno.EADDRINUSE:
                    raise OSError(
                        f"cannot listen on {address} port {port}: {error.strerror}"
                    ) from None
                raise OSError(
                    f"port {port} is in use ({error.strerror}): another class still running,"
                    " or another program; stop it or choose another --port"
                ) from None


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


def _stop_on_signal(_signum, _frame) -> None:
    raise SystemExit(0)  # unwinds through start_class or the watch, which stop every process


def _process_count(text: str) -> int:
    count = int(text)
    if not 1 <= count <= MAX_PROCESSES:
        raise argparse.ArgumentTypeError(f"1 to {MAX_PROCESSES} processes, not {count}")
    return count


def _port(text: str) -> int:
    port = int(text)
    if not 1 <= port <= 65535 - MAX_PROCESSES:
        raise argparse.ArgumentTypeError(f"1 to {65535 - MAX_PROCESSES}, not {port}")
    return port


def _network_address() -> str | None:
    """This machine's address on its network (the interface of its default route), as the
    room's phones reach it; connecting a UDP socket sends nothing."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 1))  # TEST-NET-1: routed by the default route
            found = probe.getsockname()[0]
        except OSError:
            return None
    return None if found.startswith("127.") else found


def main() -> int:
    for signum in (signal.SIGTERM, signal.SIGHUP):  # before anything starts
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(signum, _stop_on_signal)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "processes",
        type=_process_count,
        nargs="?",
        default=min(os.cpu_count() or 1, MAX_PROCESSES),
        help=f"app processes, 1 to {MAX_PROCESSES} (default: one per core)",
    )
    parser.add_argument(
        "--port", type=_port, default=8501, help="the class's port (the processes: the next N)"
    )
    parser.add_argument("--address", default="127.0.0.1", help="0.0.0.0: every interface")
    parser.add_argument(
        "--no-preload",
        action="store_true",
        help="load the live model on first use only, and open no page in advance",
    )
    args = parser.parse_args()
    preload = not args.no_preload and serve.preload_wanted()
    try:
        server = start_class(
            args.processes,
            args.port,
            args.address,
            preload=preload,
            warm=preload and serve.warm_pages_wanted(),
            stdout=None,  # the processes' and HAProxy's logs go to this terminal
            python=str(ROOT / ".venv" / "bin" / "python"),
        )
    except (KeyboardInterrupt, SystemExit) as stopped:  # Ctrl+C; SIGTERM, SIGHUP
        print("serve_class: stopped during the start; every process is stopped", file=sys.stderr)
        return 130 if isinstance(stopped, KeyboardInterrupt) else 0
    except (OSError, RuntimeError, TimeoutError) as error:
        print(f"serve_class: {error}; every process is stopped", file=sys.stderr)
        return 1
    try:  # from here on, however this ends, every process is stopped
        print(f"NormScope for a class: {server.url} ({args.processes} processes)", flush=True)
        network = _network_address() if args.address in ("0.0.0.0", "::") else None
        if network is not None:
            print(
                f"From the room's network: http://{network}:{args.port} (open the Class page at"
                " this address: its QR code and join link use the address it was opened at)",
                flush=True,
            )
        return _watch(server)
    except KeyboardInterrupt:
        return 0
    finally:
        server.close()


def _watch(server: ClassServer) -> int:
    """Until HAProxy or every process has stopped: each process's exit reported."""
    reported = set()
    while server.balancer.poll() is None:
        for index, app in enumerate(server.apps):
            if app.poll() is not None and index not in reported:
                reported.add(index)
                print(f"process app{index + 1} exited ({app.returncode})", flush=True)
        if len(reported) == len(server.apps):
            print("every process has exited: the class stops", flush=True)
            return 1
        time.sleep(1.0)
    return server.balancer.returncode or 1


if __name__ == "__main__":
    sys.exit(main())
