"""A ``DumpReport`` as tables (pandas DataFrames) and as JSON / CSV files.

The page draws from the report's arrays and offers these same tables for download; the CLI
prints and writes them, so every surface shows the same numbers.  Row and column names are
stable ids (the page translates the headers).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from engine.dumps.report import DumpReport
from engine.dumps.written import write_whole


def _layers(rep: DumpReport) -> pd.DataFrame:
    res, mas = rep.residual, rep.massive
    return pd.DataFrame(
        {
            "layer": np.arange(len(rep.labels)),
            "entry": list(rep.labels),
            "rms": res.rms_layer,
            "rms_median_token": res.rms_median_token,
            "rms_first_token": res.rms_first_token,
            "rms_max_token": res.rms_max_token,
            "growth_vs_previous": res.step_ratio,
            "mu2_share": rep.centering.mu2_share,
            "median_abs": mas.median_abs,
            "top1_abs": mas.top3[:, 0],
            "top2_abs": mas.top3[:, 1],
            "top3_abs": mas.top3[:, 2],
            "top1_over_median": mas.top3_ratio[:, 0],
            "massive_threshold": mas.threshold,
            "massive_count": mas.count,
            "nan": rep.stats.nonfinite[:, 0],
            "posinf": rep.stats.nonfinite[:, 1],
            "neginf": rep.stats.nonfinite[:, 2],
        }
    )


def _tokens(rep: DumpReport) -> pd.DataFrame:
    layers, batch, tokens = rep.residual.rms.shape
    grid = np.indices((layers, batch, tokens)).reshape(3, -1)
    cen = rep.centering
    return pd.DataFrame(
        {
            "layer": grid[0],
            "batch": grid[1],
            "token": grid[2],
            "rms": rep.residual.rms.reshape(-1),
            "rms_over_layer_median": rep.residual.token_ratio.reshape(-1),
            "mean": rep.stats.row_mean.reshape(-1),
            "std": cen.token_std.reshape(-1),
            "mu2_share": cen.token_share.reshape(-1),
            "max_abs": rep.stats.row_maxabs.reshape(-1),
            "finite_values": rep.stats.row_finite.reshape(-1),
        }
    )


def _outlier_tokens(rep: DumpReport) -> pd.DataFrame:
    res = rep.residual
    return pd.DataFrame(
        {
            "batch": res.outlier_batch,
            "token": res.outlier_token,
            "first_token": res.outlier_token == 0,
            "layers_flagged": res.outlier_layers,
            "first_layer_flagged": res.outlier_first_layer,
            "max_rms_over_median": res.outlier_max_ratio,
            "layer_of_max": res.outlier_max_layer,
        }
    )


def _massive(rep: DumpReport) -> pd.DataFrame:
    mas = rep.massive
    return pd.DataFrame(
        {
            "layer": mas.layer,
            "batch": mas.batch,
            "token": mas.token,
            "channel": mas.channel,
            "value": mas.value,
            "abs_over_median": np.abs(mas.value) / mas.median_abs[mas.layer],
        }
    )


def _comparison(rep: DumpReport) -> pd.DataFrame:
    com = rep.comparison
    layers, k = com.difference_rms.shape
    layer, which = np.indices((layers, k)).reshape(2, -1)
    return pd.DataFrame(
        {
            "layer": layer,
            "batch": com.batch[which],
            "token": com.token[which],
            "chosen_as": np.asarray(com.reasons)[which],
            "mu2_share": com.mu2_share.reshape(-1),
            "ln_minus_rms_rms": com.difference_rms.reshape(-1),
            "cosine": com.cosine.reshape(-1),
        }
    )


def _channel_rows(rep: DumpReport, layer: np.ndarray, channel: np.ndarray) -> pd.DataFrame:
    ch = rep.channels
    return pd.DataFrame(
        {
            "layer": layer,
            "channel": channel,
            "mean": ch.mean[layer, channel],
            "std": ch.std[layer, channel],
            "rms": ch.rms[layer, channel],
            "max_abs": ch.maxabs[layer, channel],
            "rms_over_layer_median": ch.ratio[layer, channel],
        }
    )


def _channels(rep: DumpReport) -> pd.DataFrame:
    layer, channel = np.indices(rep.channels.mean.shape).reshape(2, -1)
    return _channel_rows(rep, layer, channel)


def _outlier_channels(rep: DumpReport) -> pd.DataFrame:
    return _channel_rows(rep, rep.channels.outlier_layer, rep.channels.outlier_channel)


def _dyt(rep: DumpReport) -> pd.DataFrame:
    fields = ["layer", "alpha", "gamma", "r2", "points", "outliers", "r2_all", "affine_removed"]
    rows = [[fit.label] + [getattr(fit, name) for name in fields] for fit in rep.dyt]
    return pd.DataFrame(rows, columns=["norm", *fields])


def _growth(rep: DumpReport) -> pd.DataFrame:
    return pd.DataFrame([asdict(fit) for fit in rep.residual.growth])


def _nonfinite(rep: DumpReport) -> pd.DataFrame:
    tokens = rep.layout.tokens
    rows = rep.stats.nonfinite_rows
    return pd.DataFrame(
        {
            "layer": [layer for layer, _ in rows],
            "batch": [row // tokens for _, row in rows],
            "token": [row % tokens for _, row in rows],
        }
    )


TABLES = {
    "layers": _layers,
    "growth": _growth,
    "outlier_tokens": _outlier_tokens,
    "massive_activations": _massive,
    "norm_comparison": _comparison,
    "outlier_channels": _outlier_channels,
    "dyt_fits": _dyt,
    "nonfinite_tokens": _nonfinite,
    "tokens": _tokens,
    "channels": _channels,
}


def report_tables(rep: DumpReport) -> dict[str, pd.DataFrame]:
    """Every table of the report, by stable name (``TABLES``)."""
    return {name: build(rep) for name, build in TABLES.items()}


def layout_summary(rep: DumpReport) -> dict:
    lay = rep.layout
    return {
        "stream": lay.stream,
        "stream_reason": lay.stream_reason,
        "streams": list(lay.streams),
        "axes": lay.axes,
        "axes_reason": lay.axes_reason,
        "layer_order": lay.layer_order,
        "layers": len(lay.layers),
        "batch": lay.batch,
        "tokens": lay.tokens,
        "d": lay.d,
        "dtype": lay.dtype,
        "norm_pairs": [pair.label for pair in lay.norm_pairs],
        "skipped": [[item.key, item.english()] for item in lay.skipped],
    }


def _plain(value):
    """JSON-safe: NaN and inf become null, numpy scalars Python numbers."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def report_summary(rep: DumpReport) -> dict:
    """What the report read and how: files, size, metadata, spec, layout (plain data)."""
    return _plain(
        {
            "files": list(rep.files),
            "bytes": rep.nbytes,
            "metadata": dict(rep.metadata),
            "spec": asdict(rep.spec),
            "layout": layout_summary(rep),
            "backend": rep.backend,
        }
    )


def json_text(summary: dict, tables: dict[str, pd.DataFrame]) -> str:
    """``summary`` (plain data) with every table under "tables", as JSON text.

    Each table is written by pandas (records; NaN and inf as null; 15 significant digits):
    turned into Python dicts first, a large table took several times the memory (figures:
    benchmarks/RESULTS.md, "Peak memory of a read against its prediction").  Apart from the
    report, so a page can write its summary from the tables alone, without keeping the report
    (and the dump it reads from) for a download made later.
    """
    records = (
        f"{json.dumps(name)}: "
        + frame.to_json(orient="records", double_precision=15, force_ascii=False)
        for name, frame in tables.items()
    )
    head = json.dumps(summary, ensure_ascii=False, allow_nan=False)[:-1]
    return head + (", " if summary else "") + '"tables": {' + ", ".join(records) + "}}"


def write_json(rep: DumpReport, path: str | Path) -> Path:
    """The summary and every table as one JSON file, written whole or not at all."""
    path = Path(path)
    write_whole(path, json_text(report_summary(rep), report_tables(rep)).encode("utf-8"))
    return path


def write_csv(rep: DumpReport, directory: str | Path) -> list[Path]:
    """One CSV per table in ``directory`` (created), each written whole or not at all; the
    paths written."""
    directory = Path(directory)
    written = []
    for name, table in report_tables(rep).items():
        path = directory / f"{name}.csv"
        write_whole(path, table.to_csv(index=False).encode("utf-8"))
        written.append(path)
    return written
