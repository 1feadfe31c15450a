"""Benchmark: reading a dump file from the server's dump folder (``NORMSCOPE_DUMP_DIRS``), at
sizes past the upload limit: the time of the page's reading (listing, opening, the report)
and the peak memory it adds to the process, beside the built-in example read the same way.

Each file is a stacked ``[L, B, T, d]`` float16 ``.npy`` written layer by layer through a
memory map (the writer never holds the whole array), with a massive activation on token 0;
each read runs in a fresh interpreter that resets its peak resident size
(``/proc/self/clear_refs``) before it starts.  Figures go to benchmarks/RESULTS.md.

Run:  .venv/bin/python benchmarks/bench_folder_dump.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# name: [L, B, T, d] float16.  SmolLM2's depth and width at 1 GB and 4 GB (the second has 3.5
# million tokens over its layers, past what one read may hold: refused, saying why), and a
# Llama-3-8B-like stream (33 points, d = 4096) at 4.4 GB.
SHAPES = {
    "smollm2-like, 1 GB": (31, 8, 3500, 576),
    "smollm2-like, 4 GB": (31, 8, 14000, 576),
    "llama-8b-like, 4.4 GB": (33, 4, 4096, 4096),
}

CHILD = r"""
import json, os, re, sys, time
sys.path.insert(0, {root!r})

def status(key):
    text = open("/proc/self/status").read()
    return int(re.search(rf"^{{key}}:\s+(\d+) kB", text, re.M).group(1)) * 1024

from engine.dumps.dump import open_dump
from engine.dumps.local_files import find_dump, list_dumps
from engine.dumps.report import report
from engine.errors import EngineError

open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS")
start = time.perf_counter()
found = find_dump({dump_id!r}, list_dumps())
listed = time.perf_counter() - start
dump = open_dump(found.path)
opened = time.perf_counter() - start
try:
    report(dump, dump.spec, True, threads=1)
    refused = None
except EngineError as error:
    refused = str(error)
print(json.dumps({{
    "listed_s": listed, "opened_s": opened, "report_s": time.perf_counter() - start,
    "peak": status("VmHWM") - before, "bytes": found.size, "refused": refused,
}}))
"""


def write_npy(path: Path, shape: tuple[int, int, int, int]) -> None:
    import numpy as np

    array = np.lib.format.open_memmap(path, "w+", np.float16, shape)
    generator = np.random.default_rng(0)
    base = generator.standard_normal(shape[1:], dtype=np.float32)
    for layer in range(shape[0]):
        base += 0.3 * generator.standard_normal(shape[1:], dtype=np.float32)
        array[layer] = base
        array[layer, :, 0, 7] = 300.0
    array.flush()
    del array


def read(folder: Path, dump_id: str) -> dict:
    code = CHILD.format(root=str(ROOT), dump_id=dump_id)
    env = {"NORMSCOPE_DUMP_DIRS": str(folder), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=list(SHAPES), help="files to measure")
    args = parser.parse_args()
    import torch

    from engine.dumps.example import EXAMPLE_DUMP

    print(
        f"{time.strftime('%Y-%m-%d')} · {platform.machine()} · torch {torch.__version__} · "
        f"load average {Path('/proc/loadavg').read_text().split()[0]}"
    )
    print("| file | shape [L, B, T, d] | listed + opened | report (every value) | peak added |")
    print("|---|---|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        shutil.copy(EXAMPLE_DUMP, folder / EXAMPLE_DUMP.name)
        rows = [(f"0/{EXAMPLE_DUMP.name}", "the example, float16", [31, 4, 24, 576])]
        for number, name in enumerate(args.only or SHAPES):
            write_npy(folder / f"stream_{number}.npy", SHAPES[name])
            rows.append((f"0/stream_{number}.npy", f"{name} .npy, float16", list(SHAPES[name])))
        for dump_id, what, shape in rows:
            got = read(folder, dump_id)
            (folder / dump_id[2:]).unlink()  # the disk holds one large file at a time
            outcome = f"{got['report_s']:.1f} s"
            if got["refused"]:
                outcome = f"refused in {got['report_s']:.2f} s: {got['refused'][:90]}…"
            print(
                f"| {what} ({got['bytes'] / 1e9:.3g} GB) | {shape} | {got['opened_s']:.2f} s "
                f"| {outcome} | {got['peak'] / 2**20:.0f} MiB |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
