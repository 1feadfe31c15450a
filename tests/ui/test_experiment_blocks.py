"""The Experiments page's block sets: what a typed or linked text names, and what it refuses
(the model's own depth is checked when the experiment runs:
tests/app/test_experiments_page.py)."""

from __future__ import annotations

import pytest

from ui.widgets.experiments import parse_blocks


@pytest.mark.parametrize(
    ("typed", "blocks"),
    [
        ("all", None),
        (" ALL ", None),
        ("全部", None),
        ("-1", None),  # what links wrote when the page offered one block or every block
        ("12", (12,)),
        ("0-5, 12", (0, 1, 2, 3, 4, 5, 12)),
        ("12 3 3 0–1", (0, 1, 3, 12)),  # spaces, an en dash, repeats: sorted, once each
        ("0 - 2，7、9；4", (0, 1, 2, 4, 7, 9)),  # Chinese punctuation, spaced range
        ("０-５，１２", (0, 1, 2, 3, 4, 5, 12)),  # full-width digits, as the Vector Lab reads them
        ("9999", (9999,)),
    ],
)
def test_numbers_and_ranges_name_their_blocks(typed, blocks):
    assert parse_blocks(typed) == blocks


@pytest.mark.parametrize(
    ("typed", "named"),
    [
        ("", ""),
        (" ,， ", ""),
        ("5-3", "5-3"),
        ("3-", "3-"),
        ("-2", "-2"),
        ("1-2-3", "1-2-3"),
        ("1e9", "1e9"),
        ("10000", "10000"),
        ("0-99999999999", "0-99999999999"),  # refused before a range of 10¹¹ is built
        ("٣", "٣"),  # other scripts' digits are not taken as numbers
        ("0,<b>x</b>", "<b>x</b>"),
    ],
)
def test_anything_else_is_refused_naming_the_first_bad_item(typed, named):
    with pytest.raises(ValueError) as refused:
        parse_blocks(typed)
    assert str(refused.value) == named
