"""A throwaway PostgreSQL server in a temporary folder, on a Unix socket only.

For the tests and benchmarks of the class mode, and to try several app processes on one
machine without installing a database service: ``initdb`` and ``pg_ctl`` from Debian's
``postgresql`` package (``/usr/lib/postgresql/<version>/bin``, or on the PATH).  PostgreSQL
refuses to run as root; as root the server runs as the ``postgres`` user (or ``nobody``).

    with temporary_postgres() as url:
        store = ClassStore(Database(url), ANSWER_IDS)
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def postgres_bin() -> Path | None:
    """The folder with ``initdb`` and ``pg_ctl`` (the newest Debian version), or None."""
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if versions:
        return Path(versions[-1]).parent
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found else None


def _server_user() -> str | None:
    """Who runs the server: ourselves, or (as root) an unprivileged user."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("PostgreSQL cannot run as root and there is no postgres or nobody user")


@contextmanager
def temporary_postgres(durable: bool = False) -> Iterator[str]:
    """Start a server, yield its URL (database ``postgres``, user ``normscope``), stop it.

    ``durable=False`` turns fsync off (tests: nothing here must survive a crash);
    ``durable=True`` keeps PostgreSQL's defaults (benchmarks).
    """
    bindir = postgres_bin()
    if bindir is None:
        raise FileNotFoundError("initdb not found: install Debian's postgresql package")
    user = _server_user()
    folder = Path(tempfile.mkdtemp(prefix="normscope-pg-"))
    data = folder / "data"
    if user is not None:
        shutil.chown(folder, user=user)

    def run(*command: str) -> None:
        subprocess.run(command, check=True, capture_output=True, cwd=folder, user=user)

    options = f"-k {folder} -c listen_addresses='' -c max_connections=100"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "normscope", "-A", "trust", "-E", "UTF8")
        run(
            str(bindir / "pg_ctl"), "-D", str(data), "-l", str(folder / "log"), "-o", options,
            "-w", "start",
        )  # fmt: skip
        try:
            yield f"postgresql:///postgres?host={folder}&user=normscope"
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
