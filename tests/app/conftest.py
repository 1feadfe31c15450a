from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from ui import compute

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def app() -> AppTest:
    """The whole app as a user opens it (English), caches cleared."""
    st.cache_data.clear()
    st.cache_resource.clear()
    compute.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "en"
    return at.run()
