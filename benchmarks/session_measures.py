"""What ``bench_sessions.py`` measures and how: each interaction (``Sample``) and a run's totals
(``Point``), percentiles by nearest rank, resident memory and CPU time read from ``/proc``
(the server's processes, and every core of the machine), and the window measured from its
start until every session has ended.
"""

from __future__ import annotations

import asyncio
import math
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from scripts.local_app import process_cpu_s


def nearest_rank(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else math.nan


def machine_busy_s() -> float:
    """CPU seconds every process of the machine has used so far, all cores (/proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def rss_mb(pids: list[int]) -> float:
    """Resident memory of processes ``pids`` together, MB (VmRSS: file pages counted)."""
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


async def settled_rss_mb(pids: list[int]) -> float:
    """The median of five samples a second apart, after a second's pause: the server frees
    some of a page run's memory late, which a single sample would count or not by chance."""
    samples = []
    for _ in range(6):
        await asyncio.sleep(1.0)
        samples.append(rss_mb(pids))
    return statistics.median(samples[1:])


@dataclass
class Sample:
    page: str
    kind: str  # "change" or "page"
    seconds: float


@dataclass
class Point:
    """One run: N sessions for the window, on P processes."""

    sessions: int
    processes: int
    driver: str
    samples: list[Sample] = field(default_factory=list)
    opens: list[float] = field(default_factory=list)  # the sessions' first page views
    errors: list[str] = field(default_factory=list)
    window_s: float = 0.0
    server_cpu_s: float = 0.0
    driver_cpu_s: float = 0.0  # the load generator (protocol) or Chromium (browser)
    balancer_pid: int | None = None  # HAProxy, with more than one process
    balancer_cpu_s: float = math.nan
    machine_busy: float = 0.0  # cores busy over the window, every process of the machine
    chart_ms: list[float] = field(default_factory=list)  # browser: to the chart redrawn
    rss_baseline_mb: float = 0.0
    rss_open_mb: float = 0.0
    rss_peak_mb: float = 0.0
    rss_end_mb: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)


async def measure_window(users, pids: list[int], point: Point, driver_cpu) -> None:
    """The window: server CPU, the driver's CPU and memory from now until every user ends."""
    cpu0, driver0, start = sum(process_cpu_s(p) for p in pids), driver_cpu(), time.monotonic()
    machine0 = machine_busy_s()
    balancer0 = process_cpu_s(point.balancer_pid) if point.balancer_pid else math.nan
    if asyncio.iscoroutine(driver0):
        driver0 = await driver0
    peak = point.rss_open_mb
    waiting = asyncio.gather(*users)
    while not waiting.done():
        peak = max(peak, rss_mb(pids))
        await asyncio.wait([waiting], timeout=1.0)
    await waiting
    point.window_s = time.monotonic() - start
    point.server_cpu_s = sum(process_cpu_s(p) for p in pids) - cpu0
    point.machine_busy = (machine_busy_s() - machine0) / point.window_s
    if point.balancer_pid:
        point.balancer_cpu_s = process_cpu_s(point.balancer_pid) - balancer0
    driver1 = driver_cpu()
    if asyncio.iscoroutine(driver1):
        driver1 = await driver1
    point.driver_cpu_s = driver1 - driver0
    point.rss_end_mb = rss_mb(pids)
    point.rss_peak_mb = max(peak, point.rss_end_mb)
