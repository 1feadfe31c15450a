"""A child interpreter that reads dumps as the page does and reports each read's peak memory.

``MemoryProbe().read(path, upload=True)`` sends one request; the child reads the file's
bytes first when ``upload`` (Streamlit holds an upload before the page sees it), resets its
peak resident size (Linux: "5" written to ``/proc/self/clear_refs``), runs
``engine.dumps.report`` on the ``Upload`` (or on the path) and then ``report_tables``, as the
page does, and answers: ``outcome`` "report", "refused" (an ``EngineError``: ``key`` and
``message``) or "crashed" (any other exception, MemoryError past ``DATA_LIMIT_BYTES``
included: ``message``), and ``peak`` (bytes of peak resident size above the size before the
read).  One child serves every request, so the interpreter and torch are loaded once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA_LIMIT_BYTES = 6 * 2**30  # the child's private memory at most (RLIMIT_DATA)

_CHILD = r"""
import json, re, resource, sys, traceback
sys.path.insert(0, sys.argv[1])
from engine.dumps.report import report
from engine.dumps.sources import Upload
from engine.dumps.tables import report_tables
from engine.errors import EngineError

# A runaway read fails with MemoryError here instead of taking the test machine down.
resource.setrlimit(resource.RLIMIT_DATA, (int(sys.argv[2]), int(sys.argv[2])))

def resident(key):
    text = open("/proc/self/status").read()
    return int(re.search(rf"^{key}:\s+(\d+) kB", text, re.M).group(1)) * 1024

for line in sys.stdin:
    request = json.loads(line)
    path = request["path"]
    source = Upload(path.rsplit("/", 1)[-1], open(path, "rb").read()) if request["upload"] else path
    open("/proc/self/clear_refs", "w").write("5")
    before = resident("VmRSS")
    try:
        report_tables(report(source))
        answer = {"outcome": "report"}
    except EngineError as error:
        answer = {"outcome": "refused", "key": error.key, "message": str(error)}
    except BaseException as exc:
        lines = traceback.format_exception(exc)
        answer = {"outcome": "crashed", "message": "".join(lines)[-3000:]}
    del source
    answer["peak"] = resident("VmHWM") - before
    print(json.dumps(answer), flush=True)
"""


class MemoryProbe:
    """The child interpreter; ``close()`` (or a ``with`` block) ends it."""

    def __init__(self) -> None:
        self._child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(ROOT), str(DATA_LIMIT_BYTES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )

    def read(self, path: str | Path, upload: bool) -> dict:
        """Read one dump in the child; its outcome and peak memory (see the module doc)."""
        self._child.stdin.write(json.dumps({"path": str(path), "upload": upload}) + "\n")
        self._child.stdin.flush()
        line = self._child.stdout.readline()
        if not line:
            code = self._child.wait(30)
            raise AssertionError(f"the reading process died (exit status {code}) on {path}")
        return json.loads(line)

    def close(self) -> None:
        self._child.stdin.close()
        self._child.wait(30)

    def __enter__(self) -> MemoryProbe:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
