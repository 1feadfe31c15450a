"""ui.url: numbers in a link, as a Chinese keyboard types them (full-width digits, U+2212)
and where float64 reads a nonzero number as 0 (``1e-400``)."""

from __future__ import annotations

import pytest

from ui.url.codec import parse
from ui.url.pages import PAGES, VECTOR_LAB

PAGES_BY_KEY = {param.key: page for page in PAGES.values() for param in page.params}


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("vl_shift", ["−2.5"], -2.5),  # U+2212, the minus sign
        ("vl_shift", ["－２．５"], -2.5),  # full-width minus, digits and point
        ("vl_d", ["４０９６"], 4096),
        ("du_eps", ["１e－５"], 1e-5),  # a menu of numbers
        ("dp_lr", ["３e-3"], 3e-3),
    ],
)
def test_numbers_typed_on_a_chinese_keyboard_read_as_typed_in_ascii(key, raw, expected):
    assert parse(PAGES_BY_KEY[key][key], raw) == (expected, None)


def test_a_full_width_number_out_of_range_is_refused_as_it_was_written():
    value, refusal = parse(VECTOR_LAB["vl_d"], ["－４"])
    assert value is None and refusal.params["value"] == "－４"


NUMBERS_WITH_ZERO = [  # every numeric page parameter whose range holds 0
    param
    for page in PAGES.values()
    for param in page.params
    if param.kind in ("int", "float") and param.low <= 0 <= param.high and not param.positive
]


@pytest.mark.parametrize("param", NUMBERS_WITH_ZERO, ids=lambda param: param.key)
def test_a_number_float64_reads_as_zero_is_refused_where_zero_is_accepted(param):
    assert parse(param, ["0"]) == (0, None)
    assert parse(param, ["0e-99999"]) == (0, None)
    for tiny in ("1e-400", "1e-99999999999999999999", "１e-400"):  # not 0, but float64 says 0
        value, refusal = parse(param, [tiny])
        assert value is None and refusal.params["param"] == param.key


NUMBER_CHOICES_WITH_ZERO = [  # a menu of numbers that offers 0 (ε, a spread)
    param
    for page in PAGES.values()
    for param in page.params
    if param.kind in ("choice", "choices") and 0 in param.choices
]


@pytest.mark.parametrize("param", NUMBER_CHOICES_WITH_ZERO, ids=lambda param: param.key)
def test_a_number_float64_reads_as_zero_is_not_the_choice_zero(param):
    zero = [0] if param.kind == "choices" else 0
    assert parse(param, ["0e-5"]) == (zero, None)
    for tiny in ("1e-400", "-1e-400", "１e-400"):
        value, refusal = parse(param, [tiny])
        assert value is None and refusal.params["param"] == param.key
