"""Benchmark: the server's CPU time per interaction, page by page, two checkouts side by side.

What one click costs the server is what bounds a class on one process (every session's
Python runs under one interpreter lock).  For each checkout given (``--before`` and this
one), a server is started as ``scripts/run.sh`` starts it (``scripts/serve.py``, no live
model), one session per page speaks Streamlit's protocol to it
(``benchmarks/streamlit_session.py``: a widget drawn inside a fragment is changed with its
fragment's id, as the browser does), and each page's scripted common interactions are
played (type a vector, move a slider or a number, click a cell, switch a section and back,
pick a token, open a lesson, pick an answer).

- Warm-up: every interaction is played once per value it cycles through, so each result is
  already cached where its value was seen before (a typed vector is new every time:
  that one computes).
- Measured: ``--rounds`` rounds; in each, every interaction of every page, first on one
  server then on the other (the order alternates by round), so both see the same load.
  One interaction's cost is the server process's CPU time (user + system, all threads,
  ``/proc/<pid>/stat``) from just before the request until ``--settle`` seconds after its
  run's ``script_finished`` (the server is otherwise idle).  ``/proc`` counts in clock ticks
  (10 ms): medians are multiples of it; the mean is not.

Reported per page and checkout: interactions, CPU ms median / p95 (nearest rank) / mean,
latency median, and the elements sent per interaction; the load average before and after.
Target (issue: a class of sixty): median <= 50 ms on every page.

Run:  .venv/bin/python benchmarks/bench_interactions.py --before /path/to/older/checkout
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.session_measures import nearest_rank  # noqa: E402
from benchmarks.streamlit_session import AppSession, Widget  # noqa: E402
from scripts.local_app import free_port, process_cpu_s, start_server, wait_healthy  # noqa: E402

QUERY = "lang=en"
TARGET_MS = 50.0


@dataclass(frozen=True)
class Step:
    """One interaction: set widget ``key`` to the next of ``values`` (``None``: a new vector
    each time; a widget's option by its index: ``Pick(i)``)."""

    key: str
    values: tuple
    what: str  # how it reads in the report


@dataclass(frozen=True)
class Pick:
    index: int  # the widget's option at this index (its label differs by language)


def vector(count: int) -> str:
    base = 1000.0 + 17 * count
    return f"{base:g}, {base + 1:g}, {base + 3:g}, {base + 7:g}"


NEW_VECTOR = ("new",)
PAGES: dict[str, tuple[Step, ...]] = {  # page address → its interactions, in order
    "": (  # the Vector Lab is the default page, at "/"
        Step("vl_text", NEW_VECTOR, "type a vector"),
        Step("vl_norm", (Pick(1), Pick(0)), "pick a norm"),
        Step("vl_dtype", (Pick(2), Pick(0)), "pick a dtype"),
    ),
    "axes": (
        Step("ax_cell_t", (1.0, 2.0, 0.0), "click a cell (token)"),
        Step("ax_cell_c", (3.0, 5.0, 0.0), "click a cell (channel)"),
        Step("ax_norm", ((Pick(1),), (Pick(0),)), "pick a norm"),
        Step("ax_section", ((Pick(1),),), "switch section"),
        Step("ax_section", ((Pick(0),),), "switch section back"),
    ),
    "geometry": (
        Step("ge_count", (300.0, 200.0), "move the point count"),
        Step("ge_lines", (True, False), "tick a checkbox"),
        Step("ge_section", ((Pick(2),),), "switch section"),
        Step("ge_section", ((Pick(0),),), "switch section back"),
    ),
    "depth": (
        Step("dp_norm", (Pick(1), Pick(0)), "pick a norm"),
        Step("dp_layers", (12.0, 24.0), "move the depth"),
        Step("dp_final", (True, False), "tick a checkbox"),
        Step("dp_section", ((Pick(2),),), "switch section"),
        Step("dp_section", ((Pick(0),),), "switch section back"),
    ),
    "models": (
        Step("md_family", (Pick(1), Pick(2), Pick(0)), "pick a family"),
        Step("md_example", (Pick(1), Pick(0)), "pick an example"),
        Step("md_tokens", (4096.0, 2048.0), "move the tokens"),
    ),
    "dumps": (
        Step("du_log", (True, False), "tick a checkbox"),
        Step("du_section", ((Pick(2),),), "switch section"),  # LayerNorm vs RMSNorm
        Step("du_token", (3.0, 5.0, 1.0), "pick a token"),
        Step("du_token_layer", (Pick(2), Pick(0)), "pick a layer"),
        Step("du_section", ((Pick(3),),), "switch section"),  # channels
        Step("du_channel_layer", (Pick(3), Pick(0)), "pick a layer (channels)"),
        Step("du_section", ((Pick(0),),), "switch section back"),
    ),
    "kernels": (
        Step("kn_d", (2048.0, 4096.0), "move the width"),
        Step("kn_rdtype", (Pick(1), Pick(0)), "pick a dtype"),
    ),
    "lessons": (
        Step("ls_choose", (Pick(1), Pick(2), Pick(0)), "open a lesson"),
        Step("ls_pick_", (Pick(1), Pick(2)), "pick an answer"),
    ),
    "experiments": (  # before a commit runs the model: a run is bench_experiments.py's
        Step("ex_experiment", (Pick(1), Pick(0)), "pick an experiment"),
        Step("ex_text", (Pick(1), Pick(0)), "pick a text"),
        Step("ex_tokens", (256.0, 512.0), "move the tokens"),
        Step("ex_setting", (Pick(1), Pick(0)), "pick a setting"),
        Step("ex_pick_", (Pick(1), Pick(2)), "pick a prediction"),
    ),
}
NAMES = {"": "vector_lab"}


def value_of(widget: Widget, value, count: int):
    if value == "new":
        return vector(count)
    if isinstance(value, Pick):
        return widget.options[value.index]
    if isinstance(value, tuple):  # a button group: a list of picks
        return [value_of(widget, v, count) for v in value]
    return value


@dataclass
class Server:
    name: str  # "before" / "after"
    root: Path
    process: object = None
    url: str = ""
    sessions: dict[str, AppSession] = field(default_factory=dict)
    cpu_ms: dict[str, list[float]] = field(default_factory=dict)  # page → samples
    seconds: dict[str, list[float]] = field(default_factory=dict)
    deltas: dict[str, list[int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def start(server: Server, log) -> None:
    port = free_port()
    python = str(server.root / ".venv" / "bin" / "python")
    server.process = start_server(port, log, python, cwd=server.root)
    server.url = f"http://127.0.0.1:{port}"
    wait_healthy(server.url, server.process, 180.0)


async def play(server: Server, page: str, step: Step, turn: int, settle: float, keep: bool):
    session = server.sessions[page]
    try:
        widget = session.widget(step.key)
    except Exception as error:  # noqa: BLE001 - a missing widget is an error of the run
        server.errors.append(f"{NAMES.get(page, page)}: {error}")
        return
    value = value_of(widget, step.values[turn % len(step.values)], turn)
    pid = server.process.pid
    before = process_cpu_s(pid)
    run = await session.change(widget.key, value)
    await asyncio.sleep(settle)
    cpu_ms = (process_cpu_s(pid) - before) * 1000
    server.errors += [f"{NAMES.get(page, page)} {step.key}: {e}" for e in run.exceptions]
    if keep:
        label = NAMES.get(page, page)
        server.cpu_ms.setdefault(label, []).append(cpu_ms)
        server.seconds.setdefault(label, []).append(run.seconds)
        server.deltas.setdefault(label, []).append(run.deltas)


async def drive(servers: list[Server], rounds: int, settle: float) -> None:
    for server in servers:
        for page in PAGES:
            session = AppSession(server.url)
            await session.connect()
            run = await session.open(page, QUERY)
            server.errors += [f"open {page}: {e}" for e in run.exceptions]
            server.sessions[page] = session
    warm = max(len(step.values) for steps in PAGES.values() for step in steps)
    count = 0
    for turn in range(warm + rounds):
        order = servers if turn % 2 == 0 else servers[::-1]
        for page, steps in PAGES.items():
            for step in steps:
                count += 1
                for server in order:
                    await play(server, page, step, count, settle, keep=turn >= warm)
    for server in servers:
        for session in server.sessions.values():
            await session.close()


def report(servers: list[Server], load: tuple[float, float], rounds: int) -> None:
    print(f"\nserver CPU per interaction, {rounds} rounds after warm-up")
    print(f"load average (1 min) before {load[0]:.2f}, after {load[1]:.2f}; {os.cpu_count()} CPUs")
    head = "| page | n |"
    rule = "|---|--:|"
    for s in servers:
        head += f" {s.name} median ms | {s.name} p95 ms | {s.name} mean ms |"
        rule += "--:|--:|--:|"
    head += " latency median ms (" + " / ".join(s.name for s in servers) + ") |"
    head += " elements sent (" + " / ".join(s.name for s in servers) + ") |"
    rule += "--:|--:|"
    print(head)
    print(rule)
    for label in servers[0].cpu_ms:
        row = f"| {label} | {len(servers[0].cpu_ms[label])} |"
        for s in servers:
            samples = s.cpu_ms.get(label, [0.0])
            row += (
                f" {statistics.median(samples):.0f} | {nearest_rank(samples, 0.95):.0f}"
                f" | {statistics.fmean(samples):.0f} |"
            )
        lat = " / ".join(
            f"{statistics.median(s.seconds.get(label, [0])) * 1000:.0f}" for s in servers
        )
        sent = " / ".join(f"{statistics.median(s.deltas.get(label, [0])):.0f}" for s in servers)
        print(row + f" {lat} | {sent} |")
    for s in servers:
        every = [v for samples in s.cpu_ms.values() for v in samples]
        worst = max(statistics.median(v) for v in s.cpu_ms.values())
        print(
            f"{s.name}: all pages median {statistics.median(every):.0f} ms, mean "
            f"{statistics.fmean(every):.0f} ms; worst page median {worst:.0f} ms "
            f"(target <= {TARGET_MS:.0f}); errors {len(s.errors)}"
        )
        for error in s.errors[:10]:
            print("   ", error)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="an older checkout to compare with")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--settle", type=float, default=0.15, help="seconds after a run")
    parser.add_argument("--pages", nargs="+", choices=[NAMES.get(p, p) for p in PAGES])
    args = parser.parse_args()
    if args.pages:
        for page in [p for p in PAGES if NAMES.get(p, p) not in args.pages]:
            del PAGES[page]
    servers = [Server("after", ROOT)]
    if args.before is not None:
        servers.insert(0, Server("before", args.before.resolve()))
    log = tempfile.NamedTemporaryFile("w+", prefix="normscope-interactions-", suffix=".log")
    load_before = os.getloadavg()[0]
    try:
        for server in servers:
            start(server, log)
        asyncio.run(drive(servers, args.rounds, args.settle))
    finally:
        for server in servers:
            if server.process is not None:
                server.process.terminate()
                server.process.wait(30)
    report(servers, (load_before, os.getloadavg()[0]), args.rounds)
    return 0 if all(not s.errors for s in servers) else 1


if __name__ == "__main__":
    sys.exit(main())
