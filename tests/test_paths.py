"""Every repository path that the docs, docstrings and comments name exists.

Read from every tracked text file: Markdown (README.md, docs/, benchmarks/RESULTS.md), Python
(docstrings, comments and strings alike) and TOML comments.  A path is a name under one of the
repository's top folders (``engine/dumps/cli.py``, ``locales/{en,zh}/errors.toml``, a glob
such as ``benchmarks/bench_*.py``); a dotted name (``engine.dumps.live``,
``ui.compute.run_heavy``) must be a module, or a name a module defines.  The few that name
something outside the repository are listed in ``ELSEWHERE``.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOPS = "engine|ui|app_pages|tests|docs|benchmarks|scripts|classroom|locales|deploy"
PATH = re.compile(r"(?<![\w./-])(?:" + TOPS + r")/[\w./{},*<>-]*[\w*}>]")
DOTTED = re.compile(r"(?<![\w./-])(?:engine|ui)(?:\.[A-Za-z_]\w*)+")
TEXT = (".py", ".md", ".toml", ".sh", ".txt", ".cfg", ".yaml", ".yml")
# A file named without its folder ("loop.py", "RESULTS.md", "../DESIGN.md"): some tracked
# file has that name.
BARE = re.compile(r"(?<![\w/-])(?:\.\./)*[\w-]+\.(?:py|md|toml)\b(?![\w/])")

# Named on purpose though not in this repository: what a benchmark run writes.
ELSEWHERE = {
    "benchmarks/results",  # benchmarks/bench_kernels.py's output folder, read by the Kernels page
    "benchmarks/results/bench_kernels.csv",
    "bench_kernels.md",  # benchmarks/bench_kernels.py writes it beside its CSV
    "decoder.py",  # torchscale's decoder, the source of DeepNet's wiring
}


def _tracked() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    this = Path(__file__).resolve()  # its examples name missing paths on purpose
    return [ROOT / f for f in out.splitlines() if f.endswith(TEXT) and ROOT / f != this]


def _braces(text: str) -> list[str]:
    """``locales/{en,zh}/x.toml`` -> both paths."""
    parts = re.split(r"\{([^{}]*)\}", text)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*choices)]


def _exists(name: str) -> bool:
    name = name.rstrip(".,")
    if "<" in name or re.search(r"\{[^,{}]*\}", name):  # a template: app_pages/{page}.py
        return True
    for one in _braces(name):
        one = one.rstrip("/")
        if "*" in one:
            if not any(ROOT.glob(one)):
                return False
        elif not (ROOT / one).exists():
            return False
    return True


@functools.cache
def _tree(module: Path) -> ast.Module:
    return ast.parse(module.read_text())


def _defines(module: Path, name: str) -> bool:
    tree = _tree(module)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        elif isinstance(node, (ast.ImportFrom, ast.Import)):
            if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                return True
    return name in _lazy_exports(tree)


def _lazy_exports(tree: ast.Module) -> set[str]:
    """The names a package's ``__getattr__`` serves from its ``_EXPORTS`` table."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets
        ):
            return {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return set()


def _resolves(dotted: str) -> bool:
    """A module, a package, or a module and a name it defines (then attributes of it)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        module = base.with_suffix(".py")
        if not module.exists() and (base / "__init__.py").exists():
            module = base / "__init__.py"
        if module.exists():
            rest = parts[cut:]
            return not rest or rest[0] in ("py", "toml") or _defines(module, rest[0])
    return False


def _named() -> list[tuple[str, str]]:
    found = []
    tracked = _tracked()
    names = {path.name for path in tracked}
    for path in tracked:
        text = path.read_text(errors="replace")
        where = str(path.relative_to(ROOT))
        if path.suffix == ".toml":
            text = "\n".join(line.partition("#")[2] for line in text.splitlines())
        for name in PATH.findall(text):
            found.append((where, name))
        if path.suffix in (".py", ".md"):
            for name in DOTTED.findall(text):
                found.append((where, name))
        for name in BARE.findall(text):
            if name.startswith("../") or name not in names:
                found.append((where, name))
    return found


NAMED = _named()


def test_the_scan_finds_the_paths_it_should():
    """The scanner itself: it reads this repository's docs (a broken pattern finds nothing)."""
    named = {name for _, name in NAMED}
    assert {"engine/dumps/cli.py", "ui.compute", "locales/{en,zh}/errors.toml"} <= named


def _found(name: str) -> bool:
    if name in ELSEWHERE:
        return True
    if BARE.fullmatch(name):  # collected only when no tracked file has that name
        return False
    return _exists(name) if "/" in name else _resolves(name)


def test_every_path_named_in_the_repository_exists():
    missing = sorted(f"{where}: {name}" for where, name in NAMED if not _found(name))
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize(
    "name, exists",
    [
        ("engine/dumps/cli.py", True),
        ("engine/dumps/nowhere.py", False),
        ("locales/{en,zh}/errors.toml", True),
        ("locales/{en,fr}/errors.toml", False),
        ("benchmarks/bench_*.py", True),
        ("engine/<topic>/", True),
        ("app_pages/{page}.py", True),
    ],
)
def test_a_path_exists_when_every_spelling_of_it_does(name, exists):
    assert _exists(name) == exists


@pytest.mark.parametrize(
    "name, resolves",
    [
        ("engine.dumps.live", True),
        ("ui.compute.run_heavy", True),
        ("engine.depth.limits.check_limits", True),
        ("engine.depth.check_limits", False),  # the package re-exports nothing
        ("engine.dumps.nowhere", False),
        ("ui.compute.nothing_by_this_name", False),
    ],
)
def test_a_dotted_name_resolves_to_a_module_or_a_name_it_defines(name, resolves):
    assert _resolves(name) == resolves
