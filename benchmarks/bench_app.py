"""Benchmark: NormScope's latency as a user sees it, in a real headless Chromium.

1. First render: the clock starts when the server process is started (exactly as a user
   starts it: ``scripts/serve.py``, which ``scripts/run.sh`` runs); it stops when the
   Vector Lab shows its first result — the LaTeX step with the mean 2.5 of the default
   vector ``1, 2, 3, 4`` and the plotly chart drawn.  Chromium is launched *before* the
   clock starts: the browser's own start-up is not the app's latency.  Two intermediate
   marks show where the time goes: the server answering its health check, and the
   frontend mounted.  Each start gets a fresh browser context (empty cache).
   The floor: ``benchmarks/bare_app.py`` (a title, one ``st.latex``, one plotly bar chart),
   served the same way (``streamlit run`` with the same options) and timed the same way,
   alternating with NormScope, ``--reps`` times each; the ratio NormScope / bare is
   reported per pair and as the ratio of medians (target: <= 1.3).  A shared
   machine's load moves wall times by seconds, so the CPU time each start cost until its
   first render is reported too (the server process, from /proc; all of Chromium's
   processes, from CDP's ``SystemInfo.getProcessInfo``): work, which load barely moves.
2. Page views: after each cold start, every page opened by a new visitor (a fresh
   browser context) in that now warm server, twice: the page's first view in the process and
   the next visitor's (NormScope started as ``scripts/run.sh`` does: its server has opened
   Depth and the dumps page itself after the first render, ``ui/first_views.py``, unless
   ``--no-warm``); each until the title is drawn and the script run has finished.  The
   bare app's view of its one page, timed the same way, is the floor (target: every page's
   first view <= 2x it).
3. Widget change: type a new vector into "Vectors (one per line)" (key ``vl_text``) and
   commit it with Ctrl+Enter; the clock stops when the chart holds the new input (read
   from plotly's graph div).  The time until the whole rerun finished (Streamlit's
   ``data-test-script-state='notRunning'``) is reported next to it.  20 changes, no
   warm-up excluded; p95 is the nearest rank (the 19th of 20).

Targets (2-core machine): first render <= 5 s and <= 1.3x the bare app;
widget change <= 300 ms median.
Needs Debian's chromium at /usr/bin/chromium and the Python ``playwright`` package (never
``playwright install``).

Run:  .venv/bin/python benchmarks/bench_app.py [--reps 5] [--changes 20] [--baseline DIR]
      [--preload] [--no-warm]
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: make the project's scripts/ importable

from scripts.local_app import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    IDLE,
    free_port,
    process_cpu_s,
    start_server,
    wait_healthy,
)

VECTORS_LABEL = "Vectors (one per line)"
FIRST_RENDER_TARGET_S = 5.0
BARE_RATIO_TARGET = 1.3
BARE_APP = "benchmarks/bare_app.py"
CHANGE_TARGET_MS = 300.0
PAGE_VIEW_RATIO_TARGET = 2.0  # a page's view in a warm server / the bare app's
PAGES = ("", "lessons", "axes", "geometry", "depth", "models", "dumps", "kernels")  # "": Vector Lab
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


@dataclass
class Served:
    """One cold start: its marks (seconds from the process start), its server and its tab."""

    healthy_s: float
    mounted_s: float
    rendered_s: float
    server_cpu_s: float  # the server process's CPU time from its start to the first render
    browser_cpu_s: float  # Chromium's (all its processes) over the same span
    process: subprocess.Popen
    context: object
    page: object
    url: str = ""

    def close(self) -> None:
        self.context.close()
        stop_server(self.process)


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def browser_cpu(cdp) -> dict[int, float]:
    """CPU seconds so far of each of Chromium's processes (browser, renderers, GPU, ...)."""
    return {p["id"]: p["cpuTime"] for p in cdp.send("SystemInfo.getProcessInfo")["processInfo"]}


@dataclass(frozen=True)
class Target:
    """What a cold start serves: a checkout (``root``) and its script (None: NormScope)."""

    label: str
    root: Path
    script: str | None = None


def cold_start(
    browser, cdp, log, target: Target, preload: bool = False, warm: bool = True
) -> Served:
    """Start ``target``'s server and time its first render in a fresh browser context."""
    context = browser.new_context(viewport={"width": 1400, "height": 2400}, locale="en-US")
    page = context.new_page()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    python = str(target.root / ".venv" / "bin" / "python")
    cpu_before = browser_cpu(cdp)
    start = time.perf_counter()
    process = start_server(
        port, log, python, target.script, cwd=target.root, preload=preload, warm=warm
    )
    try:
        wait_healthy(url, process, SERVER_DEADLINE_S)
        healthy_s = time.perf_counter() - start
        page.goto(url, wait_until="domcontentloaded")
        page.locator("[data-testid='stApp']").wait_for(state="attached", timeout=STEP_TIMEOUT_MS)
        mounted_s = time.perf_counter() - start
        wait_first_render(page)
        rendered_s = time.perf_counter() - start
        server_s = process_cpu_s(process.pid)
        cpu_after = browser_cpu(cdp)
    except Exception:
        context.close()
        stop_server(process)
        raise
    browser_s = sum(t - cpu_before.get(pid, 0.0) for pid, t in cpu_after.items())
    served = Served(healthy_s, mounted_s, rendered_s, server_s, browser_s, process, context, page)
    served.url = url
    return served


def view_s(browser, url: str) -> float:
    """Seconds from opening ``url`` in a new visitor's tab (a fresh context) to its page
    drawn: the title shown and the script run finished."""
    context = browser.new_context(viewport={"width": 1400, "height": 2400}, locale="en-US")
    page = context.new_page()
    try:
        start = time.perf_counter()
        page.goto(url, wait_until="domcontentloaded")
        page.locator("h1").first.wait_for(timeout=STEP_TIMEOUT_MS * 4)
        page.locator(IDLE).wait_for(state="attached", timeout=STEP_TIMEOUT_MS * 4)
        return time.perf_counter() - start
    finally:
        context.close()


def page_views(browser, served: Served, pages: tuple[str, ...]) -> dict[str, tuple]:
    """For each page: (its first view in this warm server, a second visitor's view)."""
    return {
        name: (
            view_s(browser, f"{served.url}/{name}?lang=en"),
            view_s(browser, f"{served.url}/{name}?lang=en"),
        )
        for name in pages
    }


def _row(name: str, samples: list[float], unit: str, digits: int, target: str = "") -> str:
    cells = [statistics.median(samples), nearest_rank(samples, 0.95), min(samples), max(samples)]
    text = " | ".join(f"{v:.{digits}f} {unit}" for v in cells)
    return f"| {name} | {text} | {target} |"


def time_changes(page, changes: int) -> tuple[list[float], list[float]]:
    """Milliseconds to the chart redrawn and to the rerun finished, for each widget change."""
    page.locator(IDLE).wait_for(state="attached", timeout=STEP_TIMEOUT_MS)
    box = page.get_by_role("textbox", name=VECTORS_LABEL, exact=True)
    chart_ms, idle_ms = [], []
    for i in range(changes):
        chart_s, idle_s = time_widget_change(page, box, 11.0 + i)
        chart_ms.append(1e3 * chart_s)
        idle_ms.append(1e3 * idle_s)
    return chart_ms, idle_ms


def report(targets, runs, chart_ms, idle_ms, load_before: float) -> bool:
    bare, app = targets[0], targets[1]
    print(
        f"{os.cpu_count()} CPUs, 1-minute load average {load_before:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after; {len(runs[bare])} cold starts of each app, "
        f"alternating; {len(chart_ms)} widget changes (Ctrl+Enter in the vectors text area)"
    )
    print()
    print("| measurement | median | p95 | min | max | target |")
    print("|---|--:|--:|--:|--:|---|")
    for mark, attribute in (("/_stcore/health ok", "healthy_s"), ("frontend mounted", "mounted_s")):
        for target in targets:
            samples = [getattr(r, attribute) for r in runs[target]]
            print(_row(f"{target.label}: server start → {mark}", samples, "s", 2))
    ok = True
    for target in targets:
        samples = [r.rendered_s for r in runs[target]]
        verdict = ""
        if target is app:
            first_ok = statistics.median(samples) <= FIRST_RENDER_TARGET_S
            verdict = f"<= {FIRST_RENDER_TARGET_S:.0f} s ({'met' if first_ok else 'MISSED'})"
            ok &= first_ok
        print(_row(f"{target.label}: server start → first render", samples, "s", 2, verdict))
    bare_s = [r.rendered_s for r in runs[bare]]
    for target in targets[1:]:
        app_s = [r.rendered_s for r in runs[target]]
        ratio = statistics.median(app_s) / statistics.median(bare_s)
        pairs = [a / b for a, b in zip(app_s, bare_s)]
        verdict = ""
        if target is app:
            verdict = (
                f"<= {BARE_RATIO_TARGET} ({'met' if ratio <= BARE_RATIO_TARGET else 'MISSED'})"
            )
            ok &= ratio <= BARE_RATIO_TARGET
        print(
            f"| first render, {target.label} / bare app | {ratio:.2f} (ratio of medians) | | "
            f"{min(pairs):.2f} (pairs) | {max(pairs):.2f} (pairs) | {verdict} |"
        )
    for target in targets:
        for name, attribute in (("server", "server_cpu_s"), ("browser", "browser_cpu_s")):
            samples = [getattr(r, attribute) for r in runs[target]]
            print(_row(f"{target.label}: {name} CPU time to first render", samples, "s", 2))
    bare_cpu = statistics.median(r.server_cpu_s + r.browser_cpu_s for r in runs[bare])
    for target in targets[1:]:
        cpu = statistics.median(r.server_cpu_s + r.browser_cpu_s for r in runs[target])
        print(
            f"| CPU time to first render (server + browser), {target.label} / bare app | "
            f"{cpu / bare_cpu:.2f} (ratio of medians) | | | | |"
        )
    if chart_ms:
        change_ok = statistics.median(chart_ms) <= CHANGE_TARGET_MS
        verdict = f"<= {CHANGE_TARGET_MS:.0f} ms median ({'met' if change_ok else 'MISSED'})"
        print(_row("widget change → chart redrawn", chart_ms, "ms", 0, verdict))
        print(_row("widget change → rerun finished", idle_ms, "ms", 0))
        ok &= change_ok
    print()
    for target in targets[1:]:
        pairs = zip((r.rendered_s for r in runs[bare]), (r.rendered_s for r in runs[target]))
        text = ", ".join(f"({b:.2f}, {a:.2f}, {a / b:.2f})" for b, a in pairs)
        print(f"pairs (bare app, {target.label}, ratio): {text}")
    return ok


def report_views(targets, views) -> bool:
    """Each page's view in a warm server against the bare app's, in the same run."""
    bare = targets[0]
    bare_s = statistics.median(v[""][1] for v in views[bare])  # a new visitor, warm server
    print()
    print(f"page views in a warm server (new visitor each; bare app: {bare_s:.2f} s median)")
    print(
        "| page | "
        + " | ".join(
            f"{t.label}: first view s | {t.label}: next visitor s | {t.label}: first / bare"
            for t in targets[1:]
        )
        + " |"
    )
    print("|---|" + "--:|--:|--:|" * len(targets[1:]))
    ok = True
    for name in PAGES:
        cells = []
        for target in targets[1:]:
            first = statistics.median(v[name][0] for v in views[target])
            second = statistics.median(v[name][1] for v in views[target])
            cells.append(f"{first:.2f} | {second:.2f} | {first / bare_s:.2f}")
            if target is targets[1]:
                ok &= first / bare_s <= PAGE_VIEW_RATIO_TARGET
        print(f"| {name or 'vector_lab'} | " + " | ".join(cells) + " |")
    print(f"target: every page's first view <= {PAGE_VIEW_RATIO_TARGET}x the bare app's")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="cold starts of each app")
    parser.add_argument("--changes", type=int, default=20, help="widget changes to time")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another NormScope checkout (e.g. a `git worktree` of an earlier commit, with "
        "its .venv) to cold-start the same way, alternating: before/after in one run",
    )
    parser.add_argument(
        "--preload",
        action="store_true",
        help="let NormScope's server load SmolLM2 in the background, as scripts/run.sh does "
        "(it starts after the first page is served, so the first render must not wait for it)",
    )
    parser.add_argument(
        "--no-warm",
        dest="warm",
        action="store_false",
        help="start NormScope with NORMSCOPE_WARM_PAGES=0: no first views of Depth and the "
        "dumps page by the server itself after its first page view (ui/first_views.py)",
    )
    parser.add_argument(
        "--no-pages",
        dest="pages",
        action="store_false",
        help="skip each page's view in the warm server (after each cold start)",
    )
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    targets = [Target("bare app", ROOT, BARE_APP), Target("NormScope", ROOT)]
    if args.baseline is not None:
        targets.append(Target("baseline", args.baseline.resolve()))
    runs: dict[Target, list[Served]] = {target: [] for target in targets}
    views: dict[Target, list[dict[str, tuple]]] = {target: [] for target in targets}
    log = tempfile.NamedTemporaryFile("w+", prefix="normscope-bench-", suffix=".log", delete=False)
    chart_ms, idle_ms = [], []
    load_before = os.getloadavg()[0]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        cdp = browser.new_browser_cdp_session()
        try:
            for rep in range(args.reps):
                # alternate the order, so a drift in the machine's load hits every target
                for target in targets if rep % 2 == 0 else targets[::-1]:
                    served = cold_start(browser, cdp, log, target, args.preload, args.warm)
                    if args.pages:
                        pages = ("",) if target.script else PAGES
                        views[target].append(page_views(browser, served, pages))
                    if rep == args.reps - 1 and target is targets[1] and args.changes:
                        chart_ms, idle_ms = time_changes(served.page, args.changes)
                    served.close()
                    runs[target].append(served)
        except Exception:
            log.flush()
            print(f"benchmark failed; server log: {log.name}", file=sys.stderr)
            raise
        finally:
            browser.close()
    ok = report(targets, runs, chart_ms, idle_ms, load_before)
    if args.pages:
        ok &= report_views(targets, views)
    os.unlink(log.name)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
