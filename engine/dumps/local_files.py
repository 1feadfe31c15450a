"""Models on the server's own disk, in folders an operator names; nothing else is read.

``NORMSCOPE_MODEL_DIRS`` (folders separated by ``os.pathsep``, ``:`` on Linux) names where
models live; with no setting only the built-in model is offered.  A folder's models are the
Hugging Face ``save_pretrained`` directories (a ``config.json`` beside ``*.safetensors`` or
``*.bin`` weights) and the ``.gguf`` files in it, at most ``MAX_DEPTH`` levels down.

Path safety: every candidate is resolved (symlinks followed, ``..`` removed) and kept only
when the result still lies inside the resolved folder, so a link that leads out is skipped,
never followed; a page names a model by its id (the folder's position and the path inside
it), and ``find_model`` accepts only an id the listing made, so a typed or linked path
(``../../etc``) is refused, not opened.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engine.dumps.refusals import capture_error

MODEL_DIRS_VARIABLE = "NORMSCOPE_MODEL_DIRS"
MAX_DEPTH = 3  # levels below a named folder that are looked at
MAX_LISTED = 200  # models listed at most (the first ones in sorted order)
WEIGHT_SUFFIXES = (".safetensors", ".bin")


@dataclass(frozen=True)
class LocalModel:
    id: str  # "<folder number>/<path inside the folder>": what a page and a link name
    path: str  # the resolved path: a directory (save_pretrained) or a .gguf file
    kind: str  # "pretrained" or "gguf"


def named_folders(variable: str = MODEL_DIRS_VARIABLE) -> tuple[Path, ...]:
    """The folders the operator named that exist, resolved (none: no setting)."""
    named = os.environ.get(variable, "")
    folders = []
    for part in named.split(os.pathsep):
        if part.strip():
            folder = Path(part.strip()).expanduser()
            if folder.is_dir():
                folders.append(folder.resolve())
    return tuple(folders)


def inside(folder: Path, candidate: Path) -> Path | None:
    """``candidate`` resolved, when it exists and lies inside ``folder`` (resolved)."""
    try:
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError):  # gone, a loop of links, no permission
        return None
    return resolved if resolved.is_relative_to(folder) else None


def _is_pretrained(directory: Path) -> bool:
    try:
        names = {entry.name for entry in directory.iterdir()}
    except OSError:
        return False
    return "config.json" in names and any(n.endswith(WEIGHT_SUFFIXES) for n in names)


def _walk(folder: Path, directory: Path, depth: int, found: list[tuple[Path, str]]) -> None:
    if len(found) >= MAX_LISTED:
        return
    if _is_pretrained(directory):
        found.append((directory, "pretrained"))
        return
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return
    for entry in entries:
        real = inside(folder, entry)
        if real is None:
            continue  # a link that leads out of the folder, or a broken one
        if real.is_file() and real.suffix.lower() == ".gguf":
            found.append((real, "gguf"))
        elif real.is_dir() and depth < MAX_DEPTH:
            _walk(folder, real, depth + 1, found)
        if len(found) >= MAX_LISTED:
            return


def list_models(folders: tuple[Path, ...] | None = None) -> tuple[LocalModel, ...]:
    """Every model in the named folders (``named_folders()`` by default), sorted by id."""
    folders = named_folders() if folders is None else folders
    models = []
    for number, folder in enumerate(folders):
        found: list[tuple[Path, str]] = []
        _walk(folder, folder, 0, found)
        for path, kind in found:
            relative = path.relative_to(folder).as_posix()
            models.append(LocalModel(f"{number}/{relative}", str(path), kind))
    return tuple(sorted(set(models), key=lambda m: m.id))[:MAX_LISTED]


def find_model(model_id: str, models: tuple[LocalModel, ...]) -> LocalModel:
    """The listed model ``model_id``; any other id is refused, naming what is listed."""
    for model in models:
        if model.id == model_id:
            return model
    listed = ", ".join(m.id for m in models[:10]) or "—"
    raise capture_error("unknown_model", value=model_id[:200], listed=listed)
