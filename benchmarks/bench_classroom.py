"""Benchmark: sixty learners commit their predictions within ten seconds; the instructor's chart
polls the counts.  Are all votes recorded, and is the chart current within 2 s?

The class store is hit directly (``classroom.store.ClassStore``), as the app's pages will
call it; the browser part is not measured here.  Two set-ups:

- ``sqlite``: one process (one app server) with a SQLite file in a temporary folder;
- ``postgresql``: two processes (two app servers behind a balancer) sharing a PostgreSQL
  server started for the run (``classroom.local_postgres``, PostgreSQL's default
  durability: fsync and synchronous commit on), half the learners in each.

Each learner is a thread: it joins before the clock starts, commits one vote at a random
moment of the ``--seconds`` window (uniform; a sixth of them change their mind once, later
in the window: a replacing vote), and meanwhile polls its own view every 2 s as a page
following the class would.  The instructor's view (one thread, in the first process) polls
``room()`` every ``--poll`` seconds.

Measured: each vote's latency; each poll's latency and CPU time (the polling thread's own,
``time.thread_time``); the chart's staleness per vote: from the vote's commit to the end of
the first poll that started after it (a poll reads what was committed before it started,
which the script checks: every poll counts at least the first votes committed before it
began, at most those committed before it ended); and at the end, that the counts equal the
learners' last choices.  Then the poll's cost alone: ``--reps`` back-to-back ``room()`` and
``learner_view()`` calls on the finished class.

Run:  .venv/bin/python benchmarks/bench_classroom.py [--setup sqlite|postgresql|both]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classroom.db import Database  # noqa: E402
from classroom.local_postgres import temporary_postgres  # noqa: E402
from classroom.store import ClassStore  # noqa: E402
from ui.lessons.catalog import ANSWER_IDS, LESSON_IDS, OPTIONS  # noqa: E402

LESSON = LESSON_IDS[2]
LEARNER_POLL_S = 2.0  # how often a learner's page asks for its view


def _percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))]


def _worker(target, code, key, learners, first, seconds, poll_s, seed, barrier, results):
    """One app process: ``learners`` learner threads (numbered from ``first``), and the
    instructor's poller if ``poll_s``.  Puts its measurements on ``results``."""
    store = ClassStore(Database(target), ANSWER_IDS)
    rng = random.Random(seed)
    tokens = [store.join(code, f"10.{first // 250}.{first % 250}.{i}") for i in range(learners)]
    plans, offsets = [], [rng.uniform(0, LEARNER_POLL_S) for _ in range(learners)]
    for i in range(learners):
        at = rng.uniform(0, seconds)
        choice = rng.choices(OPTIONS, weights=(1, 4, 2, 1))[0]
        plans.append([(at, choice)])
        if i % 6 == 0:  # a change of mind, later in the window
            plans[-1].append((rng.uniform(at, seconds), rng.choice(OPTIONS)))
    votes, views, polls, errors = [], [], [], []
    barrier.wait()
    start = time.time()
    end = start + seconds + LEARNER_POLL_S

    def learner(token, plan, offset):
        try:
            next_view = start + offset
            for n, (at, choice) in enumerate([*plan, (None, None)]):
                while True:  # poll the view until the next vote is due
                    due = start + at if at is not None else end
                    if next_view >= due:
                        break
                    time.sleep(max(0.0, next_view - time.time()))
                    t0 = time.time()
                    store.learner_view(code, token, LESSON)
                    views.append(time.time() - t0)
                    next_view += LEARNER_POLL_S
                if at is None:
                    return
                time.sleep(max(0.0, due - time.time()))
                t0 = time.time()
                store.vote(code, token, f"{LESSON}.{choice}")
                votes.append((time.time(), time.time() - t0, n == 0))
        except Exception as error:  # noqa: BLE001  (counted and reported)
            errors.append(repr(error))

    def instructor():
        try:
            due = start
            while due < end:
                time.sleep(max(0.0, due - time.time()))
                t0, cpu0 = time.time(), time.thread_time()
                room = store.room(code, key, LESSON)
                polls.append((t0, time.time(), time.thread_time() - cpu0, room.answered[0]))
                due += poll_s
        except Exception as error:  # noqa: BLE001
            errors.append(repr(error))

    threads = [threading.Thread(target=learner, args=a) for a in zip(tokens, plans, offsets)]
    if poll_s:
        threads.append(threading.Thread(target=instructor))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    final = {token: plan[-1][1] for token, plan in zip(tokens, plans)}
    results.put({"votes": votes, "views": views, "polls": polls, "errors": errors, "final": final})
    store.database.close()


def scenario(target, processes: int, learners: int, seconds: float, poll_s: float, reps: int):
    store = ClassStore(Database(target), ANSWER_IDS)
    new = store.create_class("192.0.2.1")
    context = multiprocessing.get_context("spawn")
    share = [learners // processes + (p < learners % processes) for p in range(processes)]
    first = [sum(share[:p]) for p in range(processes)]
    if processes == 1:
        import queue

        results, barrier = queue.Queue(), threading.Barrier(1)
        _worker(target, new.code, new.instructor_key, learners, 0, seconds, poll_s, 0, barrier,
                results)  # fmt: skip
        parts = [results.get()]
    else:
        results, barrier = context.Queue(), context.Barrier(processes)
        workers = [
            context.Process(
                target=_worker,
                args=(
                    target,
                    new.code,
                    new.instructor_key,
                    share[p],
                    first[p],
                    seconds,
                    poll_s if p == 0 else 0,
                    p,
                    barrier,
                    results,
                ),
            )  # fmt: skip
            for p in range(processes)
        ]
        for worker in workers:
            worker.start()
        parts = [results.get(timeout=600) for _ in workers]
        for worker in workers:
            worker.join()
    votes = sorted(v for part in parts for v in part["votes"])
    views = [v for part in parts for v in part["views"]]
    polls = sorted(p for part in parts for p in part["polls"])
    errors = [e for part in parts for e in part["errors"]]
    final = {token: choice for part in parts for token, choice in part["final"].items()}

    # staleness of each learner's first vote (a change of mind leaves "answered" as it was)
    firsts = [t for t, _, first in votes if first]
    stale, consistent = [], True
    for t_commit in firsts:
        shown = [end for t0, end, _, _ in polls if t0 > t_commit]
        stale.append(shown[0] - t_commit if shown else float("inf"))
    for t0, t1, _, answered in polls:
        before = sum(1 for t in firsts if t < t0)
        by_end = sum(1 for t in firsts if t <= t1)
        consistent &= before <= answered <= by_end
    room = store.room(new.code, new.instructor_key, LESSON)
    expected = {option: list(final.values()).count(option) for option in OPTIONS}

    # the poll's cost alone, on the finished class
    token = store.join(new.code, "192.0.2.9")
    costs = {}
    for name, call in (
        ("room", lambda: store.room(new.code, new.instructor_key, LESSON)),
        ("learner_view", lambda: store.learner_view(new.code, token, LESSON)),
    ):
        call()
        wall, cpu = [], []
        for _ in range(reps):
            t0, c0 = time.perf_counter(), time.thread_time()
            call()
            wall.append(time.perf_counter() - t0)
            cpu.append(time.thread_time() - c0)
        costs[name] = (statistics.median(wall), _percentile(wall, 0.95), statistics.median(cpu))
    store.database.close()
    return {
        "learners": learners,
        "votes": len(votes),
        "recorded": room.answered[0],
        "counts_match": room.counts[0] == expected,
        "errors": errors,
        "vote_ms": [1e3 * d for _, d, _ in votes],
        "view_ms": [1e3 * d for d in views],
        "poll_ms": [1e3 * (t1 - t0) for t0, t1, _, _ in polls],
        "poll_cpu_ms": [1e3 * c for _, _, c, _ in polls],
        "stale_s": stale,
        "consistent": consistent,
        "polls": len(polls),
        "costs": costs,
    }


def row(name: str, r: dict) -> str:
    def p(values, q):
        return f"{_percentile(values, q):.1f}"

    return (
        f"| {name} | {r['learners']} | {r['votes']} | {r['recorded']} | "
        f"{'yes' if r['counts_match'] else 'NO'} | {len(r['errors'])} | "
        f"{p(r['vote_ms'], 0.5)} / {p(r['vote_ms'], 0.95)} / {max(r['vote_ms']):.1f} | "
        f"{p(r['view_ms'], 0.5)} / {p(r['view_ms'], 0.95)} | "
        f"{p(r['poll_ms'], 0.5)} / {max(r['poll_ms']):.1f} | "
        f"{statistics.median(r['stale_s']):.2f} / {max(r['stale_s']):.2f} | "
        f"{'yes' if r['consistent'] else 'NO'} |"
    )


def cost_row(name: str, r: dict) -> str:
    cells = [
        f"{1e3 * wall:.2f} / {1e3 * p95:.2f} / {1e3 * cpu:.2f}"
        for wall, p95, cpu in r["costs"].values()
    ]
    return f"| {name} | {' | '.join(cells)} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--learners", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--poll", type=float, default=1.0, help="instructor's poll interval, s")
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args()
    rows, costs = [], []
    if args.setup in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as folder:
            r = scenario(Path(folder) / "classroom.sqlite3", 1, args.learners, args.seconds,
                         args.poll, args.reps)  # fmt: skip
        rows.append(row("SQLite, 1 process", r))
        costs.append(cost_row("SQLite", r))
        print(rows[-1], *r["errors"][:3], sep="\n", flush=True)
    if args.setup in ("postgresql", "both"):
        with temporary_postgres(durable=True) as url:
            r = scenario(url, 2, args.learners, args.seconds, args.poll, args.reps)
        rows.append(row("PostgreSQL, 2 processes", r))
        costs.append(cost_row("PostgreSQL", r))
        print(rows[-1], *r["errors"][:3], sep="\n", flush=True)
    load = os.getloadavg()[0]
    print()
    print(
        f"`benchmarks/bench_classroom.py --learners {args.learners} --seconds {args.seconds:g}"
        f" --poll {args.poll:g}` · {time.strftime('%Y-%m-%d')} · {os.cpu_count()}-core "
        f"{platform.machine()} CPU · SQLite {sqlite3.sqlite_version} · 1-minute load average "
        f"{load:.1f} at the end."
    )
    print()
    print(
        "| set-up | learners | votes sent | recorded | counts = last choices | errors |"
        " vote ms p50 / p95 / max | learner view ms p50 / p95 | poll ms p50 / max |"
        " chart stale s median / max | polls consistent |"
    )
    print("|---|--:|--:|--:|---|--:|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("| database | room() ms p50 / p95 / CPU | learner_view() ms p50 / p95 / CPU |")
    print("|---|---|---|")
    print("\n".join(costs))


if __name__ == "__main__":
    main()
