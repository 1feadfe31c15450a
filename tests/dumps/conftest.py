"""Fixtures of the dumps tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def gguf_reads(monkeypatch) -> list[str]:
    """Every GGUF file transformers opens and parses whole (its only reader is
    gguf.GGUFReader, whose constructor parses every field)."""
    import gguf

    opened, reader = [], gguf.GGUFReader

    def counting(path, *args, **kwargs):
        opened.append(str(path))
        return reader(path, *args, **kwargs)

    monkeypatch.setattr(gguf, "GGUFReader", counting)
    return opened
