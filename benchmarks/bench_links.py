"""Benchmark: what one opened link costs the server before anyone clicks.

A link is untrusted input that runs the page once, with no click, for whoever opens it; in a
class one server process serves everyone, so no link may cost it more than about a second
of CPU.  Each case opens one link in a fresh session of a real server (started as
``scripts/run.sh`` starts it, through ``scripts/local_app.py``), speaking Streamlit's own
protocol over the websocket as a browser does (``BackMsg.rerun_script`` with the link's
query string and page; a browser cannot send a query past the server's 128 KiB request
limit, a hand-made client can, up to Streamlit's own 512 KiB).  The clock: the server
process's CPU seconds (user + system, ``/proc``) from the connection until the page's run
has finished (``ForwardMsg.script_finished``) and the session is closed, plus 0.3 s for
the server to settle; the elements the run sent are counted (warnings, buttons).

The cases: the hostile links of the sweep that found the problem (about 1,000 unknown keys
of about 150 characters, 150-170 KB; more than 1,000 pairs; a 96 KB list of unknown items)
and, for every page, its parameters at their maxima, the heaviest view a link can ask for
(the live model's case first waits for the model to load, which the first visit starts).
Each repetition changes a setting that does not change the cost, so each one computes.
``--checkout DIR`` serves another checkout (e.g. ``git archive`` of an earlier commit) with
the same cases, for a before/after comparison.  Run it on a quiet machine; the load
average is printed.

Run:  .venv/bin/python benchmarks/bench_links.py [--reps 3] [--only NAME] [--checkout DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: make the project's scripts/ importable

from scripts.local_app import free_port, process_cpu_s, start_server, wait_healthy  # noqa: E402

SETTLE_S = 0.3
RUN_TIMEOUT_S = 300.0
# Results are kept process-wide (``ui/compute.py``): each repetition changes a setting that
# does not change the cost (the page's seed, a threshold; the live prompt), so every one
# computes afresh.
VARIED = {
    "vector_lab": "vl_seed",
    "geometry": "ge_seed",
    "axes": "ax_seed",
    "depth": "dp_seed",
    "dumps": "du_outlier",
}


# ~180 tokens of SmolLM2 (the live model's cap is 256); each repetition appends its number
LONG_PROMPT = " ".join(
    ("Normalization layers keep the residual stream of a deep Transformer bounded",)
    + ("while every block adds its update, and the statistics of each token change.",)
    + ("RMSNorm drops the mean; LayerNorm removes it first and then rescales to the sphere.",)
)
LONG_PROMPT = (LONG_PROMPT + " ") * (1000 // (len(LONG_PROMPT) + 1))
LIVE_READY_S = 900.0  # the live model's load on a busy 2-core machine


def _unknown_keys(prefix: str, count: int, width: int) -> list[tuple[str, str]]:
    return [(f"{prefix}{i:04d}_" + "x" * width, "1") for i in range(count)]


def cases() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(name, page, query pairs): the hostile links and every page at its maxima."""
    from engine.axes import limits as axes
    from ui.url.pages import DUMPS, GEOMETRY, PAGES

    # 15 x 1024 typed numbers: 92 KB in a link, under the longest one accepted
    wide_vectors = "\n".join(",".join(["1.5"] * 1024) for _ in range(15))
    return [
        ("vector_lab defaults", "vector_lab", [("lang", "en")]),
        ("geometry: 990 unknown keys, 150 KB", "geometry", _unknown_keys("zz", 990, 145)),
        ("kernels: 990 unknown kn_ keys, 169 KB", "kernels", _unknown_keys("kn_", 990, 162)),
        ("vector_lab: 1,001 pairs", "vector_lab", [("vl_d", "8")] * 1001),
        ("vector_lab: 999 short unknown keys", "vector_lab", _unknown_keys("z", 999, 0)),
        (
            "depth: a list of 23,900 unknown placements, 96 KB",
            "depth",
            [("dp_placements", ",".join(["x"] * 23_900))],
        ),
        (
            "geometry high at its maxima",
            "geometry",
            [
                ("ge_section", "high"),
                ("ge_count", str(GEOMETRY["ge_count"].high)),
                ("ge_wide_d", str(GEOMETRY["ge_wide_d"].choices[-1])),
                ("ge_view", "pca"),
            ],
        ),
        (
            "geometry dyt at its maxima",
            "geometry",
            [("ge_section", "dyt"), ("ge_count", str(GEOMETRY["ge_count"].high))],
        ),
        (
            "geometry eps at its maxima",
            "geometry",
            [("ge_section", "eps"), ("ge_count", str(GEOMETRY["ge_count"].high))],
        ),
        (
            "geometry scene d=2 at its maxima",
            "geometry",
            [("ge_d", "2"), ("ge_count", str(GEOMETRY["ge_count"].high))],
        ),
        ("geometry real activations", "geometry", [("ge_section", "real")]),
        ("vector_lab: 15 x 1024 typed", "vector_lab", [("vl_text", wide_vectors)]),
        (
            "vector_lab random at its maxima",
            "vector_lab",
            [("vl_source", "random"), ("vl_d", "1024"), ("vl_rows", "64")],
        ),
        (
            "axes cells at its maxima",
            "axes",
            [("ax_batch", "8"), ("ax_tokens", "64"), ("ax_d", "128"), ("ax_norm", "batchnorm")],
        ),
        (
            "axes batchnorm at its maxima",
            "axes",
            [
                ("ax_section", "batchnorm"),
                ("ax_batch", "8"),
                ("ax_tokens", "64"),
                ("ax_d", "128"),
                ("ax_draws", str(axes.MAX_DRAWS)),
                ("ax_steps", str(axes.MAX_TRAIN_STEPS)),
                *[("ax_sizes", str(s)) for s in PAGES["axes"]["ax_sizes"].choices],
            ],
        ),
        (
            "depth stack at its maxima",
            "depth",
            [("dp_layers", "1000"), ("dp_d", "512"), ("dp_tokens", "512")],
        ),
        ("depth sweep at its maxima", "depth", [("dp_section", "sweep"), ("dp_d", "4096")]),
        ("kernels at its maxima", "kernels", [("kn_tokens", str(1 << 24)), ("kn_d", str(1 << 18))]),
        ("models at its maxima", "models", [("md_tokens", str(1 << 24))]),
        (
            "dumps example, new thresholds",
            "dumps",
            [
                ("du_massive_abs", str(DUMPS["du_massive_abs"].low)),
                ("du_massive_ratio", "1.5"),
                ("du_outlier", "1.5"),
            ],
        ),
        ("lessons sheet", "lessons", [("ls_view", "sheet")]),
        (
            "dumps live model, a new 1,000-character prompt",
            "dumps",
            [("du_source", "live"), ("du_prompt", LONG_PROMPT)],
        ),
        (  # ~250 of SmolLM2's tokens: the most a prompt may hold is 256
            "dumps live model, a new 250-token prompt",
            "dumps",
            [("du_source", "live"), ("du_prompt", "ab. " * 124)],
        ),
    ]


async def open_link(port: int, page: str, query: str) -> dict:
    """Run ``page`` with ``query`` in a fresh session; what it sent, once it finished."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    back = BackMsg()
    back.rerun_script.query_string = query
    back.rerun_script.page_name = page
    back.rerun_script.context_info.locale = "en-US"
    back.rerun_script.context_info.url = f"http://127.0.0.1:{port}/{page}"
    counts = {"warnings": 0, "buttons": [], "exceptions": 0, "charts": 0}
    async with websockets.connect(
        f"ws://127.0.0.1:{port}/_stcore/stream",
        subprotocols=["streamlit"],
        origin=f"http://127.0.0.1:{port}",
        max_size=None,
    ) as socket:
        await socket.send(back.SerializeToString())
        while True:
            message = ForwardMsg()
            message.ParseFromString(await asyncio.wait_for(socket.recv(), RUN_TIMEOUT_S))
            kind = message.WhichOneof("type")
            if kind == "script_finished":
                return counts
            if kind != "delta" or message.delta.WhichOneof("type") != "new_element":
                continue
            element = message.delta.new_element
            which = element.WhichOneof("type")
            if which == "alert" and element.alert.format == element.alert.WARNING:
                counts["warnings"] += 1
            elif which == "button":
                counts["buttons"].append(element.button.label)
            elif which == "exception":
                counts["exceptions"] += 1
            elif which == "plotly_chart":
                counts["charts"] += 1


def _varied(page: str, pairs: list[tuple[str, str]], rep: int) -> list[tuple[str, str]]:
    """``pairs`` with the page's varied setting moved by ``rep`` (unchanged for rep 0, and for
    a link whose pair count is the point)."""
    if ("du_source", "live") in pairs:  # a prompt nobody captured yet
        return [(k, f"{v} {rep}" if k == "du_prompt" else v) for k, v in pairs]
    key = VARIED.get(page)
    if rep == 0 or key is None or len(pairs) > 1000:
        return pairs
    given = dict(pairs).get(key)
    value = str(float(given) + rep / 8) if key == "du_outlier" and given else str(rep + 2)
    return [(k, v) for k, v in pairs if k != key] + [(key, value)]


def measure(port: int, pid: int, page: str, pairs: list[tuple[str, str]]) -> tuple[float, dict]:
    query = urlencode(pairs)
    before = process_cpu_s(pid)
    counts = asyncio.run(open_link(port, page, query))
    time.sleep(SETTLE_S)
    return process_cpu_s(pid) - before, {**counts, "chars": len(query), "pairs": len(pairs)}


def wait_for_live_model(port: int, pid: int) -> float:
    """Open the live mode until its model has loaded (the first visit starts the load);
    the seconds it took."""
    start = time.perf_counter()
    while time.perf_counter() - start < LIVE_READY_S:
        _, counts = measure(port, pid, "dumps", [("du_source", "live")])
        if counts["charts"]:
            return time.perf_counter() - start
        time.sleep(5.0)
    raise TimeoutError("the live model did not load")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", default="", help="run only the cases whose name has this")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="serve this checkout")
    args = parser.parse_args()
    port = free_port()
    server = start_server(port, cwd=args.checkout)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        for page in ("vector_lab", "geometry"):  # imports and first figures: not a link's cost
            measure(port, server.pid, page, [("lang", "en")])
        print(f"serving {args.checkout}; load average before: {os.getloadavg()[0]:.2f}")
        print("| link | query | server CPU s (median of reps) | warnings | buttons | charts |")
        print("|---|---|---|---|---|---|")
        live_ready = False
        for name, page, pairs in cases():
            if args.only not in name:
                continue
            if ("du_source", "live") in pairs and not live_ready:
                print(f"(live model loaded in {wait_for_live_model(port, server.pid):.0f} s)")
                live_ready = True
            runs = [
                measure(port, server.pid, page, _varied(page, pairs, rep))
                for rep in range(args.reps)
            ]
            cpu = statistics.median(seconds for seconds, _ in runs)
            counts = runs[-1][1]
            buttons = "; ".join(counts["buttons"]) or "-"
            if counts["exceptions"]:
                buttons += f" ({counts['exceptions']} EXCEPTIONS)"
            print(
                f"| {name} | {counts['chars']:,} chars, {counts['pairs']:,} pairs | {cpu:.2f} "
                f"({', '.join(f'{s:.2f}' for s, _ in runs)}) | {counts['warnings']} "
                f"| {buttons} | {counts['charts']} |",
                flush=True,
            )
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
