"""Benchmark: a class through the app itself.  Sixty learners commit within ten seconds on the
Lessons page; is every vote recorded, and how old is what the instructor's page shows?

One NormScope server (``scripts/serve.py``, SQLite in a temporary folder).  The learners are
Streamlit sessions without a browser (``benchmarks/streamlit_session.py``: Streamlit's own
protocol over its websocket): each opens the join link and, as the browser's frontend does,
reruns the page's polling fragment at the interval the server asks for (``auto_rerun``), so
the server carries sixty learners' polls.  At a uniformly random moment of the window each
picks an option and clicks Commit (two reruns, as in a browser).

The instructor is a real Chromium page on the Class page (1024 x 768, presentation mode),
whose chart fragment reruns every second.  The script reads the page's line of counts every
50 ms: "shown after" is, per vote, from the end of the learner's Commit run (the vote is
then stored) to the first moment the instructor's page shows a count that includes it.

Meanwhile the instructor clicks "Counts as CSV" every ``--download-every`` seconds (0: never)
and once more after the last vote: each click's file must arrive (a file written at the
click used to be deleted before the browser fetched it on a server this busy:
``ui/held_downloads.py``), and the last one must hold the recorded counts.

``--processes N`` (N > 1): N servers behind HAProxy (``scripts/serve_class.py``) sharing a
PostgreSQL server started for the run (``classroom.local_postgres``, PostgreSQL's default
durability), as a class larger than one core is served; a learner's websocket stays on the
process it reached, and the instructor's page may be on another.

Run:  .venv/bin/python benchmarks/bench_class_ui.py [--learners 60] [--seconds 10] [--processes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import io
import os
import random
import re
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.streamlit_session import AppSession, ProtocolError  # noqa: E402
from classroom.local_postgres import temporary_postgres  # noqa: E402
from scripts.local_app import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    free_port,
    process_cpu_s,
    start_server,
    wait_healthy,
)
from scripts.serve_class import start_class  # noqa: E402
from ui.classroom import COOKIE_PREFIX  # noqa: E402

LESSON = "why_normalize"
OPTIONS = "abcd"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))]


async def learner(url: str, code: str, at_s: float, start: float, out: dict) -> None:
    # the learner token a browser makes before it joins (``ui/widgets/class_learner.py``),
    # in the class's cookie, as a browser that opened the join link before holds it
    session = AppSession(url, cookies={COOKIE_PREFIX + code: secrets.token_urlsafe(16)})
    await session.connect()
    lock = asyncio.Lock()
    polls: list[float] = []
    done = asyncio.Event()

    async def poll_loop() -> None:
        try:
            await polling()
        except ProtocolError as error:
            out["errors"].append(f"poll: {error}")

    async def polling() -> None:
        while not done.is_set():
            for fragment, interval in list(session.fragments.items()):
                await asyncio.sleep(interval)
                if done.is_set():
                    return
                async with lock:
                    if fragment in session.fragments:  # not replaced by a full run meanwhile
                        polls.append((await session.rerun_fragment(fragment)).seconds)
            if not session.fragments:
                await asyncio.sleep(0.5)

    try:
        async with lock:
            await session.open("lessons", f"lang=en&ls_class={code}")
        poller = asyncio.create_task(poll_loop())
        await asyncio.sleep(max(0.0, start + at_s - time.perf_counter()))
        option = random.choice(OPTIONS)
        async with lock:
            label = next(o for o in session.widget(f"ls_pick_{LESSON}").options if o[1] == option)
            await session.change(f"ls_pick_{LESSON}", label)
            run = await session.click(f"ls_commit_{LESSON}")
        out["committed"].append((time.perf_counter(), option))
        out["commit_s"].append(run.seconds)
        await asyncio.sleep(3.0)  # keep polling while the instructor's page catches up
        done.set()
        await poller
        out["polls"].extend(polls)
    except ProtocolError as error:
        out["errors"].append(str(error))
    finally:
        await session.close()


async def watch(page, stop: asyncio.Event, seen: list[tuple[float, int]]) -> None:
    """(time, answered) each time the instructor's line of counts changes."""
    last = None
    while not stop.is_set():
        try:
            text = await page.locator(".st-key-cl_counts").last.inner_text(timeout=1000)
        except Exception:  # redrawn between the lookup and the read
            text = ""
        found = re.search(r"(\d+) answered", text)
        if found and int(found.group(1)) != last:
            last = int(found.group(1))
            seen.append((time.perf_counter(), last))
        await asyncio.sleep(0.05)


async def download(page) -> str | Exception:
    """Click "Counts as CSV": the file's text, or why it did not arrive."""
    try:
        async with page.expect_download(timeout=30_000) as started:
            await page.get_by_role("button", name="Counts as CSV").click()
        return Path(await (await started.value).path()).read_text()
    except Exception as error:  # Playwright's "Download.path: canceled", a timeout
        return error


async def downloading(page, every_s: float, stop: asyncio.Event, files: list) -> None:
    while every_s > 0 and not stop.is_set():
        files.append(await download(page))
        await asyncio.sleep(every_s)


def _lesson_counts(csv_text: str) -> dict[str, int]:
    """The first round's votes per option of ``LESSON`` in the class's CSV (none: left out)."""
    rows = csv.DictReader(io.StringIO(csv_text))
    first = (r for r in rows if r["lesson"] == LESSON and r["round"] == "1")
    return {r["option"]: int(r["votes"]) for r in first if int(r["votes"])}


@contextlib.contextmanager
def _servers(processes: int):
    """(url, app pids) of one server (SQLite) or ``processes`` behind HAProxy (PostgreSQL)."""
    if processes == 1:
        port = free_port()
        server = start_server(port)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, server)
            yield url, [server.pid]
        finally:
            server.terminate()
            server.wait(10)
        return
    with temporary_postgres(durable=True) as database:
        os.environ["NORMSCOPE_DATABASE_URL"] = database
        served = start_class(processes)
        try:
            yield served.url, [app.pid for app in served.apps]
        finally:
            served.close()


async def main_async(args) -> None:
    from playwright.async_api import async_playwright

    data = tempfile.mkdtemp(prefix="bench_class_ui_")
    os.environ["NORMSCOPE_DATA_DIR"] = data
    from classroom.store import open_store
    from ui.lessons.catalog import ANSWER_IDS

    out = {"committed": [], "commit_s": [], "polls": [], "errors": [], "files": []}
    seen: list[tuple[float, int]] = []
    with _servers(args.processes) as (url, pids):
        store = open_store(ANSWER_IDS)
        new = store.create_class("bench", paced=True)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            page = await browser.new_page(viewport={"width": 1024, "height": 768})
            query = f"lang=en&present=on&cl_code={new.code}&cl_key={new.instructor_key}"
            await page.goto(f"{url}/classroom?{query}", wait_until="commit", timeout=180_000)
            await page.locator(".st-key-cl_counts").first.wait_for(timeout=180_000)
            await page.locator(".st-key-controls_classroom_settings summary").click()
            stop = asyncio.Event()
            watcher = asyncio.create_task(watch(page, stop, seen))
            downloader = asyncio.create_task(
                downloading(page, args.download_every, stop, out["files"])
            )
            cpu_before = sum(process_cpu_s(pid) for pid in pids)
            start = time.perf_counter() + 5.0  # joins first
            moments = [random.uniform(0, args.seconds) for _ in range(args.learners)]
            await asyncio.gather(*(learner(url, new.code, m, start, out) for m in moments))
            cpu = sum(process_cpu_s(pid) for pid in pids) - cpu_before
            wall = time.perf_counter() - start + 5.0
            stop.set()
            await watcher
            await downloader
            last = await download(page) if args.download_every > 0 else None
            await browser.close()
        room = store.room(new.code, new.instructor_key, LESSON)
    recorded = sum(room.counts[0].values())
    expected = {o: sum(1 for _, c in out["committed"] if c == o) for o in OPTIONS}
    order = sorted(t for t, _ in out["committed"])
    shown_after = []
    for index, committed_at in enumerate(order, 1):
        shown = next((t for t, n in seen if n >= index and t >= committed_at), None)
        if shown is not None:
            shown_after.append(shown - committed_at)
    load = os.getloadavg()
    print(
        f"learners {args.learners}, window {args.seconds:g} s, {args.processes} process(es),"
        f" load {load[0]:.1f}/{load[1]:.1f}"
    )
    print(
        f"commits {len(order)}, recorded {recorded}, counts = choices {room.counts[0] == expected}"
    )
    print(f"errors {len(out['errors'])} {out['errors'][:3]}")
    c = out["commit_s"] or [float("nan")]
    print(f"commit run s p50 {statistics.median(c):.2f} p95 {_pct(c, 0.95):.2f} max {max(c):.2f}")
    p = out["polls"]
    if p:
        print(f"learner polls {len(p)}, s p50 {statistics.median(p):.3f} p95 {_pct(p, 0.95):.3f}")
    if shown_after:
        print(
            f"shown after s: median {statistics.median(shown_after):.2f}"
            f" p95 {_pct(shown_after, 0.95):.2f} max {max(shown_after):.2f}"
            f" ({len(shown_after)} of {len(order)} seen)"
        )
    if args.download_every > 0:
        failed = [f for f in out["files"] if isinstance(f, Exception)]
        print(
            f"CSV downloads while voting {len(out['files'])}, arrived"
            f" {len(out['files']) - len(failed)}, failed {len(failed)}"
            f" {[str(f).splitlines()[0] for f in failed[:2]]}"
        )
        arrived = not isinstance(last, Exception)
        print(
            f"last CSV arrived {arrived}, holds the recorded counts"
            f" {arrived and _lesson_counts(last) == {o: n for o, n in room.counts[0].items() if n}}"
        )
    print(f"server CPU (all processes) {cpu:.1f} s over {wall:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--download-every", type=float, default=1.0, help="seconds between CSV clicks; 0: none"
    )
    parser.add_argument(
        "--processes", type=int, default=1, help=">1: behind HAProxy, sharing PostgreSQL"
    )
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
