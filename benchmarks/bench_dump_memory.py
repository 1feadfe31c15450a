"""Benchmark: peak memory of reading an uploaded dump, against the engine's prediction.

``engine.dumps.report.report_bytes`` predicts, from a dump's layout alone, the peak memory its
report and the page's tables take; ``report`` refuses a dump predicted over
``limits.MEMORY_BUDGET_BYTES`` (1.5 GiB).  This measures the real peak for dumps that stress
each term of the model (many tokens, wide channels, many layers, a float64 stream), each in a
fresh interpreter: the child builds the dump's bytes (an upload, as the page holds it),
resets its peak RSS (``/proc/self/clear_refs``), then runs ``report`` on the ``Upload``,
``report_tables`` (what the page builds) and ``json_text`` (the page's JSON download, made
when clicked), and reports its peak RSS above the resident size before the read, after each
step.  Figures go to benchmarks/RESULTS.md.

Run:  .venv/bin/python benchmarks/bench_dump_memory.py
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# name: (L, B, T, d, dtype)
SHAPES = {
    "tokens": (8, 1, 65536, 16, "float32"),
    "tokens, d=64": (32, 1, 8192, 64, "float32"),
    "channels": (32, 1, 64, 8192, "float32"),
    "layers": (512, 1, 4, 64, "float32"),
    "float64": (16, 1, 1024, 1024, "float64"),
    "smollm2-like": (31, 4, 512, 576, "float32"),
}

CHILD = r"""
import json, re, sys
sys.path.insert(0, {root!r})

def status(key):
    text = open("/proc/self/status").read()
    return int(re.search(rf"^{{key}}:\s+(\d+) kB", text, re.M).group(1)) * 1024

import torch
from safetensors.torch import save
from engine.dumps.dump import open_dump
from engine.dumps.report import report, report_bytes
from engine.dumps.sources import Upload
from engine.dumps.tables import json_text, report_summary, report_tables

layers, batch, tokens, d, dtype = {shape!r}
generator = torch.Generator().manual_seed(0)
kind = getattr(torch, dtype)
tensors = {{
    f"hidden_states.{{i}}": torch.randn(batch, tokens, d, generator=generator).to(kind)
    for i in range(layers)
}}
upload = Upload("m.safetensors", save(tensors))
del tensors
predicted = report_bytes(open_dump(upload).layout)
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS")
rep = report(upload)
after_report = status("VmHWM") - before
tables = report_tables(rep)
with_tables = status("VmHWM") - before
text = json_text(report_summary(rep), tables)
print(json.dumps({{
    "report": after_report,
    "with_tables": with_tables,
    "with_download": status("VmHWM") - before,
    "predicted": predicted,
    "file": len(upload.data),
}}))
"""


def measure(shape: tuple) -> dict:
    code = CHILD.format(root=str(ROOT), shape=shape)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=list(SHAPES), help="shapes to measure")
    args = parser.parse_args()
    import torch

    print(
        f"{time.strftime('%Y-%m-%d')} · {platform.machine()} · torch {torch.__version__} · "
        f"load average {Path('/proc/loadavg').read_text().split()[0]}"
    )
    print(
        "| dump [L, B, T, d] | file | report | + tables | + JSON download | predicted "
        "| predicted / real |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|")
    mib = 2**20
    for name in args.only or SHAPES:
        shape = SHAPES[name]
        got = measure(shape)
        ratio = got["predicted"] / max(got["with_download"], 1)
        print(
            f"| {name} {list(shape[:4])} {shape[4]} | {got['file'] / mib:.0f} MiB "
            f"| {got['report'] / mib:.0f} MiB | {got['with_tables'] / mib:.0f} MiB "
            f"| {got['with_download'] / mib:.0f} MiB "
            f"| {got['predicted'] / mib:.0f} MiB | {ratio:.2f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
