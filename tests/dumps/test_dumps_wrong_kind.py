"""A file of another kind than its name says, or with a part no writer makes, is refused by
saying what it is and what is accepted, in English and Chinese: no C++ check's words, no
memory address, no Python repr."""

from __future__ import annotations

import re

import pytest

from tests.dumps.test_dumps_bad_input import refusal
from tests.untranslated import english_runs
from ui.i18n import translate

_INTERNALS = re.compile(r"0x[0-9a-f]{6,}|<\w+[ .]|enforce fail|inline_container|ZipInfo")


def _refused_in_both(source, key: str) -> str:
    """The English message (no internals); the Chinese one holds no English sentence."""
    error = refusal(source, key)
    english = str(error)
    assert not _INTERNALS.search(english), english
    chinese = translate(f"errors.{error.key}", "zh", **error.params)
    assert not english_runs(chinese), chinese
    assert error.params["file"] in chinese and "可接受" in chinese
    return english


@pytest.mark.parametrize(
    "content",
    [b"these are just some notes, not tensors\n", b"\x93NUMPY\x01\x00v\x00{'descr': '<f4'"],
    ids=["text", "npy"],
)
def test_a_file_whose_first_bytes_claim_a_header_past_its_end_is_not_safetensors(tmp_path, content):
    """Before the header's bound: text read as a length is astronomically long."""
    path = tmp_path / "acts.safetensors"
    path.write_bytes(content)
    message = _refused_in_both(path, "not_safetensors")
    assert "is not a safetensors file" in message and "long names" not in message
    assert f"the whole file is {len(content)} bytes" in message
