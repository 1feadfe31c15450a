import math

import pytest

from ui.formatting import format_number, format_vector


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
