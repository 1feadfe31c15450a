"""Files the dumps tools write (a capture, a report's JSON and CSV files): whole or not at all,
and never over a file being read."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from engine.dumps.refusals import capture_error


def write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, renamed when whole: a
    failed write (a full disk, a quota, a vanished directory) leaves no damaged file and is
    refused with the system's reason.  A link is followed (the file it names is replaced, not
    the link); what is not a file (``/dev/stdout``, a pipe) is written in place: renamed
    over, a device of the system was replaced by a file."""
    try:
        if path.exists() and not path.is_file():
            with open(path, "wb") as stream:
                stream.write(data)
            return
        path = Path(os.path.realpath(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        try:
            partial.write_bytes(data)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
    except OSError as exc:
        detail = exc.strerror or type(exc).__name__
        raise capture_error("out_write_failed", path=str(path), detail=detail) from None


def refuse_an_input(path: Path, inputs: Iterable[Path]) -> None:
    """Refuse an output ``path`` that is one of the files being read: the report written
    there replaced the dump it was made from."""
    if not path.exists():
        return
    for source in inputs:
        try:
            same = os.path.samefile(path, source)
        except OSError:  # an input gone since it was listed
            continue
        if same:
            raise capture_error("out_is_input", path=str(path))
