"""Start the NormScope server, importing the engine while the server boots.

A fresh server's first page view otherwise waits for torch and the engine to import
(~1.5 s on a 2-core CPU) after the browser has connected; here that import runs in a
background thread from the moment the process starts, overlapping the server's start-up
and the browser's loading of the frontend.  Arguments go to ``streamlit run app.py``.
"""

import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _import_engine() -> None:
    sys.path.insert(0, str(ROOT))
    import engine.norms.worked  # noqa: F401  (torch, triton and the Vector Lab's engine path)


if __name__ == "__main__":
    threading.Thread(target=_import_engine, name="import-engine", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *sys.argv[1:]]
    sys.exit(cli.main())
