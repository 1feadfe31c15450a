"""What every test checks: each refusal the engine made during it has an English message whose
placeholders its parameters fill.

``EngineError`` records every refusal it builds while the suite runs; after each test the
records are checked against ``locales/en/errors.toml`` (``tests/ui/test_i18n.py`` keeps the
other languages' keys and placeholders equal to English).  So every key the suite raises,
even one a caller catches and turns into something else, is checked by raising it.

It also gives torch one OpenMP thread in every test process and in the servers they start,
unless the environment says otherwise: ``scripts/test.sh`` runs a worker per core and one more,
each with its own server and browser, and two threads per process on two shared cores spend
their time spin-waiting for each other.  And each ``AppTest`` scans every installed
distribution for Streamlit components once per instance, which the page and URL tests make
hundreds of: here the scan runs once per process, since nothing is installed while the suite
runs.  Both measured in benchmarks/RESULTS.md, "One OpenMP thread per test process; one
component scan per process".
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch is imported, below or by a test

import functools

import pytest
from streamlit.components.v2 import manifest_scanner

from engine.errors import EngineError, messages
from scripts.local_app import free_port, start_server, wait_healthy

manifest_scanner.scan_component_manifests = functools.cache(
    manifest_scanner.scan_component_manifests
)


def pytest_addoption(parser):
    parser.addoption(
        "--screenshots",
        action="store_true",
        help="save what the browser tests' pages show under artifacts/e2e/ (tests/e2e/conftest.py)",
    )


_RAISED: list[EngineError] = []
_build = EngineError.__init__


def _recorded(self, *args, **kwargs):
    _build(self, *args, **kwargs)
    _RAISED.append(self)


EngineError.__init__ = _recorded


@pytest.fixture(autouse=True)
def _every_refusal_has_its_message(request):
    _RAISED.clear()
    yield
    if request.node.get_closest_marker("unfilled_refusals"):
        return  # the test builds refusals without a message on purpose
    for error in _RAISED:
        template = messages().get(error.key)
        assert template is not None, f"{error.key} has no message in locales/en/errors.toml"
        try:
            template.format(**error.params)
        except (KeyError, IndexError, ValueError) as failure:
            pytest.fail(
                f"{error.key}: its parameters {error.params} do not fill its message ({failure!r})"
            )
    _RAISED.clear()


# One real NormScope server per worker, started when a test first asks for it: the browser
# tests and the tests that speak Streamlit's protocol (tests/app/test_sections.py) share it.
@pytest.fixture(scope="session")
def server():
    """The running server: (url, process)."""
    port = free_port()
    process = start_server(port)
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_healthy(url, process, 120.0)
        except (RuntimeError, TimeoutError) as error:
            pytest.fail(f"the NormScope server did not start: {error}")
        yield url, process
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(scope="session")
def server_url(server):
    return server[0]
