"""Benchmark: NormScope's latency as a user sees it, in a real headless Chromium.

1. First render: the clock starts when the server process is started (exactly as a user
   starts it: ``scripts/serve.py``, which ``scripts/run.sh`` runs); it stops when the
   Vector Lab shows its first result — the LaTeX step with the mean 2.5 of the default
   vector ``1, 2, 3, 4`` and the plotly chart drawn.  Chromium is launched *before* the
   clock starts: the browser's own start-up is not the app's latency.  Two intermediate
   marks show where the time goes: the server answering its health check, and the
   frontend mounted.
2. Widget change: type a new vector into "Vectors (one per line)" (key ``vl_text``) and
   commit it with Ctrl+Enter; the clock stops when the chart holds the new input (read
   from plotly's graph div).  The time until the whole rerun finished (Streamlit's
   ``data-test-script-state='notRunning'``) is reported next to it.  20 changes, no
   warm-up excluded; p95 is the nearest rank (the 19th of 20).

Targets (issue 2, 2-core machine): first render <= 5 s, widget change <= 300 ms median.
Needs Debian's chromium at /usr/bin/chromium and the Python ``playwright`` package (never
``playwright install``).

The server starts as ``scripts/run.sh`` starts it, loading SmolLM2 in the background (issue
14); ``--no-preload`` measures without that load, to see what it costs the first render.

Run:  .venv/bin/python benchmarks/bench_app.py [--changes 20] [--no-preload]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: make the project's scripts/ importable

from scripts.local_app import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    IDLE,
    free_port,
    start_server,
    wait_healthy,
)

VECTORS_LABEL = "Vectors (one per line)"
FIRST_RENDER_TARGET_S = 5.0
CHANGE_TARGET_MS = 300.0
SERVER_DEADLINE_S = 60.0  # give up on a server that is not healthy by then
STEP_TIMEOUT_MS = 30_000  # give up on one page render / one change after this

# True once plotly's graph div holds ``value`` as the first input bar (trace 0 = the input)
CHART_SHOWS_JS = """
(value) => {
  const graph = document.querySelector('.stPlotlyChart .js-plotly-plot');
  if (!graph || !graph._fullData || !graph._fullData.length) return false;
  const y = graph._fullData[0].y;
  return !!y && y.length > 0 && Number(y[0]) === value
    && graph.querySelector('.main-svg') !== null;
}
"""


def wait_first_render(page) -> None:
    """The default vector's worked steps (mean 2.5) and its chart are on screen."""
    page.locator(".katex-html", has_text="2.5").first.wait_for(
        state="visible", timeout=STEP_TIMEOUT_MS
    )
    page.locator(".stPlotlyChart .main-svg").first.wait_for(
        state="visible", timeout=STEP_TIMEOUT_MS
    )
    page.wait_for_function(CHART_SHOWS_JS, arg=1.0, timeout=STEP_TIMEOUT_MS)


def time_widget_change(page, box, value: float) -> tuple[float, float]:
    """Commit a new vector starting with ``value``; seconds to chart redrawn, to idle."""
    box.fill(f"{value:g}, {value + 1:g}, {value + 3:g}, {value + 7:g}")
    start = time.perf_counter()
    box.press("Control+Enter")
    page.wait_for_function(CHART_SHOWS_JS, arg=value, timeout=STEP_TIMEOUT_MS, polling="raf")
    chart_s = time.perf_counter() - start
    page.locator(IDLE).wait_for(state="attached", timeout=STEP_TIMEOUT_MS)
    return chart_s, time.perf_counter() - start


def nearest_rank(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=20, help="widget changes to time")
    parser.add_argument(
        "--no-preload",
        action="store_true",
        help="start the server without its background load of SmolLM2 (on by default, as "
        "scripts/run.sh starts it: the first render must not wait for it)",
    )
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tempfile.NamedTemporaryFile("w+", prefix="normscope-bench-", suffix=".log", delete=False)
    process = None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 2400}, locale="en-US")
            page = context.new_page()

            start = time.perf_counter()
            python = str(ROOT / ".venv" / "bin" / "python")
            process = start_server(port, log, python, preload=not args.no_preload)
            wait_healthy(url, process, SERVER_DEADLINE_S)
            healthy_s = time.perf_counter() - start
            page.goto(url, wait_until="domcontentloaded")
            page.locator("[data-testid='stApp']").wait_for(
                state="attached", timeout=STEP_TIMEOUT_MS
            )
            frontend_s = time.perf_counter() - start
            wait_first_render(page)
            first_render_s = time.perf_counter() - start
            page.locator(IDLE).wait_for(state="attached", timeout=STEP_TIMEOUT_MS)

            box = page.get_by_role("textbox", name=VECTORS_LABEL, exact=True)
            chart_ms, idle_ms = [], []
            for i in range(args.changes):
                chart_s, idle_s = time_widget_change(page, box, 11.0 + i)
                chart_ms.append(1e3 * chart_s)
                idle_ms.append(1e3 * idle_s)
            context.close()
        except Exception:
            log.flush()
            print(f"benchmark failed; server log: {log.name}", file=sys.stderr)
            raise
        finally:
            browser.close()
            if process is not None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)

    chart_median = statistics.median(chart_ms)
    first_ok = first_render_s <= FIRST_RENDER_TARGET_S
    change_ok = chart_median <= CHANGE_TARGET_MS
    print(
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, "
        f"{args.changes} widget changes (Ctrl+Enter in the vectors text area)"
    )
    print()
    print("| measurement | median | p95 | min | max | target |")
    print("|---|---:|---:|---:|---:|---|")
    print(f"| server start -> /_stcore/health ok | {healthy_s:.2f} s | | | | |")
    print(f"| server start -> frontend mounted (stApp) | {frontend_s:.2f} s | | | | |")
    print(
        f"| server start -> Vector Lab first render | {first_render_s:.2f} s | | | | "
        f"<= {FIRST_RENDER_TARGET_S:.0f} s ({'met' if first_ok else 'MISSED'}) |"
    )
    for name, samples, target in (
        ("widget change -> chart redrawn", chart_ms, change_ok),
        ("widget change -> rerun finished", idle_ms, None),
    ):
        verdict = "" if target is None else f"<= {CHANGE_TARGET_MS:.0f} ms median"
        if target is not None:
            verdict += " (met)" if target else " (MISSED)"
        print(
            f"| {name} | {statistics.median(samples):.0f} ms | "
            f"{nearest_rank(samples, 0.95):.0f} ms | {min(samples):.0f} ms | "
            f"{max(samples):.0f} ms | {verdict} |"
        )
    os.unlink(log.name)
    return 0 if first_ok and change_ok else 1


if __name__ == "__main__":
    sys.exit(main())
