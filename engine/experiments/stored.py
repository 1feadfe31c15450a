"""Precomputed experiments: every experiment at its defaults on the held-out texts, written
once by a command so that a class sees them at once, and read back by the page.

    python -m engine.experiments precompute --out data/experiments

A folder holds ``index.json`` (the model, when and with what it was computed, and each
run's text and spec) and one ``<experiment>-<text>.npz`` per run: its arrays, and the rest
of the result as JSON (entry ``tree``).  Reading is safe for a folder someone else wrote:
numpy reads the arrays without pickle, only the result classes listed in ``CLASSES`` are
rebuilt (their specs check every field again), and a file is read only when its name is a
plain ``.npz`` name whose resolved path (symlinks followed) lies inside the folder.

Where the page looks: ``$NORMSCOPE_EXPERIMENTS_DIR``, else ``experiments/`` in
``$NORMSCOPE_DATA_DIR`` (default: ``data/`` in the repository, which git ignores).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import EXPERIMENT_SPECS, EXPERIMENT_TEXTS, TextSpec
from engine.dumps.live import LiveModel, NormIO
from engine.errors import EngineError
from engine.experiments.experiment import ExperimentRun, default_specs, run_experiment
from engine.experiments.fold import FoldedNorm, FoldResult
from engine.experiments.freeze import FreezeResult, FreezeSweep
from engine.experiments.half import HalfResult
from engine.experiments.lens import LensResult
from engine.experiments.massive import MassiveResult
from engine.experiments.refusals import experiment_error
from engine.experiments.runs import Effect
from engine.experiments.swap import SwapResult

FORMAT = 2  # 2: KLs summed in float64 (runs.kl_divergence); 1 held float32 sums
INDEX = "index.json"
MAX_INDEX_BYTES = 1 << 20  # an index of a few dozen runs is a few KB
MAX_RUN_BYTES = 64 << 20  # a run's file: the sweep's is ~1 MB on 512 tokens
ROOT = Path(__file__).resolve().parents[2]
CLASSES = {
    cls.__name__: cls
    for cls in (
        ExperimentRun,
        Effect,
        MassiveResult,
        SwapResult,
        FreezeResult,
        FreezeSweep,
        FoldResult,
        FoldedNorm,
        LensResult,
        HalfResult,
        NormIO,
        TextSpec,
        *EXPERIMENT_SPECS.values(),
    )
}


def default_folder() -> Path:
    """Where the page looks for precomputed runs."""
    named = os.environ.get("NORMSCOPE_EXPERIMENTS_DIR")
    if named:
        return Path(named)
    return Path(os.environ.get("NORMSCOPE_DATA_DIR") or ROOT / "data") / "experiments"


# ----- a result as JSON and arrays ------------------------------------------------------------


def _encode(value: Any, arrays: dict[str, np.ndarray]) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if CLASSES.get(name) is not type(value):
            raise TypeError(f"{name} is not a stored result class")
        fields = {
            f.name: _encode(getattr(value, f.name), arrays) for f in dataclasses.fields(value)
        }
        return {"$class": name, "fields": fields}
    if isinstance(value, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = value
        return {"$array": key}
    if isinstance(value, tuple | list):
        return {"$tuple": [_encode(v, arrays) for v in value]}
    if isinstance(value, Mapping):
        return {"$map": [[_encode(k, arrays), _encode(v, arrays)] for k, v in value.items()]}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": repr(value)}  # "inf", "-inf", "nan": JSON has none
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"cannot store a {type(value).__name__}")


def _decode(node: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    if isinstance(node, dict):
        if "$class" in node:
            cls = CLASSES[node["$class"]]  # KeyError for any other name
            fields = {name: _decode(v, arrays) for name, v in node["fields"].items()}
            return cls(**fields)
        if "$array" in node:
            return arrays[node["$array"]]
        if "$tuple" in node:
            return tuple(_decode(v, arrays) for v in node["$tuple"])
        if "$map" in node:
            return {_decode(k, arrays): _decode(v, arrays) for k, v in node["$map"]}
        if "$float" in node:
            return float({"inf": "inf", "-inf": "-inf", "nan": "nan"}[node["$float"]])
        raise ValueError("unknown node")
    if node is None or isinstance(node, bool | int | float | str):
        return node
    raise ValueError("unknown node")


def write_run(run: ExperimentRun, path: Path) -> None:
    arrays: dict[str, np.ndarray] = {}
    tree = json.dumps(_encode(run, arrays), allow_nan=False)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, tree=np.array(tree), **arrays)


def read_run(path: Path) -> ExperimentRun:
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files if key != "tree"}
        tree = json.loads(str(data["tree"]))
    run = _decode(tree, arrays)
    if not isinstance(run, ExperimentRun):
        raise ValueError("not an experiment run")
    return run


# ----- the folder -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredRun:
    """A precomputed run and where it came from."""

    run: ExperimentRun
    model: str
    created: str  # ISO 8601, UTC
    folder: str


def _key(text: TextSpec, spec: Any) -> str:
    """One run's text and spec as canonical JSON (what an index entry is matched by)."""
    return json.dumps([_encode(text, {}), _encode(spec, {})], sort_keys=True)


def _inside(folder: Path, name: Any) -> Path:
    """``folder/name`` for a plain ``.npz`` name that stays inside ``folder``."""
    if not (isinstance(name, str) and name.endswith(".npz") and Path(name).name == name):
        raise ValueError(f"not a plain file name: {name!r}")
    path = (folder / name).resolve()
    if path.parent != folder.resolve():
        raise ValueError(f"{name!r} leads outside the folder")
    return path


def default_index() -> tuple[str, float | None]:
    """The page's folder of precomputed runs and its index's stamp (``index_stamp``)."""
    folder = default_folder()
    return str(folder), index_stamp(folder)


def index_stamp(folder: str | Path) -> float | None:
    """The index's modification time (None: no index): a new precompute is a new key."""
    try:
        return (Path(folder) / INDEX).stat().st_mtime
    except OSError:
        return None


def stored_run(folder: str | Path, text: TextSpec, spec: Any, stamp: float | None = None):
    """The precomputed run of ``spec`` on ``text`` in ``folder``, as a ``StoredRun``; None
    where the folder holds none.  A folder that cannot be read is refused
    ("experiments.bad_store"), so the page says so and computes instead.  ``stamp`` only
    keys a cache (``index_stamp``)."""
    folder = Path(folder)
    index_path = folder / INDEX
    if not index_path.is_file():
        return None
    try:
        if index_path.stat().st_size > MAX_INDEX_BYTES:
            raise ValueError(f"{INDEX} is over {MAX_INDEX_BYTES:,} bytes")
        index = json.loads(index_path.read_text(encoding="utf-8"))
        if index.get("format") != FORMAT:
            raise ValueError(f"format {index.get('format')!r}, not {FORMAT}")
        wanted = _key(text, spec)
        for entry in index["entries"]:
            if _key(_decode(entry["text"], {}), _decode(entry["spec"], {})) != wanted:
                continue
            path = _inside(folder, entry["file"])
            if path.stat().st_size > MAX_RUN_BYTES:
                raise ValueError(f"{entry['file']} is over {MAX_RUN_BYTES:,} bytes")
            run = read_run(path)
            if run.text != text or run.spec != spec:
                raise ValueError(f"{entry['file']} holds another run than its entry says")
            return StoredRun(run, str(index["model"]), str(index["created"]), str(folder))
    except EngineError:
        raise
    except Exception as exc:  # a damaged or foreign folder: say what, compute instead
        raise experiment_error("bad_store", folder=str(folder), why=str(exc)[:300]) from exc
    return None


def precompute(
    live: LiveModel,
    out: str | Path,
    texts: tuple[str, ...] = EXPERIMENT_TEXTS,
    say: Callable[[str], None] = print,
) -> Path:
    """Every experiment at its defaults (``default_specs``) on each held-out text in
    ``texts``, written to ``out`` (created; an older index there is replaced last)."""
    import torch
    import transformers

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for text_id in texts:
        text = TextSpec(text=text_id)
        for name, spec in default_specs().items():
            run = run_experiment(live, text, spec)
            file = f"{name}-{text_id}.npz"
            write_run(run, out / file)
            entries.append({"file": file, "text": _encode(text, {}), "spec": _encode(spec, {})})
            say(f"{file}: {run.seconds:.1f} s")
    index = {
        "format": FORMAT,
        "model": live.name,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "machine": platform.machine(),
        "experiments": sorted(EXPERIMENT_SPECS),
        "entries": entries,
    }
    partial = out / (INDEX + ".part")
    partial.write_text(json.dumps(index, indent=1, allow_nan=False), encoding="utf-8")
    partial.replace(out / INDEX)
    return out
