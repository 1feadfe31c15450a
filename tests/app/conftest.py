from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from ui import compute

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _estimates_from_the_cost_model_only(monkeypatch):
    """Page tests see the engine's cost model, not this machine's momentary load.

    On a server, ``ui.compute`` scales estimates by how slowly recent jobs ran; on a test
    machine shared with other work that would turn a default page into "press to start"
    at random.  ``tests/ui/test_compute.py`` tests the learning itself.
    """
    monkeypatch.setattr(compute, "LEARN_FROM_S", float("inf"))
    compute.clear()


@pytest.fixture
def app() -> AppTest:
    """The whole app as a user opens it (English), caches cleared."""
    st.cache_data.clear()
    st.cache_resource.clear()
    compute.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "en"
    return at.run()
