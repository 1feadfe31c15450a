"""Models and dump files on the server's own disk, in folders an operator names; nothing
else is read.

``NORMSCOPE_MODEL_DIRS`` (folders separated by ``os.pathsep``, ``:`` on Linux) names where
models live; with no setting only the built-in model is offered.  A folder's models are the
Hugging Face ``save_pretrained`` directories (a ``config.json`` beside ``*.safetensors`` or
``*.bin`` weights) and the ``.gguf`` files in it, at most ``MAX_DEPTH`` levels down.
``NORMSCOPE_DUMP_DIRS`` names, the same way, where activation dumps live: every file with a
suffix the dump readers accept (``engine.dumps.limits.ACCEPTED_SUFFIXES``), of any size, at
most ``MAX_DEPTH`` levels down, except inside a ``save_pretrained`` directory (its weights
are a model, not a dump); with no setting only the example and the upload are offered.

Path safety: every candidate is resolved (symlinks followed, ``..`` removed) and kept only
when the result still lies inside the resolved folder, so a link that leads out is skipped,
never followed; a page names a model or a dump by its id (the folder's position and the path
inside it), and ``find_model`` / ``find_dump`` accept only an id the listing made, so a typed
or linked path (``../../etc``) is refused, not opened.  A listing looks at ``MAX_SCANNED``
directory entries at most, in the order the file system gives them, so a folder of a million
files is listed in bounded time (then only some of its files are offered) and lists
``MAX_LISTED`` files at most, in sorted order within each directory.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.dumps.limits import ACCEPTED_SUFFIXES
from engine.dumps.refusals import capture_error, refuse
from engine.errors import Listing

MODEL_DIRS_VARIABLE = "NORMSCOPE_MODEL_DIRS"
DUMP_DIRS_VARIABLE = "NORMSCOPE_DUMP_DIRS"
MAX_DEPTH = 3  # levels below a named folder that are looked at
MAX_LISTED = 200  # models (or dumps) listed at most (the first ones in sorted order)
MAX_SCANNED = 20_000  # directory entries one listing looks at, over all its folders
WEIGHT_SUFFIXES = (".safetensors", ".bin")
# The longest id a listing makes, what a link must carry: a folder's number, "/", and a path
# inside it, which Linux keeps under 4,096 bytes (PATH_MAX; a link inside the folder may lead
# deeper than MAX_DEPTH); a longer one is not listed.
MAX_ID_CHARS = 4_200


@dataclass(frozen=True)
class LocalModel:
    id: str  # "<folder number>/<path inside the folder>": what a page and a link name
    path: str  # the resolved path: a directory (save_pretrained) or a .gguf file
    kind: str  # "pretrained" or "gguf"


@dataclass(frozen=True)
class LocalDump:
    id: str  # as LocalModel's
    path: str  # the resolved path of the file
    size: int  # bytes
    modified_ns: int  # last modification: with the size, what tells a rewritten file apart


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


def _is_pretrained(names: set[str]) -> bool:
    """A ``save_pretrained`` directory, from its entries' names."""
    return "config.json" in names and any(n.endswith(WEIGHT_SUFFIXES) for n in names)


def _walk(
    folders: tuple[Path, ...], suffixes: tuple[str, ...], pretrained: str | None
) -> list[tuple[str, Path, str]]:
    """(id, path, kind) of the files of ``folders`` with one of ``suffixes`` (kind: the suffix
    without its dot), sorted by id, each path once; a ``save_pretrained`` directory is listed
    as ``pretrained`` (None: skipped)."""
    found: list[tuple[int, Path, Path, str]] = []  # folder number, folder, path, kind
    scanned = 0

    def visit(number: int, folder: Path, directory: Path, depth: int) -> None:
        nonlocal scanned
        try:  # at most the entries still allowed: a huge folder is not read whole
            left = MAX_SCANNED - scanned
            entries = sorted(itertools.islice(os.scandir(directory), left), key=lambda e: e.name)
        except OSError:
            return
        scanned += len(entries)
        if _is_pretrained({entry.name for entry in entries}):
            if pretrained is not None:
                found.append((number, folder, directory, pretrained))
            return
        for entry in entries:
            if len(found) >= MAX_LISTED:
                return
            real = inside(folder, Path(entry.path))
            if real is None:
                continue  # a link that leads out of the folder, or a broken one
            if real.is_file() and real.suffix.lower() in suffixes:
                found.append((number, folder, real, real.suffix.lower()[1:]))
            elif real.is_dir() and depth < MAX_DEPTH and scanned < MAX_SCANNED:
                visit(number, folder, real, depth + 1)

    for number, folder in enumerate(folders):
        visit(number, folder, folder, 0)
    ids = {f"{n}/{path.relative_to(folder).as_posix()}": (path, kind)
           for n, folder, path, kind in found}  # fmt: skip
    ids = {i: listed for i, listed in ids.items() if len(i) <= MAX_ID_CHARS}
    return [(i, path, kind) for i, (path, kind) in sorted(ids.items())][:MAX_LISTED]


def list_models(folders: tuple[Path, ...] | None = None) -> tuple[LocalModel, ...]:
    """Every model in the named folders (``named_folders()`` by default), sorted by id."""
    folders = named_folders() if folders is None else folders
    listed = _walk(folders, (".gguf",), "pretrained")
    return tuple(LocalModel(i, str(path), kind) for i, path, kind in listed)


def list_dumps(folders: tuple[Path, ...] | None = None) -> tuple[LocalDump, ...]:
    """Every dump file in the named folders (``named_folders(DUMP_DIRS_VARIABLE)`` by
    default), sorted by id."""
    folders = named_folders(DUMP_DIRS_VARIABLE) if folders is None else folders
    dumps = []
    for dump_id, path, _ in _walk(folders, ACCEPTED_SUFFIXES, None):
        try:
            stat = path.stat()
        except OSError:  # removed since it was seen
            continue
        dumps.append(LocalDump(dump_id, str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(dumps)


def _listed(wanted: str, items: tuple, refusal: Callable[..., Exception]):
    """The listed item whose id is ``wanted``; any other id is refused, naming what is listed."""
    for item in items:
        if item.id == wanted:
            return item
    listed = Listing(i.id for i in items[:10]) if items else "—"  # 、 between them in Chinese
    raise refusal(value=wanted[:200], listed=listed)


def find_model(model_id: str, models: tuple[LocalModel, ...]) -> LocalModel:
    """The listed model ``model_id`` (``capture.unknown_model`` for any other id;
    ``capture.no_models`` where nothing is listed, which has no list to name)."""
    if not models:
        raise capture_error("no_models", value=model_id[:200])
    return _listed(model_id, models, lambda **why: capture_error("unknown_model", **why))


def unchanged_path(dump: LocalDump) -> str:
    """``dump``'s path, refused (``dumps.dump_changed``) unless it is still the file that was
    listed: no link now (the listing is kept for seconds; a file swapped for a link leading
    out in that time was followed), the same size and modification time."""
    path = Path(dump.path)
    try:
        found = path.lstat()  # the entry itself, not what a link names
    except OSError:
        found = None
    same = found is not None and not path.is_symlink() and path.resolve() == path
    if not (same and found.st_size == dump.size and found.st_mtime_ns == dump.modified_ns):
        raise refuse("dump_changed", value=dump.id[:200])
    return dump.path


def find_dump(dump_id: str, dumps: tuple[LocalDump, ...]) -> LocalDump:
    """The listed dump file ``dump_id`` (``dumps.unknown_dump`` for any other id)."""
    return _listed(dump_id, dumps, lambda **why: refuse("unknown_dump", **why))
