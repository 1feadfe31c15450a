"""A cache of models loaded from GGUF files: dequantized weights as safetensors, with the
config and tokenizer, so that a restart loads in seconds what dequantizing takes a minute.

    entry = cache_entry(Path("SmolLM2-135M-Instruct.Q4_1.gguf"), "float32")
    cached = entry.load()                  # None: absent, stale or damaged
    with entry.lock():                     # else one process at a time builds it:
        cached = entry.load(repair=True)   # written meanwhile? (a damaged one is removed)
        ...                                # else load from the GGUF file, then
        entry.store(model, tokenizer, head="causal")

An entry is a folder ``<root>/<key>/`` holding ``config.json``, the tokenizer's files,
``model.safetensors`` and, written last, ``manifest.json`` with every file's size and
SHA-256.  The key is a SHA-256 of the source file's SHA-256 and size, the dtype and the
transformers version (which does the dequantizing and names the weights): a changed file, a
dtype or an upgrade is a different key, never a stale hit.  A load checks every file against
the manifest before using it (a truncated or altered file is found, the entry removed and the
model loaded from its source again), and maps the weights (``safetensors.torch.load_file``):
the parameters are pages of the file, which every process serving the same model shares
through the page cache instead of holding its own copy.

Entries are written in a temporary folder and renamed into place, under a lock per key, so
processes starting at once dequantize once and never read half an entry.  Total size is
bounded (least recently used entries removed past the bound; a model larger than the bound is
not cached).  Where: ``NORMSCOPE_MODEL_CACHE`` (a folder; ``off`` turns the cache off),
default ``$XDG_CACHE_HOME/normscope/models`` (``~/.cache/normscope/models``); the bound:
``NORMSCOPE_MODEL_CACHE_MB`` (default 2048).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib
import importlib.metadata
import json
import logging
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import torch

from engine.dumps.empty_weights import empty_parameters
from engine.threads import Progress

_LOGGER = logging.getLogger(__name__)

CACHE_VARIABLE = "NORMSCOPE_MODEL_CACHE"
LIMIT_VARIABLE = "NORMSCOPE_MODEL_CACHE_MB"
DEFAULT_LIMIT_MB = 2048  # SmolLM2-135M in float32 is ~540 MB
FORMAT = 1  # of an entry's files; a change makes every older entry a miss
MANIFEST = "manifest.json"
WEIGHTS = "model.safetensors"
_CHUNK = 1 << 22  # bytes read at a time when hashing
_ABANDONED_S = 3600.0  # a temporary folder this old is a write that died: removed


def cache_root() -> Path | None:
    """The cache folder the operator chose, the default one, or None where it is off."""
    chosen = os.environ.get(CACHE_VARIABLE, "").strip()
    if chosen.lower() in ("off", "0", "none"):
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "normscope" / "models"


def cache_limit_bytes() -> int:
    raw = os.environ.get(LIMIT_VARIABLE, "").strip()
    try:
        megabytes = float(raw) if raw else DEFAULT_LIMIT_MB
    except ValueError:
        megabytes = DEFAULT_LIMIT_MB
    return int(max(megabytes, 0.0) * 2**20)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)  # hashlib lets other threads run while it hashes a chunk
    return digest.hexdigest()


def source_identity(source: Path, dtype: str) -> dict:
    """What an entry is made from; its key is a hash of this."""
    stat = source.stat()
    return {
        "format": FORMAT,
        "source_name": source.name,
        "source_size": stat.st_size,
        "source_sha256": _source_sha256(source.resolve(), stat.st_size, stat.st_mtime_ns),
        "dtype": dtype,
        "transformers": importlib.metadata.version("transformers"),
    }


@functools.lru_cache(maxsize=16)
def _source_sha256(source: Path, size: int, mtime_ns: int) -> str:
    """The file's SHA-256, hashed once per process while its size and time stay the same
    (a process checks the cache, then loads from it)."""
    del size, mtime_ns  # only the cache's key
    return file_sha256(source)


@dataclass(frozen=True)
class CacheEntry:
    """The entry of one (source file, dtype): its folder, whether or not it exists yet."""

    root: Path
    identity: dict

    @property
    def key(self) -> str:
        text = json.dumps(self.identity, sort_keys=True).encode()
        return hashlib.sha256(text).hexdigest()[:32]

    @property
    def folder(self) -> Path:
        return self.root / self.key

    def exists(self) -> bool:
        """Whether an entry was written for this key (its files are checked by ``load``)."""
        return (self.folder / MANIFEST).is_file()

    @contextlib.contextmanager
    def lock(self):
        """Held while one process checks, loads or writes this entry: a second process
        starting at the same time waits, then finds the entry written."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f"{self.key}.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def load(self, progress: Progress | None = None, repair: bool = False) -> tuple | None:
        """The cached (config, tokenizer, model in eval mode, its parameters mapped from the
        entry's weights), or None if there is no entry or it fails its checks; with
        ``repair`` (under ``lock``) a damaged or foreign entry is removed, for the caller to
        rebuild.  ``progress`` gets 0.5 once the files are checked, 0.7 once config and
        tokenizer are read, then 1.0."""
        if not self.exists():
            return None
        with ThreadPoolExecutor(1, thread_name_prefix="model-cache-check") as pool:
            checking = pool.submit(self._intact)  # hashing lets this thread import meanwhile
            _import_model_code(self.folder)
            manifest = checking.result()
        cached = None if manifest is None else self._read(manifest, progress)
        if cached is None:
            if repair:
                shutil.rmtree(self.folder, ignore_errors=True)
            return None
        with contextlib.suppress(OSError):  # a read-only cache is still used
            os.utime(self.folder / MANIFEST)  # last used: the eviction's order
        if progress is not None:
            progress(1.0)
        return cached

    def _read(self, manifest: dict, progress: Progress | None) -> tuple | None:
        """The model from the entry's checked files; None if they do not make one."""
        from safetensors.torch import load_file
        from transformers import AutoConfig, AutoTokenizer

        if progress is not None:
            progress(0.5)
        try:
            config = AutoConfig.from_pretrained(self.folder, local_files_only=True)
            tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True)
            if progress is not None:
                progress(0.7)
            dtype = getattr(torch, self.identity["dtype"])
            model = _model_from_config(config, manifest.get("head", "causal"), dtype)
            weights = load_file(self.folder / WEIGHTS)  # mapped, not read: shared
            _, unexpected = model.load_state_dict(weights, strict=False, assign=True)
            model.tie_weights()  # a tied LM head was saved once, as the embedding
        except Exception:  # noqa: BLE001 (whatever the files do not make: rebuilt)
            return None
        tensors = [*model.parameters(), *model.buffers()]
        if unexpected or any(t.is_meta for t in tensors):  # a weight missing
            return None
        return config, tokenizer, model.eval()

    def _intact(self) -> dict | None:
        """The manifest, if it is this key's and every file it lists has its size and
        SHA-256 (a truncated, altered or misplaced entry has not); else None."""
        try:
            manifest = json.loads((self.folder / MANIFEST).read_text())
            if manifest.get("identity") != self.identity or WEIGHTS not in manifest["files"]:
                return None
            for name, expected in manifest["files"].items():
                path = self.folder / name
                if path.stat().st_size != expected["size"]:
                    return None
                if file_sha256(path) != expected["sha256"]:
                    return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return manifest

    def store(self, model: torch.nn.Module, tokenizer, head: str = "causal") -> bool:
        """Write the entry (False, and nothing written, where it would not fit the bound or
        the folder is not writable)."""
        from safetensors.torch import save_file

        weights = _weights_once(model)
        size = sum(t.numel() * t.element_size() for t in weights.values())
        limit = cache_limit_bytes()
        if size > limit:
            return False
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            _remove_abandoned(self.root)
            staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
            try:
                model.config.save_pretrained(staging)
                tokenizer.save_pretrained(staging)
                save_file(weights, staging / WEIGHTS, metadata={"format": "pt"})
                files = {
                    p.name: {"size": p.stat().st_size, "sha256": file_sha256(p)}
                    for p in sorted(staging.iterdir())
                    if p.is_file()
                }
                manifest = {"identity": self.identity, "head": head, "files": files}
                (staging / MANIFEST).write_text(json.dumps(manifest, indent=1))
                shutil.rmtree(self.folder, ignore_errors=True)
                os.rename(staging, self.folder)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        except OSError as error:
            _unusable(self.root, f"writing an entry: {error.strerror or error}")
            return False
        _evict(self.root, limit, keep=self.key)
        return True


def cache_entry(source: Path, dtype: str) -> CacheEntry | None:
    """The entry for ``source`` loaded in ``dtype`` (hashes the file), or None where the
    cache is off or its folder cannot be written."""
    root = cache_root()
    if root is None:
        return None
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not os.access(root, os.W_OK):
            _unusable(root, "not writable")
            return None
    except OSError as error:
        _unusable(root, error.strerror or str(error))
        return None
    return CacheEntry(root=root, identity=source_identity(Path(source), dtype))


@functools.cache
def _unusable(root: Path, reason: str) -> None:
    """Tell the server's log, once per process, why every start dequantizes again."""
    _LOGGER.warning(
        "model cache %s cannot be used (%s): the live model is dequantized at every start;"
        " set NORMSCOPE_MODEL_CACHE to a writable folder, or to off",
        root,
        reason,
    )


def cached(source: Path, dtype: str) -> bool:
    """Whether an entry was written for ``source`` in ``dtype`` (a load still checks it)."""
    entry = cache_entry(source, dtype)
    return entry is not None and entry.exists()


def _weights_once(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The state dict with each shared tensor once (safetensors refuses aliases; the tied
    ones come back with ``tie_weights``)."""
    seen, weights = set(), {}
    for name, tensor in model.state_dict().items():
        pointer = tensor.untyped_storage().data_ptr(), tensor.storage_offset()
        if pointer in seen:
            continue
        seen.add(pointer)
        weights[name] = tensor.detach().contiguous()
    return weights


def _import_model_code(folder: Path) -> None:
    """Import what ``CacheEntry._read`` builds the model from (transformers, its auto
    classes, the modules of the model type the entry's config names: seconds of a warm load),
    while another thread checks the entry's files.  Nothing read here is used: the config is
    read again once the check has passed; a config that names no importable model type
    imports nothing more."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer  # noqa: F401
    from transformers.models.auto.configuration_auto import model_type_to_module_name

    with contextlib.suppress(Exception):
        model_type = json.loads((folder / "config.json").read_text())["model_type"]
        name = model_type_to_module_name(str(model_type))
        importlib.import_module(f"transformers.models.{name}.modeling_{name}")


def _model_from_config(config, head: str, dtype: torch.dtype) -> torch.nn.Module:
    """The model's modules with empty parameters (nothing initialised: the cached weights
    replace them) and its buffers computed as usual (rotary frequencies are not saved); in
    this thread only (``engine.dumps.empty_weights``: accelerate's swap acts process-wide)."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    auto = AutoModelForMaskedLM if head == "masked" else AutoModelForCausalLM
    with empty_parameters():
        return auto.from_config(config, dtype=dtype)


def _remove_abandoned(root: Path) -> None:
    for staging in root.glob(".tmp-*"):
        with contextlib.suppress(OSError):
            if time.time() - staging.stat().st_mtime > _ABANDONED_S:
                shutil.rmtree(staging, ignore_errors=True)


def _evict(root: Path, limit: int, keep: str) -> None:
    """Remove the least recently used entries until the cache fits ``limit`` bytes."""
    entries = []
    for folder in root.iterdir():
        manifest = folder / MANIFEST
        if folder.name.startswith(".") or not manifest.is_file():
            continue
        with contextlib.suppress(OSError):
            size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
            entries.append((manifest.stat().st_mtime, size, folder))
    total = sum(size for _, size, _ in entries)
    for _, size, folder in sorted(entries):
        if total <= limit:
            break
        if folder.name != keep:
            shutil.rmtree(folder, ignore_errors=True)
            total -= size
