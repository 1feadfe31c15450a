"""Benchmark: NormScope's Triton norm kernels against PyTorch eager, torch.compile and Liger.

What is measured.  LayerNorm and RMSNorm, forward and backward, bfloat16 and
float32, at [M, N] = 4096x4096, 16384x8192, 32768x4096, 4096x65536; plus the fused
residual add + norm against the unfused pair.  Providers, side by side in one run: ``ours``
(engine/kernels), ``torch`` (eager ``F.layer_norm`` / ``F.rms_norm``), ``compile``
(``torch.compile`` of the eager function) and ``liger`` (Liger-Kernel, when installed).
Each figure is the median of ``triton.testing.do_bench`` (which clears the L2 before every
call), in µs, with GB/s counting the bytes a perfect kernel must move — forward 2·M·N·elem
(read x, write y), backward 3·M·N·elem (read x and dy, write dx), add+norm forward 4·M·N·elem
(read x and residual, write h and y) — and that as a % of the GPU's datasheet HBM bandwidth.
The GPU's copy bandwidth (a device-to-device clone) is measured too, as the practical ceiling.
The shapes, providers, byte counts and datasheet peaks live in ``kernel_cases.py``.

Targets on an H200 (4.8 TB/s): forward >= 85 % of peak for N >= 4096 and >= 1.3x torch
eager; backward >= 70 % of peak; fused add+norm >= 1.2x the unfused pair (fusion saves one of
five passes over [M, N]: a memory-bound pair can gain at most 5/4 = 1.25x, engine/perf/
roofline.py; a target of 1.5x could only be met where launches, not bytes, set the time).  The
script prints each target as met or missed; it does not invent figures it could not measure.

Without CUDA it says so, times PyTorch's CPU ops at a small shape, and runs an interpreter
correctness smoke of every kernel (TRITON_INTERPRET=1) against engine/norms/reference.py.

Run (GPU):  python3 benchmarks/bench_kernels.py [--quick] [--budget-s 300] [--out DIR]
Run (CPU):  .venv/bin/python benchmarks/bench_kernels.py
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FUSED_TARGET = 1.2  # fused add+norm over the unfused pair (the memory-bound ceiling: 1.25)
sys.path.insert(0, str(ROOT))

if "--dry-run" in sys.argv:  # before the first import of triton (see engine/kernels/_launch.py)
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

# The script's own folder is first on sys.path, so its helper module imports by name.
from kernel_cases import (  # noqa: E402
    BYTES_PER_VALUE,
    DRY,
    DTYPES,
    KINDS,
    QUICK_SHAPES,
    SHAPES,
    add_norm_providers,
    copy_bandwidth_gbps,
    cpu_do_bench,
    datasheet_peak,
    norm_providers,
    rel_err,
)

# ----------------------------------------------------------------------------- GPU path


def run_gpu(args, device: str = "cuda") -> int:
    """The GPU benchmark; ``device="cpu"`` is the dry run (interpreter, tiny shape)."""
    import triton

    dry = device != "cuda"
    if dry:
        do_bench = cpu_do_bench
        name, peak, shapes = "DRY RUN on the CPU (interpreter; numbers meaningless)", None, DRY
    else:
        from triton.testing import do_bench

        name = torch.cuda.get_device_name(0)
        peak = args.peak_gbps or datasheet_peak(name)
        shapes = QUICK_SHAPES if args.quick else SHAPES
    for limit in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(torch._dynamo.config, limit):  # never fall back to eager silently
            setattr(torch._dynamo.config, limit, 256)
    copy_gbps = copy_bandwidth_gbps(torch, do_bench, device)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"{name} · {stamp} · torch {torch.__version__} · triton {triton.__version__} · "
        f"datasheet peak {peak or 'unknown'} GB/s · measured copy {copy_gbps:.0f} GB/s"
    )
    print(header, flush=True)
    deadline = time.monotonic() + args.budget_s
    rows: list[dict] = []

    def record(op, pass_, dtype, m, n, provider, ms, err, note=""):
        nbytes = BYTES_PER_VALUE[pass_] * m * n * (2 if dtype == "bfloat16" else 4)
        gbps = nbytes / (ms * 1e-3) / 1e9 if ms else None
        row = {
            "op": op,
            "pass": pass_,
            "dtype": dtype,
            "M": m,
            "N": n,
            "provider": provider,
            "us": round(ms * 1e3, 2) if ms else None,
            "GB/s": round(gbps, 1) if gbps else None,
            "% of peak": round(100 * gbps / peak, 1) if gbps and peak else None,
            "rel err vs torch": f"{err:.1e}" if err is not None else None,
            "note": note,
            "device": name,  # which GPU, and when: the Kernels page says both
            "measured_at": stamp,
        }
        rows.append(row)
        if args.out:  # row by row, so a run cut short by a timeout keeps what it measured
            path = Path(args.out) / "bench_kernels_partial.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            new_file = not path.exists()
            with open(path, "a", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=list(row))
                if new_file:
                    writer.writeheader()
                writer.writerow(row)
        figures = f"{row['us']:>9.1f} us {row['GB/s']:>8.1f} GB/s" if ms else note
        print(f"{op:>14} {pass_:>16} {dtype:>8} {m:>6}x{n:<6} {provider:>12}: {figures}")

    def timed(fn):
        if time.monotonic() > deadline:
            return None
        return do_bench(fn, warmup=25, rep=100, return_mode="median")

    def measure_norm(kind, provider, fn, x, w, bias, dy, y_ref):
        """Forward (checked against eager) and backward of one provider at one shape."""
        (m, n), dtype = x.shape, str(x.dtype).removeprefix("torch.")
        with torch.no_grad():
            err = rel_err(fn(x, w, bias), y_ref)
            ms = timed(lambda: fn(x, w, bias))
        record(kind, "forward", dtype, m, n, provider, ms, err, "" if ms else "budget")
        leaves = [t.clone().requires_grad_() for t in (x, w)]
        if bias is not None:
            leaves.append(bias.clone().requires_grad_())
        y = fn(*leaves) if bias is not None else fn(*leaves, None)
        ms = timed(lambda: torch.autograd.grad(y, leaves, dy, retain_graph=True))
        record(kind, "backward", dtype, m, n, provider, ms, None, "" if ms else "budget")

    def measure_add_norm(kind, provider, fn, x, r, w, y_ref):
        (m, n), dtype = x.shape, str(x.dtype).removeprefix("torch.")
        with torch.no_grad():
            err = rel_err(fn(x, r, w)[0], y_ref)
            ms = timed(lambda: fn(x, r, w))
        note = "" if ms else "budget"
        record(f"add+{kind}", "add+norm forward", dtype, m, n, provider, ms, err, note)

    # Two phases: ours and eager (the figures that matter) at every shape first, then the
    # compiled and Liger providers, so a budget cut loses the least.
    for phase in (("ours", "torch"), ("compile", "liger")):
        for m, n in shapes:
            for dtype_name in DTYPES:
                dtype = getattr(torch, dtype_name)
                gen = torch.Generator(device=device).manual_seed(0)
                x = torch.randn(m, n, device=device, generator=gen).to(dtype)  # [M, N]
                dy = torch.randn(m, n, device=device, generator=gen).to(dtype)  # [M, N]
                r = torch.randn(m, n, device=device, generator=gen).to(dtype)  # [M, N]
                w = (1 + 0.1 * torch.randn(n, device=device, generator=gen)).to(dtype)  # [N]
                b = (0.1 * torch.randn(n, device=device, generator=gen)).to(dtype)  # [N]
                for kind in KINDS:
                    providers = norm_providers(kind)
                    bias = b if kind == "layernorm" else None
                    with torch.no_grad():
                        y_ref = providers["torch"](x, w, bias)
                    for provider in phase:
                        if provider not in providers:
                            note = "not installed"
                            record(kind, "forward", dtype_name, m, n, provider, None, None, note)
                            continue
                        try:
                            fn = providers[provider]
                            measure_norm(kind, provider, fn, x, w, bias, dy, y_ref)
                        except Exception as exc:  # one provider failing must not end the run
                            note = f"failed: {type(exc).__name__}: {str(exc)[:80]}"
                            record(kind, "forward", dtype_name, m, n, provider, None, None, note)
                    # Fused residual add + norm, forward (the Pre-Norm block's hot path):
                    # the compiled pair in the second phase, the others in the first.
                    pairs = add_norm_providers(kind)
                    with torch.no_grad():
                        y_ref = pairs["torch"](x, r, w)[0]
                    for provider, fn in pairs.items():
                        if (provider == "compile") == ("compile" in phase):
                            measure_add_norm(kind, provider, fn, x, r, w, y_ref)
                del x, dy, r, w, b
                if not dry:
                    torch.cuda.empty_cache()

    verdicts = check_targets(rows, peak)
    write_outputs(args, header, rows, verdicts)
    failed = [r for r in rows if r["note"].startswith("failed")]
    return 1 if failed else 0


def check_targets(rows, peak) -> list[str]:
    """The issue's targets, each met / missed / not measured, from the measured rows."""
    lines = []
    for r in rows:
        if r["provider"] != "ours" or r["us"] is None or r["pass"] not in ("forward", "backward"):
            continue
        torch_us = next(
            (
                t["us"]
                for t in rows
                if t["provider"] == "torch"
                and t["us"]
                and (t["op"], t["pass"], t["dtype"], t["M"], t["N"])
                == (r["op"], r["pass"], r["dtype"], r["M"], r["N"])
            ),
            None,
        )
        pct = r["% of peak"]
        goal = 85.0 if r["pass"] == "forward" else 70.0
        parts = [f"{r['op']} {r['pass']} {r['dtype']} {r['M']}x{r['N']}:"]
        if pct is None:
            parts.append("% of peak unknown (no datasheet peak for this GPU)")
        else:
            parts.append(
                f"{pct:.0f} % of peak ({'met' if pct >= goal else 'MISSED'} >= {goal:.0f} %)"
            )
        if torch_us and r["pass"] == "forward":
            speedup = torch_us / r["us"]
            parts.append(f"{speedup:.2f}x eager ({'met' if speedup >= 1.3 else 'MISSED'} >= 1.3x)")
        lines.append(" ".join(parts))
    for r in rows:
        if r["provider"] != "ours fused" or r["us"] is None:
            continue
        key = (r["op"], r["dtype"], r["M"], r["N"])
        unfused = next(
            (
                t["us"]
                for t in rows
                if t["provider"] == "ours unfused"
                and t["us"]
                and (t["op"], t["dtype"], t["M"], t["N"]) == key
            ),
            None,
        )
        if unfused:
            speedup = unfused / r["us"]
            lines.append(
                f"{r['op']} {r['dtype']} {r['M']}x{r['N']}: fused {speedup:.2f}x the unfused pair "
                f"({'met' if speedup >= FUSED_TARGET else 'MISSED'} >= {FUSED_TARGET}x)"
            )
    return lines


def write_outputs(args, header, rows, verdicts) -> None:
    columns = list(rows[0]) if rows else []
    table = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        table.append("| " + " | ".join("" if r[c] is None else str(r[c]) for c in columns) + " |")
    text = "\n".join(
        [f"### {header}", "", *table, "", "Targets:", "", *[f"- {v}" for v in verdicts], ""]
    )
    print()
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "bench_kernels.md").write_text(text, encoding="utf-8")
        with open(out / "bench_kernels.csv", "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)


# ----------------------------------------------------------------------------- CPU path


def interpreter_smoke() -> int:
    """Every kernel once under TRITON_INTERPRET=1, checked against engine/norms/reference.py."""
    if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
        print("interpreter smoke skipped: triton was imported before TRITON_INTERPRET=1")
        return 1
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is first imported
    from engine import NormSpec, normalize
    from engine.kernels._launch import launch_counts
    from engine.kernels.channel_stats import channel_stats
    from engine.norms import reference
    from engine.norms.dispatch import fused_add_norm

    torch.manual_seed(0)
    x = -2.3 + 0.5 * torch.randn(3, 7, 760)
    r = torch.randn(3, 7, 760)
    w, b = torch.randn(760), torch.randn(760)
    worst = 0.0
    lines = []
    for kind, oracle in (("layernorm", reference.layer_norm), ("rmsnorm", reference.rms_norm)):
        leaves = [t.clone().requires_grad_() for t in (x, w, b)]
        ours = normalize(leaves[0], NormSpec(kind=kind), leaves[1], leaves[2], backend="triton")
        ref_leaves = [t.clone().requires_grad_() for t in (x, w, b)]
        ref = oracle(ref_leaves[0], 1e-5, ref_leaves[1], ref_leaves[2])
        dy = torch.randn_like(x)
        grads = torch.autograd.grad(ours.y, leaves, dy)
        ref_grads = torch.autograd.grad(ref.y, ref_leaves, dy)
        errs = {"y": (ours.y - ref.y).abs().max().item()}
        errs.update(
            {n: (g - e).abs().max().item() for n, g, e in zip(("dx", "dW", "dB"), grads, ref_grads)}
        )
        fused, h = fused_add_norm(x, r, NormSpec(kind=kind), w, b, backend="triton")
        errs["add+norm y"] = (fused.y - oracle(x + r, 1e-5, w, b).y).abs().max().item()
        worst = max(worst, max(errs.values()) / 10)  # dW sums 21 rows: allow 1e-4
        lines.append(
            f"{kind}: backend={ours.backend} " + " ".join(f"{k} {v:.1e}" for k, v in errs.items())
        )
    count, mean, m2 = channel_stats(x)
    bn = reference.batch_norm(x)
    err = max((mean - bn.mean).abs().max().item(), (m2 / count - bn.var).abs().max().item())
    worst = max(worst, err)
    lines.append(f"channel stats: max error {err:.1e}")
    lines.append(f"kernel launches: {launch_counts()}")
    print("\n".join(lines))
    ok = worst < 1e-5
    print(f"interpreter smoke: {'passed' if ok else 'FAILED'} (worst scaled error {worst:.1e})")
    return 0 if ok else 1


def run_cpu(args) -> int:
    print(
        "No CUDA device: the GPU figures are not measured here (benchmarks/RESULTS.md keeps "
        "them open). Timing PyTorch's CPU ops instead, then an interpreter correctness smoke."
    )
    from engine.perf.timing import time_norms

    rows = time_norms(rows=args.cpu_rows, widths=(args.cpu_width,), dtype="float32").rows
    print()
    print("| op | pass | dtype | M | N | provider | device | µs | GB/s |")
    print("|---|---|---|--:|--:|---|---|--:|--:|")
    for r in rows:
        print(
            f"| {r['kind']} | {r['pass']} | {r['dtype']} | {r['rows']} | {r['width']} | "
            f"torch eager | CPU | {r['median_us']:.0f} | {r['gbps']:.1f} |"
        )
    print()
    return interpreter_smoke()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two shapes instead of four")
    parser.add_argument(
        "--budget-s",
        type=float,
        default=420.0,
        help="start no new measurement after this many seconds",
    )
    parser.add_argument(
        "--peak-gbps",
        type=float,
        default=None,
        help="HBM bandwidth to compare with (default: datasheet by GPU name)",
    )
    parser.add_argument("--out", default=None, help="folder for bench_kernels.md and .csv")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="run the GPU code path on the CPU at a tiny shape (checks the script, not speed)",
    )
    parser.add_argument("--cpu-rows", type=int, default=1024)
    parser.add_argument("--cpu-width", type=int, default=1024)
    args = parser.parse_args()
    if args.dry_run:
        return run_gpu(args, device="cpu")
    if torch.cuda.is_available():
        return run_gpu(args)
    return run_cpu(args)


if __name__ == "__main__":
    sys.exit(main())
