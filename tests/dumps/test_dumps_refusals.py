"""What a dump reading refuses before it starts, and the upload limit the server shares.

Every refusal's message is checked where it is raised (``tests/conftest.py``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from engine.config import DumpSpec
from engine.errors import EngineError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "field, value",
    [
        ("axes", "TBd"),
        ("layer_order", "random"),
        ("top_k", 2),
        ("massive_ratio", 0.0),
        ("stream", ""),
    ],
)
def test_dump_spec_refuses_bad_values_with_a_translatable_key(field, value):
    with pytest.raises(EngineError) as caught:
        DumpSpec(**{field: value})
    assert caught.value.key.startswith(("config.", "axes.")), caught.value.key
    assert caught.value.params["name"] == field
    assert str(caught.value).startswith(field)


def test_streamlit_upload_limit_is_the_engine_limit():
    from engine.dumps.limits import UPLOAD_LIMIT_MB

    with open(ROOT / ".streamlit" / "config.toml", "rb") as handle:
        assert tomllib.load(handle)["server"]["maxUploadSize"] == UPLOAD_LIMIT_MB
