"""No plotly code ever runs while numpy or pandas is half-imported in another thread.

plotly takes numpy and pandas from ``sys.modules`` without an import statement.  A figure
built while another session's thread was still importing pandas raised "partially
initialized module 'pandas' has no attribute 'Series'" in 9 of 10 sessions opening a fresh
server at once (benchmarks/bench_load.py); Streamlit's own import, which builds its plotly
chart theme, killed the server when ``scripts/serve.py``'s import thread was importing pandas
at the same moment.  So: app.py imports pandas first (an import statement waits for the
import to finish), and serve.py starts its thread only once Streamlit is imported.
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_app_imports_pandas_first():
    """Before anything but the standard library (which imports no plotly)."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    first = next(
        node
        for node in imports
        if (node.module if isinstance(node, ast.ImportFrom) else node.names[0].name).split(".")[0]
        not in sys.stdlib_module_names
    )
    assert isinstance(first, ast.Import)
    assert [alias.name for alias in first.names] == ["pandas"]


def test_serve_starts_its_import_thread_after_streamlit_is_imported():
    tree = ast.parse((ROOT / "scripts" / "serve.py").read_text(encoding="utf-8"))
    main = next(node for node in tree.body if isinstance(node, ast.If))  # if __name__ == ...
    statements = [ast.unparse(statement) for statement in main.body]
    streamlit_at = next(i for i, s in enumerate(statements) if s.startswith("from streamlit"))
    thread_at = next(i for i, s in enumerate(statements) if "threading.Thread(" in s)
    assert streamlit_at < thread_at
