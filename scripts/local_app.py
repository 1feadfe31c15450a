"""A local NormScope server and Debian's headless Chromium, for browser tests and benchmarks.

Shared by ``tests/e2e`` and ``benchmarks/bench_app.py`` so both start the app exactly the
way ``scripts/run.sh`` does (through ``scripts/serve.py``) and drive the same browser.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"  # Debian's package; never `playwright install`
# Without the background-networking flags Chromium keeps dialling out of a closed network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


PORT_SPAN = 10_000  # free_port's ports: this many below the outgoing connections' range


def free_port() -> int:
    """A loopback port nothing listens on, for a server about to start there.

    Drawn below the kernel's range for outgoing connections' own ports
    (``/proc/sys/net/ipv4/ip_local_port_range``, 32768-60999 here).  A port the kernel picks
    itself (bind to 0) comes from that range, where a connection another test's Chromium or
    client opens may take it in the seconds before the server binds it: a server then exits
    at once ("port in use"), as a class test's process once did in a full run."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as lines:
            first = int(lines.read().split()[0])
    except (OSError, ValueError, IndexError):  # not Linux: the kernel's pick
        first = 0
    for _ in range(100) if first > PORT_SPAN else ():
        port = random.randrange(first - PORT_SPAN, first)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    port: int,
    stdout=subprocess.DEVNULL,
    python: str = sys.executable,
    script: str | None = None,
    cwd: Path = ROOT,
    preload: bool = False,
    warm: bool = False,
):
    """Start the app as ``scripts/run.sh`` does, headless, on 127.0.0.1:``port``.

    ``script``: another Streamlit script to serve the same way instead (``streamlit run``
    with the same options and working directory; benchmarks use it for a bare app).
    ``cwd``: the checkout to serve (benchmarks compare an earlier one).
    ``preload=False`` (tests) skips ``scripts/serve.py``'s background load of SmolLM2: a
    minute of CPU and ~600 MB that no test but the live model's own needs.  ``warm=False``
    (tests) skips its first views of the heavy pages (``ui/first_views.py``), seconds of CPU
    per server that would compete with the test's own page.
    """
    launcher = ["scripts/serve.py"] if script is None else ["-m", "streamlit", "run", script]
    command = [
        python,
        *launcher,
        "--server.headless=true",
        f"--server.port={port}",
        "--server.address=127.0.0.1",
        "--browser.gatherUsageStats=false",
    ]
    environment = {
        **os.environ,
        "NORMSCOPE_PRELOAD_MODEL": "1" if preload else "0",
        "NORMSCOPE_WARM_PAGES": "1" if warm else "0",
    }
    return subprocess.Popen(
        command, cwd=cwd, stdout=stdout, stderr=subprocess.STDOUT, env=environment
    )


def wait_healthy(url: str, process: subprocess.Popen, timeout_s: float = 60.0) -> None:
    """Poll /_stcore/health every 50 ms until it answers "ok"; raise if it never does."""
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"the server was not healthy within {timeout_s:.0f} s")


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far, all threads (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
