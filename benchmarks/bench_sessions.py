"""Benchmark: a class on one server, or on several — N sessions clicking every few seconds.

Each session speaks Streamlit's own protocol (``benchmarks/streamlit_session.py``), light
enough that sixty of them run beside the server on two cores.  One point of the benchmark:

1. a fresh server (``scripts/serve.py`` as ``scripts/run.sh`` starts it, without the live
   model's background load), or with ``--processes N`` N of them behind HAProxy
   (``scripts/serve_class.py``, the class topology);
2. warm-up: one session opens each page of the scenario once (imports, first computations);
   the server's memory after it is the baseline;
3. the N sessions open their pages, spread over ``--ramp`` seconds (session i takes page
   i mod pages), then wait for the window to open; the memory then (every session open,
   none clicking yet) is read, and across points its slope is the memory a session costs
   (within one point it is smaller than what the warm-up's page runs free late);
4. the window (``--minutes``): each session thinks 2-5 s, then interacts — changes one of its
   page's widgets (a new value each time: another option, cell, token, lesson), or one time
   in ten opens the scenario's next page — and waits until the server's run has finished.

Reported per point: interactions, interactions per second, latency (request sent → the
run's ``script_finished``) p50 / p95 by nearest rank, errors (an exception drawn, a run past
120 s, a widget missing, a closed connection: each is counted, the session reconnects and
goes on), the server's CPU time per interaction (user + system of every app process from
``/proc``, over the window), its resident memory (baseline, with the sessions open, peak)
the load generator's own CPU, HAProxy's, and how busy the machine's cores were over the
window (every process: here other workloads share the two cores).

Scenarios: ``class`` — Lessons, Vector Lab, Axes, the dumps page's example and Depth, mixed;
``vector-text`` — the Vector Lab only, a new vector typed each time (every change computes).
``--driver browser`` runs ``vector-text`` in Debian's Chromium instead (one browser context
per session, ``bench_load.py``'s technique: fill the text area, Ctrl+Enter, wait until the
chart holds it and the page is idle), to check at ten sessions that the protocol's figures
mean what a browser's do.

Run:  .venv/bin/python benchmarks/bench_sessions.py --sessions 10,30,60 [--processes 1]
      .venv/bin/python benchmarks/bench_sessions.py --sessions 10 --scenario vector-text \
          --driver browser
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.session_measures import (  # noqa: E402
    Point,
    Sample,
    measure_window,
    nearest_rank,
    settled_rss_mb,
)
from benchmarks.session_scenarios import LABELS, SCENARIOS  # noqa: E402
from benchmarks.streamlit_session import AppSession, ProtocolError  # noqa: E402
from scripts.local_app import free_port, start_server, wait_healthy  # noqa: E402
from scripts.serve_class import start_class  # noqa: E402

THINK_S = (2.0, 5.0)  # a person's pause between two clicks
PAGE_SWITCH = 0.1  # share of interactions that open the scenario's next page instead
QUERY = "lang=en"
P95_TARGET_S = 1.0  # sixty sessions, p95 <= 1 s


# --- measuring ----------------------------------------------------------------------------


class Clock:
    """The window every session shares: opens at ``start``, closes ``seconds`` later."""

    def __init__(self, start: float, seconds: float):
        self.start, self.end = start, start + seconds

    async def wait_open(self) -> None:
        await asyncio.sleep(max(0.0, self.start - time.monotonic()))

    def open(self) -> bool:
        return time.monotonic() < self.end


async def protocol_user(
    index: int, url: str, pages: dict, clock: Clock, ramp_s: float, point: Point
) -> None:
    """One person: opens a page, then thinks and clicks until the window closes."""
    rng = random.Random(index)
    names = list(pages)
    page = names[index % len(names)]
    session = AppSession(url)
    last: dict[str, object] = {}  # the values this session set, by key
    count = 0

    async def reopen() -> None:
        await session.close()
        await session.connect()
        await session.open(page, QUERY)
        last.clear()

    await asyncio.sleep(rng.uniform(0.0, ramp_s))
    try:
        await session.connect()
        run = await session.open(page, QUERY)
        point.opens.append(run.seconds)
        point.errors += [f"open {page}: {e}" for e in run.exceptions]
    except (ProtocolError, OSError) as error:
        point.errors.append(f"session {index} open {page}: {error}")
        return
    await clock.wait_open()
    while clock.open():
        await asyncio.sleep(rng.uniform(*THINK_S))
        count += 1
        try:
            if len(names) > 1 and rng.random() < PAGE_SWITCH:
                page = names[(names.index(page) + 1) % len(names)]
                last.clear()
                run, kind = await session.open(page, QUERY), "page"
            else:
                change = rng.choice(pages[page])
                widget = session.widget(change.key)
                current = last.get(widget.key, widget.value())
                value = change.choose(widget, current, rng, count)
                run, kind = await session.change(widget.key, value), "change"
                last[widget.key] = value
        except (ProtocolError, OSError) as error:
            point.errors.append(f"session {index} on {page}: {error}")
            try:
                await reopen()
            except (ProtocolError, OSError):
                return
            continue
        point.samples.append(Sample(LABELS.get(page, page), kind, run.seconds))
        point.errors += [f"{page}: {e}" for e in run.exceptions]
    await session.close()


async def drive_protocol(args, url: str, pids: list[int], sessions: int, point: Point) -> None:
    pages = SCENARIOS[args.scenario]
    warm = AppSession(url)  # the warm-up: each page once
    await warm.connect()
    for page in pages:
        await warm.open(page, QUERY)
    await warm.close()
    point.rss_baseline_mb = await settled_rss_mb(pids)
    clock = Clock(time.monotonic() + args.ramp + 10.0, 60.0 * args.minutes)
    users = [
        asyncio.create_task(protocol_user(i, url, pages, clock, args.ramp, point))
        for i in range(sessions)
    ]
    await asyncio.sleep(max(0.0, clock.start - 6.5 - time.monotonic()))
    point.rss_open_mb = await settled_rss_mb(pids)  # every session open, none clicking yet
    await clock.wait_open()
    await measure_window(users, pids, point, driver_cpu=time.process_time)


async def drive_browser(args, url: str, pids: list[int], sessions: int, point: Point) -> None:
    """``vector-text`` in Chromium: bench_load.py's sessions, this benchmark's window."""
    from playwright.async_api import async_playwright

    from benchmarks.browser_session import Session, browser_cpu
    from scripts.local_app import CHROMIUM, CHROMIUM_ARGS

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        cdp = await browser.new_browser_cdp_session()

        async def new_session(index: int) -> Session:
            context = await browser.new_context(viewport={"width": 1400, "height": 1600})
            return Session(index, await context.new_page(), url, random.Random(index))

        warm = await new_session(-1)
        await warm.open_vector_lab()
        await warm.page.context.close()
        point.rss_baseline_mb = await settled_rss_mb(pids)
        clock = Clock(time.monotonic() + args.ramp + 10.0, 60.0 * args.minutes)

        async def user(index: int) -> None:
            session = await new_session(index)
            session.next_value = 1000.0 * (index + 1)
            await asyncio.sleep(session.rng.uniform(0.0, args.ramp))
            start = time.perf_counter()
            try:
                await session.open_vector_lab()
            except Exception as error:  # noqa: BLE001 (a timeout: counted)
                point.errors.append(f"browser {index} open: {type(error).__name__}")
                return
            point.opens.append(time.perf_counter() - start)
            await clock.wait_open()
            while clock.open():
                await asyncio.sleep(session.rng.uniform(*THINK_S))
                start = time.perf_counter()
                try:
                    chart_ms = await session.change_vector()  # returns once the page is idle
                except Exception as error:  # noqa: BLE001
                    point.errors.append(f"browser {index}: {type(error).__name__}: {error}")
                    return
                point.samples.append(Sample("vector_lab", "change", time.perf_counter() - start))
                point.chart_ms.append(chart_ms)
            if await session.exceptions():
                point.errors.append(f"browser {index}: an exception shown")

        async def chromium_cpu() -> float:
            return sum((await browser_cpu(cdp)).values())

        users = [asyncio.create_task(user(i)) for i in range(sessions)]
        await asyncio.sleep(max(0.0, clock.start - 6.5 - time.monotonic()))
        point.rss_open_mb = await settled_rss_mb(pids)
        await clock.wait_open()
        await measure_window(users, pids, point, driver_cpu=chromium_cpu)
        await browser.close()


def run_point(args, sessions: int) -> Point:
    point = Point(sessions, args.processes, args.driver)
    log = tempfile.NamedTemporaryFile("w+", prefix="normscope-sessions-", suffix=".log")
    python = str(ROOT / ".venv" / "bin" / "python")
    point.load = (os.getloadavg()[0], 0.0)
    if args.processes == 1:
        port = free_port()
        process = start_server(port, log, python)
        url, pids = f"http://127.0.0.1:{port}", [process.pid]
        try:
            wait_healthy(url, process, 120.0)
        except BaseException:
            process.terminate()
            raise
        stop = process.terminate
    else:
        server = start_class(args.processes, stdout=log, python=python)
        url, pids, stop = server.url, [a.pid for a in server.apps], server.close
        point.balancer_pid = server.balancer.pid
    driver = drive_browser if args.driver == "browser" else drive_protocol
    try:
        asyncio.run(driver(args, url, pids, sessions, point))
    finally:
        stop()
    point.load = (point.load[0], os.getloadavg()[0])
    return point


# --- the report ---------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return "" if math.isnan(seconds) else f"{1e3 * seconds:.0f}"


def one_decimal(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.1f}"


def report(args, points: list[Point]) -> None:
    print(
        f"{os.cpu_count()} CPUs; scenario {args.scenario}, driver {args.driver}, "
        f"{args.minutes:g} min window, think {THINK_S[0]:g}-{THINK_S[1]:g} s"
    )
    print()
    print(
        "| sessions | processes | interactions | per s | p50 ms | p95 ms | errors "
        "| server CPU per interaction ms | server cores busy | RSS baseline MB "
        "| RSS with sessions MB | RSS peak MB | driver CPU s | balancer CPU s "
        "| machine cores busy | load avg |"
    )
    print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    for p in points:
        latencies = [s.seconds for s in p.samples]
        n = len(latencies)
        print(
            f"| {p.sessions} | {p.processes} | {n} | {n / p.window_s:.2f} | "
            f"{ms(statistics.median(latencies) if latencies else math.nan)} | "
            f"{ms(nearest_rank(latencies, 0.95))} | {len(p.errors)} | "
            f"{1e3 * p.server_cpu_s / max(n, 1):.0f} | {p.server_cpu_s / p.window_s:.2f} | "
            f"{p.rss_baseline_mb:.0f} | {p.rss_open_mb:.0f} | {p.rss_peak_mb:.0f} | "
            f"{p.driver_cpu_s:.1f} | {one_decimal(p.balancer_cpu_s)} | "
            f"{p.machine_busy:.2f} | {p.load[0]:.1f} → {p.load[1]:.1f} |"
        )
    if len({p.sessions for p in points}) > 1:
        # one session costs less than the memory a warm-up frees late (tens of MB): read it
        # as the slope of the servers' memory, all sessions open, against their number
        slope = statistics.linear_regression(
            [p.sessions for p in points], [p.rss_open_mb for p in points]
        ).slope
        print(f"\nMemory per open session (slope across the points): {slope:.2f} MB")
    print()
    print("| sessions | processes | page | kind | n | p50 ms | p95 ms |")
    print("|--:|--:|---|---|--:|--:|--:|")
    for p in points:
        groups: dict[tuple[str, str], list[float]] = {}
        for s in p.samples:
            groups.setdefault((s.page, s.kind), []).append(s.seconds)
        if p.opens:
            groups[("(all)", "first view")] = p.opens
        if p.chart_ms:
            groups[("vector_lab", "to chart drawn")] = [v / 1e3 for v in p.chart_ms]
        for (page, kind), values in sorted(groups.items()):
            print(
                f"| {p.sessions} | {p.processes} | {page} | {kind} | {len(values)} | "
                f"{ms(statistics.median(values))} | {ms(nearest_rank(values, 0.95))} |"
            )
    for p in points:
        for error in p.errors[:10]:
            print(f"- {p.sessions} sessions: ERROR {error}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="10", help="comma-separated: one point each")
    parser.add_argument("--processes", type=int, default=1, help="app processes (HAProxy >1)")
    parser.add_argument("--minutes", type=float, default=5.0, help="the measured window")
    parser.add_argument("--ramp", type=float, default=30.0, help="seconds to open sessions")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="class")
    parser.add_argument("--driver", choices=("protocol", "browser"), default="protocol")
    args = parser.parse_args()
    if args.driver == "browser" and args.scenario != "vector-text":
        parser.error("--driver browser runs --scenario vector-text only")
    points = []
    for sessions in (int(s) for s in args.sessions.split(",")):
        print(f"{sessions} sessions on {args.processes} process(es)...", file=sys.stderr)
        points.append(run_point(args, sessions))
        p = points[-1]
        print(f"  {len(p.samples)} interactions, {len(p.errors)} errors", file=sys.stderr)
    report(args, points)
    return 0


if __name__ == "__main__":
    sys.exit(main())
