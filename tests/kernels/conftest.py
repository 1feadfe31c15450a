"""Run the Triton kernels on the CPU, interpreted, for the tests in this folder.

Triton fixes its execution mode when a function is decorated with ``@triton.jit``: its own
library (``tl.sum``, ...) when ``triton`` is first imported, our kernels when
``engine.kernels`` is.  So this file, imported by pytest before any test module of this
folder (and, in a whole-suite run, before any test *runs*: pytest collects every folder
first, and no module in the other folders imports triton at import time), sets
``TRITON_INTERPRET=1``, imports triton and ``engine.kernels`` under it, and then puts the
environment back as it was.  Other folders see the environment they expect (for them
``backend="triton"`` on a CPU tensor is refused); the tests here get the variable again,
per test, because ``engine.backend.resolve_backend`` reads it.

On a machine with CUDA (and no explicit ``TRITON_INTERPRET``) the kernels stay compiled:
the GPU-marked tests in ``test_gpu.py`` run, and the interpreter tests are skipped (CI,
which has no GPU, runs them).
"""

from __future__ import annotations

import os
import sys

import pytest
import torch

_REQUESTED = os.environ.get("TRITON_INTERPRET")
WANT_INTERPRETER = _REQUESTED == "1" if _REQUESTED is not None else not torch.cuda.is_available()
_TRITON_WAS_IMPORTED = "triton" in sys.modules

if WANT_INTERPRETER and not _TRITON_WAS_IMPORTED:
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        import triton  # noqa: F401  (decorates triton's library in interpreter mode)

        # decorates our kernels in interpreter mode
        import engine.kernels.channel_stats  # noqa: F401
        import engine.kernels.row_norm_function  # noqa: F401
    finally:
        if _REQUESTED is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = _REQUESTED

from engine.kernels._launch import interpreter_active  # noqa: E402

INTERPRETER = interpreter_active()


@pytest.fixture(autouse=True)
def triton_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """Interpreter tests get TRITON_INTERPRET=1; GPU-marked tests need compiled kernels."""
    if request.node.get_closest_marker("gpu") is not None:
        if not torch.cuda.is_available():
            pytest.skip("needs a CUDA GPU")
        if INTERPRETER:
            pytest.skip("triton was imported in interpreter mode in this process")
        yield
        return
    if not INTERPRETER:
        if torch.cuda.is_available():
            pytest.skip("CUDA present: kernels are compiled; the interpreter tests run in CI")
        pytest.fail(
            "triton was imported before tests/kernels/conftest.py could set TRITON_INTERPRET=1;"
            " run with TRITON_INTERPRET=1 in the environment, or keep triton imports out of "
            "test-module import time"
        )
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    yield


class LaunchLog:
    """Kernel launches since the fixture was created (proof the kernels really ran)."""

    def __init__(self) -> None:
        from engine.kernels._launch import launch_counts

        self._counts = launch_counts
        self._start = launch_counts()

    def since(self, name: str) -> int:
        return self._counts().get(name, 0) - self._start.get(name, 0)


@pytest.fixture
def launches() -> LaunchLog:
    return LaunchLog()


@pytest.fixture(autouse=True)
def seeded() -> None:
    torch.manual_seed(0)
