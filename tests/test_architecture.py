"""The layers of docs/architecture.md, read from the import graph of the source files.

Data flows down only: app.py -> app_pages/ -> ui/ -> classroom/ -> engine/.  Every ``import``
statement of every module (top level or inside a function) is an edge; the test fails on a
cycle between modules, on an import up the layers, on ``engine`` or ``classroom`` importing
streamlit or plotly, on ``classroom`` importing anything of the engine but its errors, on
``ui/figures`` or ``ui/text`` importing streamlit, on a view importing widgets, requests or
``ui.compute`` (views draw), on a widget importing requests or ``ui.compute`` (widgets return
specs: what they name is the page's to ask for), on a request importing streamlit, a view or
a widget (requests ask the engine and draw nothing themselves), and on any module but
``engine/norms/dispatch.py`` importing the Triton kernels.  Read from the calls: a page, a
view or a request that calls engine work itself instead of through ``ui.compute``, and a
widget that calls any engine function at all.
Read from the lines: a module of ``app_pages/`` longer than ``MAX_PAGE_LINES``.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "classroom", "ui", "app_pages")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    files = {_module_name(ROOT / "app.py"): ROOT / "app.py"}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            files[_module_name(path)] = path
    return files


SOURCES = _sources()


def _imports(path: Path) -> set[str]:
    """Every module named by an import statement in ``path`` (absolute names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _internal(name: str) -> str | None:
    """The project module an imported name refers to (a module, or the package holding it)."""
    while name:
        if name in SOURCES:
            return name
        name = name.rpartition(".")[0]
    return None


@functools.cache
def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(project modules each module imports, every name it imports), read once per process
    when a test first asks: parsing every source file at import would cost each worker's
    collection seconds."""
    external = {module: _imports(path) for module, path in SOURCES.items()}
    graph = {
        module: {
            target for name in names if (target := _internal(name)) is not None and target != module
        }
        for module, names in external.items()
    }
    return graph, external


def graph() -> dict[str, set[str]]:
    return _graph()[0]


def external(module: str) -> set[str]:
    return _graph()[1][module]


def _layer(module: str) -> int:
    """0 = engine, 1 = classroom, 2 = ui, 3 = app_pages, 4 = app."""
    layers = {"engine": 0, "classroom": 1, "ui": 2, "app_pages": 3, "app": 4}
    return layers[module.split(".")[0]]


def _is_package_of(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def test_the_graph_covers_the_project():
    assert "engine.norms.dispatch" in graph() and "ui.compute" in graph() and "app" in graph()
    assert "engine.errors" in graph()["classroom.checks"]
    assert "engine.kernels.row_norm_function" in graph()["engine.norms.dispatch"]


def test_no_import_cycle():
    # A package importing its own submodules (an __init__ re-exporting) is not a cycle.
    edges = {m: {t for t in targets if not _is_package_of(m, t)} for m, targets in graph().items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycle = stack[stack.index(target) :] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module)


def test_no_import_goes_up_the_layers():
    upward = [
        f"{m} -> {t}" for m, targets in graph().items() for t in targets if _layer(t) > _layer(m)
    ]
    assert not upward


@pytest.mark.parametrize(
    "module", sorted(m for m in SOURCES if m.startswith(("engine", "classroom")))
)
def test_engine_and_classroom_never_import_the_ui_libraries(module):
    banned = {n for n in external(module) if n.split(".")[0] in ("streamlit", "plotly")}
    assert not banned


@pytest.mark.parametrize("module", sorted(m for m in SOURCES if m.startswith("classroom")))
def test_classroom_takes_only_the_refusal_type_from_the_engine(module):
    """Class mode is storage, not computation: no torch, no engine function."""
    assert not {t for t in graph()[module] if t.startswith("engine") and t != "engine.errors"}
    assert not {n for n in external(module) if n.split(".")[0] == "torch"}


@pytest.mark.parametrize(
    "module", sorted(m for m in SOURCES if m.startswith(("ui.figures", "ui.text")))
)
def test_figures_and_text_builders_never_import_streamlit(module):
    assert not {n for n in external(module) if n.split(".")[0] == "streamlit"}
    # no streamlit at import: ui.labels only reads the locale files through ui.i18n
    pure = ("engine", "classroom", "ui.figures", "ui.text", "ui.formatting", "ui.i18n", "ui.labels")
    assert not {t for t in graph()[module] if not t.startswith(pure)}


@pytest.mark.parametrize("module", sorted(m for m in SOURCES if m.startswith("ui.views")))
def test_views_draw_what_they_are_given(module):
    """No widget, and no engine work: a page asks (``ui.requests``, ``ui.compute``) and hands
    the result to the view."""
    banned = ("ui.widgets", "ui.requests", "ui.compute")
    assert not {t for t in graph()[module] if t.startswith(banned)}


@pytest.mark.parametrize("module", sorted(m for m in SOURCES if m.startswith("ui.widgets")))
def test_widgets_ask_the_engine_nothing(module):
    """A widget turns inputs into specs (or the listings the page hands it into menus): the
    page asks ``ui.requests`` / ``ui.compute`` for what they name, between widgets and views."""
    assert not {t for t in graph()[module] if t.startswith(("ui.compute", "ui.requests"))}


@pytest.mark.parametrize("module", sorted(m for m in SOURCES if m.startswith("ui.requests")))
def test_requests_ask_and_draw_nothing(module):
    """A request is ``compute`` or ``run_heavy`` calls (which draw their own button, labels
    and progress) and returns the result; the page hands it to a view."""
    assert not {t for t in graph()[module] if t.startswith(("ui.views", "ui.widgets"))}
    assert not {n for n in external(module) if n.split(".")[0] == "streamlit"}


MAX_PAGE_LINES = 60  # a page script only chooses sections and hands specs and results on


@pytest.mark.parametrize("module", sorted(m for m in SOURCES if m.startswith("app_pages.")))
def test_pages_stay_thin(module):
    assert len(SOURCES[module].read_text(encoding="utf-8").splitlines()) <= MAX_PAGE_LINES


def test_only_the_dispatch_module_imports_the_kernels():
    importers = {
        m
        for m, targets in graph().items()
        if not m.startswith("engine.kernels")
        and any(t.startswith("engine.kernels") for t in targets)
    }
    assert importers == {"engine.norms.dispatch"}


def test_pages_compute_only_through_ui_compute():
    """A page script reaches engine work through ui.compute jobs, never a cache of its own."""
    for module in (m for m in SOURCES if m.startswith("app_pages.")):
        source = SOURCES[module].read_text(encoding="utf-8")
        assert "st.cache_data" not in source and "st.cache_resource" not in source, module
        assert "session_state" not in source, module


TABLE_LOOKUPS = {"index", "get", "count", "keys", "values", "items"}


def _engine_calls(path: Path) -> set[str]:
    """The engine functions ``path`` calls itself: ``name(...)`` or ``module.name(...)`` for a
    name imported from ``engine``; a class (a spec, a result) built is not a call of work, and
    a function handed to ``ui.compute`` is not called here, and a method of an engine constant
    (``LIVE_PROMPTS.index(text)``) is a lookup in a table.  Not seen: a method of an engine
    object the code is handed (a lookup such as ``catalog.family(id)``), or an engine module
    bound by a plain ``import ... as`` (nothing outside ``engine/`` imports one that way)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine"):
            imported.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    calls = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in imported:
            name = imported[func.id]
        elif isinstance(func, ast.Attribute) and getattr(func.value, "id", None) in imported:
            if func.value.id.isupper() and func.attr in TABLE_LOOKUPS:  # a constant's table
                continue
            name = f"{imported[func.value.id]}.{func.attr}"
        else:
            continue
        if not name.rpartition(".")[2][:1].isupper():
            calls.add(name)
    return calls


@pytest.mark.parametrize(
    "module",
    sorted(
        m
        for m in SOURCES
        if m.startswith(("app_pages.", "ui.widgets.", "ui.views.", "ui.requests."))
    ),
)
def test_pages_widgets_views_and_requests_reach_engine_work_only_through_ui_compute(module):
    """Widgets return specs, views draw, requests ask: engine work goes through ``ui.compute``
    (which widgets and views do not import)."""
    assert not _engine_calls(SOURCES[module])
