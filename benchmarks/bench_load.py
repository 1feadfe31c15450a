"""Benchmark: one NormScope server under a workshop's load — N browser sessions at once.

One server, started as ``scripts/run.sh`` starts it (``scripts/serve.py``, through
``scripts/local_app.py``); one headless Chromium with one browser context per session (so
each is its own Streamlit session, as N people on N laptops would be).  Phases, in order:

1. ``alone``: one session changes the Vector Lab's input ``--changes`` times; the others
   are open and idle.  A change = type a new vector into "Vectors (one per line)", commit
   with Ctrl+Enter, clock stopped when plotly's graph holds the new input (the technique of
   ``bench_app.py``), then wait for the rerun to finish and think 0.5-1.5 s.  Every value
   is new, so every change computes (no cache hit).
2. ``idle``: N-1 sessions change the Vector Lab at once, no training or heavy work: the
   idle server's latency that phase 6 is judged against.
3. ``train alone``: one session opens the Depth page's training lab through a share link
   (``dp_steps=50``, short runs) and presses "Train both runs" (key ``dp_train``): two runs.
   The server process's CPU time (user + system, ``/proc``) from the click to both results
   shown is one training's worth, measured here, in this run.
4. ``train identical``: all N sessions open one other link of the same cost (only the
   learning rate differs, so nothing is cached yet) and press Train together.
   ``ui/compute.py`` single-flight must compute each run once: the CPU time should be about
   phase 3's, not N times it (what remains is N pages redrawing their progress).
5. ``train different + Vector Lab``: half the sessions start trainings that all differ
   (queued beyond the core count), the other half change the Vector Lab meanwhile.
6. ``heavy link``: one session opens the heaviest accepted Depth link (L = 1000,
   d = 512, T = 512, Pre-LN); the page must show an estimate and a button instead of
   computing; the session presses it; meanwhile N-1 sessions change the Vector Lab until
   the simulation is drawn.  Their p95 must stay within 2x of phase 2's.

The server process's CPU time and Chromium's (all its processes, through CDP) are given for
each phase: here the N pages draw on the same cores as the server, which a workshop's
laptops would not.  Errors (must be 0): an exception shown on any page (``stException``)
and any wait that timed out.  JavaScript errors of the pages are counted apart.  Latency
percentiles are nearest-rank.  The machine's load is printed: say what else ran.

Run:  .venv/bin/python benchmarks/bench_load.py [--sessions 10] [--changes 12]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: make the project's scripts/ importable

from benchmarks.browser_session import (  # noqa: E402
    JOB_TIMEOUT_MS,
    PAGE_TIMEOUT_MS,
    Session,
    browser_cpu,
)
from scripts.local_app import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    free_port,
    process_cpu_s,
    start_server,
    wait_healthy,
)

SERVER_DEADLINE_S = 60.0
THINK_S = (0.5, 1.5)  # a person's pause between two changes
ALONE_LR, IDENTICAL_LR = 0.001, 0.002  # same cost, different specs: nothing cached across
DIFFERENT_RUNS = (  # (learning rate, steps): every one a spec of its own
    (0.0003, 50),
    (0.003, 50),
    (0.005, 50),
    (0.01, 50),
    (0.0003, 100),
)
HEAVY_LINK = "/depth?lang=en&dp_layers=1000&dp_d=512&dp_tokens=512&dp_placements=pre"
LAB_ONLY = ("alone", "idle")  # phases where the server does nothing but Vector Lab changes
P95_RATIO_TARGET = 2.0  # heavy work must not slow the others past 2x idle


def nearest_rank(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@dataclass
class Phase:
    name: str
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: float = 0.0
    browser_cpu_s: float = 0.0  # all of Chromium's processes: the N pages drawing
    job_cpu_s: float = math.nan  # server CPU from the Train click(s) to every result shown
    notes: list[str] = field(default_factory=list)


async def vector_lab_loop(
    session: Session, phase: Phase, changes: int, until: asyncio.Event | None = None
) -> None:
    """``changes`` Vector Lab changes with think time; with ``until``, go on until it is set."""
    done = 0
    while done < changes or (until is not None and not until.is_set()):
        try:
            phase.latencies_ms.append(await session.change_vector())
        except Exception as error:  # noqa: BLE001 (a timeout or a vanished element: counted)
            phase.errors.append(f"session {session.index}: {type(error).__name__}: {error}")
            return
        done += 1
        await asyncio.sleep(session.rng.uniform(*THINK_S))


async def guarded(phase: Phase, session: Session, coroutine):
    try:
        return await coroutine
    except Exception as error:  # noqa: BLE001 (counted, reported, the benchmark goes on)
        phase.errors.append(f"session {session.index}: {type(error).__name__}: {error}")
        return None


async def check_exceptions(phase: Phase, sessions: list[Session]) -> None:
    counts = await asyncio.gather(*(s.exceptions() for s in sessions))
    for session, count in zip(sessions, counts):
        if count:
            phase.errors.append(f"session {session.index}: {count} exception(s) shown")


async def run_phase(name: str, pid: int, cdp, sessions: list[Session], body) -> Phase:
    phase = Phase(name)
    cpu, browser, start = process_cpu_s(pid), await browser_cpu(cdp), time.perf_counter()
    await body(phase)
    phase.wall_s = time.perf_counter() - start
    phase.cpu_s = process_cpu_s(pid) - cpu
    after = await browser_cpu(cdp)
    phase.browser_cpu_s = sum(t - browser.get(p, 0.0) for p, t in after.items())
    await check_exceptions(phase, sessions)
    print(
        f"  {name}: {phase.wall_s:.1f} s wall, server CPU {phase.cpu_s:.1f} s, "
        f"{len(phase.latencies_ms)} changes, {len(phase.errors)} errors, "
        f"load {os.getloadavg()[0]:.1f}",
        file=sys.stderr,
        flush=True,
    )
    return phase


async def benchmark(args, pid: int, base_url: str, browser) -> list[Phase]:
    rng = random.Random(0)
    sessions = []
    for index in range(args.sessions):
        context = await browser.new_context(
            viewport={"width": 1400, "height": 1600}, locale="en-US"
        )
        page = await context.new_page()
        sessions.append(Session(index, page, base_url, random.Random(rng.random())))
    first, others = sessions[0], sessions[1:]
    half = args.sessions // 2

    async def open_all(phase: Phase) -> None:
        await asyncio.gather(*(guarded(phase, s, s.open_vector_lab()) for s in sessions))

    async def alone(phase: Phase) -> None:
        await vector_lab_loop(first, phase, args.changes)

    async def idle(phase: Phase) -> None:
        await asyncio.gather(*(vector_lab_loop(s, phase, args.changes) for s in others))

    async def train_alone(phase: Phase) -> None:
        await guarded(phase, first, first.open_training(ALONE_LR))
        await first.idle()
        cpu = process_cpu_s(pid)
        seconds = await guarded(phase, first, first.train())
        phase.job_cpu_s = process_cpu_s(pid) - cpu
        phase.notes.append(f"both runs shown after {seconds or float('nan'):.1f} s")

    async def train_identical(phase: Phase) -> None:
        await asyncio.gather(*(guarded(phase, s, s.open_training(IDENTICAL_LR)) for s in sessions))
        await asyncio.gather(*(s.idle() for s in sessions))
        cpu = process_cpu_s(pid)
        seconds = await asyncio.gather(*(guarded(phase, s, s.train()) for s in sessions))
        phase.job_cpu_s = process_cpu_s(pid) - cpu
        shown = [s for s in seconds if s is not None]
        if shown:
            phase.notes.append(f"both runs shown after {min(shown):.1f}-{max(shown):.1f} s")

    async def train_different(phase: Phase) -> None:
        trainers, users = sessions[:half], sessions[half:]
        runs = [DIFFERENT_RUNS[i % len(DIFFERENT_RUNS)] for i in range(len(trainers))]
        await asyncio.gather(
            *(
                guarded(phase, s, s.open_training(lr, steps))
                for s, (lr, steps) in zip(trainers, runs)
            ),
            *(guarded(phase, s, s.open_vector_lab()) for s in users),
        )
        finished = asyncio.Event()

        async def all_trainings() -> None:
            seconds = await asyncio.gather(*(guarded(phase, s, s.train()) for s in trainers))
            finished.set()
            shown = [s for s in seconds if s is not None]
            if shown:
                phase.notes.append(f"runs shown after {min(shown):.1f}-{max(shown):.1f} s")

        await asyncio.gather(
            all_trainings(), *(vector_lab_loop(s, phase, args.changes, finished) for s in users)
        )

    async def heavy(phase: Phase) -> None:
        await asyncio.gather(*(guarded(phase, s, s.open_vector_lab()) for s in others))
        await guarded(phase, first, first.open(HEAVY_LINK))
        button = first.page.locator(".st-key-dp_simulate button")
        try:  # a loaded server may still be drawing the page (or rerunning it) when idle shows
            await button.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        except Exception as error:  # noqa: BLE001
            phase.errors.append(f"heavy link: no estimate-and-button ({type(error).__name__})")
            return
        if await first.page.locator(".st-key-dp_residual").count():
            phase.errors.append("heavy link: the simulation was drawn without a click")
            return
        label = " ".join((await button.inner_text()).replace("play_arrow", "").split())
        phase.notes.append(f'the heavy link showed "{label}" and nothing computing')
        # the page's own estimate scales with how fast this server is running now: a run
        # past twice that is an error, a slow machine is not
        estimate = re.search(r"about ([\d,.]+) s", label)
        estimate_s = float(estimate.group(1).replace(",", "")) if estimate else 0.0
        timeout_ms = max(JOB_TIMEOUT_MS, 2_000 * estimate_s)
        finished = asyncio.Event()

        async def simulate() -> None:
            start = time.perf_counter()
            try:
                await button.click(timeout=PAGE_TIMEOUT_MS)
                await first.page.locator(".st-key-dp_residual .main-svg").first.wait_for(
                    state="visible", timeout=timeout_ms
                )
                phase.notes.append(f"simulation drawn after {time.perf_counter() - start:.1f} s")
            except Exception as error:  # noqa: BLE001
                phase.errors.append(f"heavy session: {type(error).__name__}: {error}")
            finally:
                finished.set()

        await asyncio.gather(
            simulate(), *(vector_lab_loop(s, phase, args.changes, finished) for s in others)
        )

    cdp = await browser.new_browser_cdp_session()
    phases = []
    for name, body in (
        ("open", open_all),
        ("alone", alone),
        ("idle", idle),
        ("train alone", train_alone),
        ("train identical", train_identical),
        ("train different + Vector Lab", train_different),
        ("heavy link + Vector Lab", heavy),
    ):
        phases.append(await run_phase(name, pid, cdp, sessions, body))
    js_errors = sum(len(s.js_errors) for s in sessions)
    phases[-1].notes.append(f"JavaScript errors over the whole run: {js_errors}")
    return phases


def report(args, phases: list[Phase], load: tuple[float, float]) -> bool:
    by_name = {p.name: p for p in phases}
    print(
        f"{os.cpu_count()} CPUs; {args.sessions} sessions in one Chromium; "
        f"1-minute load average {load[0]:.2f} before, {load[1]:.2f} after"
    )
    print()
    print(
        "| phase | sessions | wall s | server CPU s | browser CPU s | Vector Lab changes "
        "| p50 ms | p95 ms | server CPU per change ms | errors |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    counts = {
        "open": args.sessions,
        "alone": 1,
        "idle": args.sessions - 1,
        "train alone": 1,
        "train identical": args.sessions,
        "train different + Vector Lab": args.sessions,
        "heavy link + Vector Lab": args.sessions,
    }
    for phase in phases:
        samples = phase.latencies_ms
        p50 = f"{statistics.median(samples):.0f}" if samples else ""
        p95 = f"{nearest_rank(samples, 0.95):.0f}" if samples else ""
        # only where the Vector Lab is all the server does
        per_change = f"{1e3 * phase.cpu_s / len(samples):.0f}" if phase.name in LAB_ONLY else ""
        print(
            f"| {phase.name} | {counts[phase.name]} | {phase.wall_s:.1f} | {phase.cpu_s:.1f} | "
            f"{phase.browser_cpu_s:.1f} | {len(samples) or ''} | {p50} | {p95} | {per_change} | "
            f"{len(phase.errors)} |"
        )
    errors = sum(len(p.errors) for p in phases)
    alone = by_name["train alone"].job_cpu_s
    identical = by_name["train identical"].job_cpu_s
    cpu_ratio = identical / alone if alone else float("nan")
    idle = by_name["idle"].latencies_ms
    loaded = by_name["heavy link + Vector Lab"].latencies_ms
    p95_ratio = nearest_rank(loaded, 0.95) / nearest_rank(idle, 0.95) if idle and loaded else 0
    print()
    print("| check | measured | target |")
    print("|---|--:|---|")
    verdict = "met" if not errors else "MISSED"
    print(f"| errors (exceptions shown, timeouts) | {errors} | 0 ({verdict}) |")
    print(
        f"| server CPU, {args.sessions} identical trainings / one alone | "
        f"{identical:.1f} s / {alone:.1f} s = {cpu_ratio:.2f} | ~1 run's worth, not "
        f"{args.sessions} |"
    )
    verdict = "met" if p95_ratio <= P95_RATIO_TARGET else "MISSED"
    print(
        f"| Vector Lab p95 beside the heavy link / idle p95 | {p95_ratio:.2f} | "
        f"<= {P95_RATIO_TARGET:.0f} ({verdict}) |"
    )
    print()
    for phase in phases:
        for note in phase.notes:
            print(f"- {phase.name}: {note}")
        for error in phase.errors[:10]:
            print(f"- {phase.name}: ERROR {error}")
    return not errors and p95_ratio <= P95_RATIO_TARGET and cpu_ratio < 2.0


async def main_async(args) -> int:
    from playwright.async_api import async_playwright

    log = tempfile.NamedTemporaryFile("w+", prefix="normscope-load-", suffix=".log", delete=False)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    load_before = os.getloadavg()[0]
    process = start_server(port, log, str(ROOT / ".venv" / "bin" / "python"))
    try:
        wait_healthy(base_url, process, SERVER_DEADLINE_S)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                phases = await benchmark(args, process.pid, base_url, browser)
            finally:
                await browser.close()
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    ok = report(args, phases, (load_before, os.getloadavg()[0]))
    print(f"\nserver log: {log.name}", file=sys.stderr)
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10, help="browser sessions (N)")
    parser.add_argument("--changes", type=int, default=12, help="Vector Lab changes each")
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 2
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
