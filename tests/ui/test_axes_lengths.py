"""The Axes page's sentence lengths read numbers as every number field does (``as_ascii``):
a true minus sign, full-width digits and Chinese separators, as typed on a Chinese keyboard."""

from __future__ import annotations

import pytest

from ui.widgets.axes import parse_lengths


@pytest.mark.parametrize(
    ("text", "lengths"),
    [
        ("16, 12, 8, 4", (16, 12, 8, 4)),
        ("１６，１２、８；４", (16, 12, 8, 4)),
        ("16, −4", (16, -4)),  # read, then refused by the engine as a negative length
        ("－４ ＋３", (-4, 3)),
        ("", ()),
    ],
)
def test_lengths_are_read_like_every_other_number_field(text, lengths):
    assert parse_lengths(text) == (lengths, None)


@pytest.mark.parametrize("text", ["16, 4.5", "16, 4e1", "−−4"])
def test_what_is_not_a_whole_number_is_said(text, monkeypatch):
    monkeypatch.setattr("ui.i18n.current_language", lambda: "en")
    lengths, error = parse_lengths(text)
    assert lengths == () and "is not a whole number" in error
