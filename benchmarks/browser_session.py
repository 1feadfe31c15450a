"""One person in a browser for the load benchmarks: a Chromium context of its own (so a
Streamlit session of its own) that opens a page, types a new vector into the Vector Lab and
waits until the chart holds it (``bench_app.py``'s technique), or opens the Depth page's
training lab and presses "Train both runs"; and Chromium's CPU time through CDP.  The browser
driver of ``bench_load.py`` and of ``bench_sessions.py --driver browser``.
"""

from __future__ import annotations

import random
import time

from benchmarks.bench_app import CHART_SHOWS_JS, VECTORS_LABEL
from scripts.local_app import IDLE

PAGE_TIMEOUT_MS = 90_000  # one page render or one widget change; past it: an error
JOB_TIMEOUT_MS = 300_000  # a training; the heavy simulation gets max(this, 2x its estimate)
TRAIN_STEPS = 50  # the smallest the training lab accepts: short runs
# both runs' outcome lines ("Run A: ... — over its last 30 steps a mean loss of 0.12 ...")
OUTCOMES_SHOWN_JS = """
() => [...document.querySelectorAll('li')]
  .filter((item) => item.textContent.includes('a mean loss of')).length >= 2
"""


class Session:
    """One browser context (a Streamlit session of its own) and its page."""

    def __init__(self, index: int, page, base_url: str, rng: random.Random):
        self.index = index
        self.page = page
        self.base_url = base_url
        self.rng = rng
        self.js_errors: list[str] = []
        self.next_value = 100.0 * (index + 1)
        page.on("pageerror", lambda error: self.js_errors.append(str(error)))

    async def idle(self) -> None:
        await self.page.wait_for_timeout(300)  # let a rerun that was just triggered start
        await self.page.locator(IDLE).wait_for(state="attached", timeout=PAGE_TIMEOUT_MS)

    async def open(self, path: str) -> None:
        await self.page.goto(self.base_url + path, wait_until="domcontentloaded")
        await self.page.locator("h1").first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        await self.idle()

    async def open_vector_lab(self) -> None:
        await self.open("/?lang=en")
        await self.page.wait_for_function(
            CHART_SHOWS_JS, arg=1.0, timeout=PAGE_TIMEOUT_MS, polling=50
        )

    async def change_vector(self) -> float:
        """Commit a new vector; milliseconds until the chart shows it."""
        value = self.next_value
        self.next_value += 1.0
        box = self.page.get_by_role("textbox", name=VECTORS_LABEL, exact=True)
        await box.fill(f"{value:g}, {value + 1:g}, {value + 3:g}, {value + 7:g}")
        start = time.perf_counter()
        await box.press("Control+Enter")
        await self.page.wait_for_function(
            CHART_SHOWS_JS, arg=value, timeout=PAGE_TIMEOUT_MS, polling=20
        )
        elapsed_ms = 1e3 * (time.perf_counter() - start)
        await self.page.locator(IDLE).wait_for(state="attached", timeout=PAGE_TIMEOUT_MS)
        return elapsed_ms

    async def exceptions(self) -> int:
        return await self.page.locator("[data-testid='stException']").count()

    async def open_training(self, lr: float, steps: int = TRAIN_STEPS) -> None:
        await self.open(f"/depth?lang=en&dp_section=training&dp_steps={steps}&dp_lr={lr:g}")
        await self.page.locator(".st-key-dp_train button").wait_for(
            state="visible", timeout=PAGE_TIMEOUT_MS
        )

    async def train(self) -> float:
        """Press "Train both runs"; seconds until both runs' outcomes are shown."""
        start = time.perf_counter()
        await self.page.locator(".st-key-dp_train button").click(timeout=PAGE_TIMEOUT_MS)
        await self.page.wait_for_function(OUTCOMES_SHOWN_JS, timeout=JOB_TIMEOUT_MS, polling=100)
        return time.perf_counter() - start


async def browser_cpu(cdp) -> dict[int, float]:
    """CPU seconds so far of each of Chromium's processes."""
    info = await cdp.send("SystemInfo.getProcessInfo")
    return {p["id"]: p["cpuTime"] for p in info["processInfo"]}
