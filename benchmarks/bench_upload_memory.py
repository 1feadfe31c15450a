"""Benchmark: the server's memory during and after an upload, until well after the tab closed.

A real server (``scripts/serve.py``, the live model not preloaded) and a real headless
Chromium: the page opens on ``/dumps?du_source=upload``, a dump is uploaded through the
file uploader, the report is drawn, then the tab (its browser context) is closed.  The
server's resident size (``/proc/<pid>/status`` VmRSS) is sampled before the upload, once the
report is drawn, and every ``--every`` seconds after the tab closed, for ``--minutes``.
Streamlit keeps a disconnected session for ``server.disconnectedSessionTTL`` (120 s) so a
reconnecting tab finds it; what the session held should be gone soon after.  At the end
the server is sent SIGTERM and the time until it exits is printed; ``--stop-while-reading``
sends it while the report is being computed instead (the job is cancelled, not awaited).

Dumps: ``--case big`` a 195 MB float32 safetensors [31, 1, 1536, 1024] (the largest round
shape under the 200 MB limit); ``--case layers`` a 2 KB one of [512, 1, 1, 1] (the most
layers accepted); ``--case refused`` a 20 KB one of [5000, 1, 1, 1].
``--cwd`` serves another checkout (an earlier commit, for a before/after figure).

Run:  .venv/bin/python benchmarks/bench_upload_memory.py --case big [--minutes 5]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.local_app import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    IDLE,
    free_port,
    start_server,
    wait_healthy,
)

CASES = {
    "big": (31, 1, 1536, 1024),
    "layers": (512, 1, 1, 1),
    "refused": (5000, 1, 1, 1),
}
UPLOADER = "[data-testid='stFileUploaderDropzoneInput']"


def resident_mib(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", text, re.M).group(1)) / 1024


def write_dump(folder: Path, shape: tuple) -> Path:
    import torch
    from safetensors.torch import save_file

    generator = torch.Generator().manual_seed(0)
    path = folder / f"dump_{'x'.join(map(str, shape))}.safetensors"
    tensors = {
        f"hidden_states.{i}": torch.randn(shape[1:], generator=generator) for i in range(shape[0])
    }
    if shape[0] > 64:  # one stacked entry: [L, B, T, d]
        tensors = {"hidden_states": torch.randn(shape, generator=generator)}
    save_file(tensors, str(path))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=list(CASES), default="big")
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--every", type=float, default=15.0)
    parser.add_argument("--cwd", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument(
        "--stop-while-reading",
        action="store_true",
        help="send SIGTERM while the report's progress bar shows, and time the exit",
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="normscope-upload-"))
    dump = write_dump(folder, CASES[args.case])
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    python = str(args.cwd / ".venv" / "bin" / "python")
    process = start_server(port, python=python, cwd=args.cwd)
    try:
        wait_healthy(url, process)
        print(f"case {args.case}: {dump.name}, {dump.stat().st_size / 1e6:.3f} MB; {args.cwd}")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            context = browser.new_context(viewport={"width": 1400, "height": 2400})
            page = context.new_page()
            page.goto(f"{url}/dumps?lang=en&du_source=upload")
            page.locator(IDLE).wait_for(timeout=120_000)
            page.wait_for_timeout(2000)
            print(f"  before the upload: {resident_mib(process.pid):7.0f} MiB")
            start = time.perf_counter()
            page.locator(UPLOADER).set_input_files(str(dump))
            if args.stop_while_reading:
                page.locator("[data-testid='stProgress']").first.wait_for(timeout=300_000)
                print(f"  reading: {page.locator('[data-testid=stProgress]').first.inner_text()!r}")
                return 0  # the finally block stops the server mid-read
            done = page.get_by_role("heading", name="Downloads").or_(
                page.locator("[data-testid='stAlert']")
            )
            done.first.wait_for(timeout=600_000)
            page.locator(IDLE).wait_for(timeout=600_000)
            shown = page.get_by_role("heading", name="Downloads").count() > 0
            peak = resident_mib(process.pid)
            print(
                f"  report drawn: {shown}, {time.perf_counter() - start:.1f} s; "
                f"resident {peak:7.0f} MiB"
            )
            context.close()  # the tab closes: its websocket disconnects
            closed = time.perf_counter()
            while time.perf_counter() - closed < args.minutes * 60:
                time.sleep(args.every)
                elapsed = time.perf_counter() - closed
                print(
                    f"  {elapsed:5.0f} s after the tab closed: {resident_mib(process.pid):7.0f} MiB"
                )
            browser.close()
    finally:
        stop = time.perf_counter()
        process.terminate()  # SIGTERM, as a service manager stops the server
        process.wait(60)
        print(f"  SIGTERM to exit: {time.perf_counter() - stop:.1f} s")
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
