"""What the sidebar's backend label costs a fresh server: no Triton import, the same version."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a fresh interpreter imports torch
def test_describe_backend_does_not_import_triton():
    """Importing triton costs ~0.3-0.4 s of a first page view; the label must not need it."""
    code = "import sys, engine; engine.describe_backend(); print('triton' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="Triton not installed")
def test_triton_version_is_the_one_triton_reports():
    import triton

    from engine import describe_backend

    assert describe_backend().triton_version == triton.__version__
