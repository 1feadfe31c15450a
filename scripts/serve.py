"""Start the NormScope server, importing the engine and pandas while the server boots.

A fresh server's first page view otherwise waits for torch, the engine and pandas to import
(~1.5 s on a 2-core CPU) after the browser has connected; here those imports run in a
background thread while the server starts and the browser loads the frontend.  The first
script run blocks on the import locks until they are done, and imports nothing twice.

The thread starts only once Streamlit itself is imported.  Streamlit's import builds plotly
objects (its chart theme), and plotly takes numpy and pandas from ``sys.modules`` without an
import statement: with this thread importing pandas at the same moment, the server died at
start ("partially initialized module 'pandas' has no attribute 'Series'").  For the same
reason ``app.py`` imports pandas before anything else.  Arguments go to
``streamlit run app.py``.
"""

import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _import_heavy_modules() -> None:
    sys.path.insert(0, str(ROOT))
    import pandas  # noqa: F401  (app.py imports it first thing)

    import engine.norms.worked  # noqa: F401  (torch and the Vector Lab's engine path)


if __name__ == "__main__":
    from streamlit.web import cli  # Streamlit whole (and its plotly theme) before the thread

    threading.Thread(target=_import_heavy_modules, name="import-heavy-modules", daemon=True).start()
    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *sys.argv[1:]]
    sys.exit(cli.main())
