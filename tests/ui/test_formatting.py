import math

import pytest

from ui.formatting import format_cosine, format_number, format_vector


@pytest.mark.parametrize(
    "value, text",
    [
        (2.5, "2.5"),
        (1.25, "1.25"),
        (7.5, "7.5"),
        (1.118033988749895, "1.1180"),
        (-1.3416407, "-1.3416"),
        (0.0, "0"),
        (-0.0, "0"),
        (4.096e7, "4.096e+07"),
        (1e-5, "1e-05"),
        (math.inf, "∞"),
        (-math.inf, "−∞"),
        (math.nan, "NaN"),
    ],
)
def test_format_number(value, text):
    assert format_number(value) == text


def test_long_vectors_are_elided():
    assert format_vector([1, 2, 3, 4]) == "[1, 2, 3, 4]"
    text = format_vector(list(range(100)))
    assert text.startswith("[0, 1, 2, 3, 4, 5, …") and text.endswith("98, 99]")


def test_literal_shows_outside_text_as_a_code_span_with_the_invisible_made_visible():
    from ui.formatting import literal

    assert literal("[login](//evil.io)") == "`[login](//evil.io)`"
    assert literal("a `b` c") == "``a `b` c``"
    assert literal("1\u200b") == "`1\\u200b`"  # the zero-width space that made "1" no number
    assert literal("a\u202eb") == "`a\\u202eb`"  # a bidi override cannot reorder the line
    assert literal("") == '`""`' and literal("  ") == '`"  "`'
    assert literal("x" * 500, limit=10) == "`xxxxxxxxxx…`"
    assert literal("中文 é") == "`中文 é`"


@pytest.mark.parametrize(
    "value, text",
    [
        (0.5, "0.5"),
        (1.0, "1"),
        (1 - 2**-24, "1 − 6e-08"),  # just below 1: the gap, never "1.0000"
        (1 + 2**-52, "1 + 2.2e-16"),  # a rounding above 1: "+", never "1 − -2.2e-16"
        (-(1 + 2**-52), "−(1 + 2.2e-16)"),
        (-(1 - 2**-24), "−(1 − 6e-08)"),
    ],
)
def test_cosines_near_one_write_the_gap_with_its_sign(value, text):
    assert format_cosine(value) == text
