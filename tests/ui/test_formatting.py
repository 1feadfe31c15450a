import math
import re

import numpy as np
import pytest

from ui.figures.style import tick_text
from ui.formatting import (
    column_format,
    finite_or_none,
    format_cosine,
    format_number,
    format_power,
    format_reading,
    format_vector,
    markdown_escaped,
    number_text,
    runs,
    scientific,
    signed,
    superscript,
    upper_bound,
)
from ui.text.experiments import number
from ui.text.latex import latex_number, latex_power, latex_scientific, latex_vector


@pytest.mark.parametrize(
    "value, text",
    [
        (2.5, "2.5"),
        (1.25, "1.25"),
        (7.5, "7.5"),
        (1.118033988749895, "1.1180"),
        (-1.3416407, "−1.3416"),  # the true minus, as people read it
        (0.0, "0"),
        (-0.0, "0"),
        (4.096e7, "4.096e+07"),
        (1e-5, "1e-05"),  # e-notation's own "-", as the ε sliders write it
        (-2.5e-6, "−2.5e-06"),
        (3.0238e-4, "0.0003024"),  # four places would leave one digit, "0.0003"
        (-0.0030238, "−0.003024"),
        (float(np.float32(0.001)), "0.001"),  # not "0.0010"
        (0.0123, "0.0123"),
        (math.inf, "∞"),
        (-math.inf, "−∞"),
        (math.nan, "NaN"),
    ],
)
def test_format_number(value, text):
    assert format_number(value) == text


def test_no_decimals_keep_a_whole_numbers_zeros():
    """10 to no places is "10", never "1" (the zeros after no point are the number's)."""
    assert [format_number(v, 0) for v in (10.0, 100.0, 20.0, 2.5, -0.0)] == [
        "10",
        "100",
        "20",
        "2",
        "0",
    ]


def test_a_slope_is_signed_with_the_true_minus():
    assert [signed(v) for v in (0.012, -0.47, -0.001, 0.0)] == ["+0.01", "−0.47", "0.00", "0.00"]
    assert signed(-0.5, 1) == "−0.5" and signed(math.nan) == "NaN"


def test_long_vectors_are_elided():
    assert format_vector([1, 2, 3, 4]) == "[1, 2, 3, 4]"
    assert format_vector([-0.5, 2]) == "[−0.5, 2]"
    text = format_vector(list(range(100)))
    assert text.startswith("[0, 1, 2, 3, 4, 5, …") and text.endswith("98, 99]")
    # a tiny entry with its power of ten, as a sentence writes it; LaTeX asks for e-notation
    assert format_vector([-3.1623e-28, 0]) == "[−3.162×10⁻²⁸, 0]"
    assert format_vector([-3.1623e-28, 0], number=format_number) == "[−3.162e-28, 0]"


def test_literal_shows_outside_text_as_a_code_span_with_the_invisible_made_visible():
    from ui.formatting import literal

    assert literal("[login](//evil.io)") == "`[login](//evil.io)`"
    assert literal("a `b` c") == "``a `b` c``"
    assert literal("1\u200b") == "`1\\u200b`"  # the zero-width space that made "1" no number
    assert literal("a\u202eb") == "`a\\u202eb`"  # a bidi override cannot reorder the line
    assert literal("") == '`""`' and literal("  ") == '`"  "`'
    assert literal("nopage ") == '`"nopage "`' and literal(" 1") == '`" 1"`'  # spaces shown
    assert literal("hello world and more", limit=6) == "`hello …`"  # a cut's end is no end
    assert literal("a\t") == "`a\\u0009`"  # a tab is written out: nothing to quote
    assert literal("x" * 500, limit=10) == "`xxxxxxxxxx…`"
    assert literal("中文 é") == "`中文 é`"


@pytest.mark.parametrize(
    "value, text",
    [
        (0.5, "0.5"),
        (1.0, "1"),
        (1 - 2**-24, "1 − 6×10⁻⁸"),  # just below 1: the gap, never "1.0000"
        (1 + 2**-52, "1 + 2.2×10⁻¹⁶"),  # a rounding above 1: "+", never "1 − -2.2e-16"
        (-(1 + 2**-52), "−(1 + 2.2×10⁻¹⁶)"),
        (-(1 - 2**-24), "−(1 − 6×10⁻⁸)"),
    ],
)
def test_cosines_near_one_write_the_gap_with_its_sign(value, text):
    assert format_cosine(value) == text


@pytest.mark.parametrize(
    "value, text",
    [
        (1000.0, "1000"),
        (1e-05, "1e-5"),
        (1.5e-07, "1.5e-7"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (1e16, "1e16"),
        (2.5e20, "2.5e20"),
        (1e39, "1e39"),  # echoed as typed, not "1e+39"
        (123456789.0, "123456789"),
        (0.30000000000000004, "0.30000000000000004"),
        (2**60, "1152921504606846976"),
        (np.int64(7), "7"),
        (np.float32(0.5), "0.5"),
        (None, ""),
    ],
)
def test_number_text_is_short_and_reads_back_as_the_same_number(value, text):
    assert number_text(value) == text
    if value is not None:
        assert float(text) == float(value)


def test_superscript_writes_signed_exponents():
    assert superscript(-6) == "⁻⁶" and superscript(24) == "²⁴" and superscript("+3") == "⁺³"


def test_finite_or_none_leaves_gaps_for_values_a_chart_cannot_draw():
    assert finite_or_none([1, math.nan, -math.inf, 2.5]) == [1.0, None, None, 2.5]
    assert finite_or_none(np.array([[0.0, np.inf], [np.nan, 3.0]])) == [[0.0, None], [None, 3.0]]
    assert all(type(v) is float for v in finite_or_none(np.float32([1, 2])))
    assert finite_or_none([]) == []


def test_a_power_of_ten_with_mantissa_one_is_written_without_it_in_text_and_latex():
    """10⁶ and −10⁶, never "1×10⁶" or "-1\\times 10^{6}", wherever a number is written; in
    text with the true minus, in LaTeX with "-" (KaTeX sets it as a minus)."""
    assert scientific("1", 6) == "10⁶" and scientific("-1", 6) == "−10⁶"
    assert scientific("−1", -6) == "−10⁻⁶" and scientific("2.5", 6) == "2.5×10⁶"
    assert format_power(1e6) == "10⁶" and format_power(-1e6) == "−10⁶"
    assert format_power(3.4028e38) == "3.4×10³⁸" and format_power(-25.0) == "−25"
    assert format_power(-math.inf) == "−∞" and format_power(-2.5e6) == "−2.5×10⁶"
    assert number(-1e6) == "−10⁶" and number(4.006e6) == "4.006×10⁶"
    assert number(math.inf) == "∞" and number(-0.5) == "−0.5"
    assert tick_text(-1e6, plain=False) == "−10⁶" and tick_text(2e7, plain=False) == "2×10⁷"
    assert latex_scientific("-1", 6) == "-10^{6}" and latex_number(1e6) == "10^{6}"
    assert latex_number(-1e6) == "-10^{6}" and latex_power(-1e6) == "(-10^{6})"
    assert latex_number(-2.5e6) == r"-2.5\times 10^{6}" and latex_number(1e-5) == "10^{-5}"
    assert latex_number(-2.5e-6) == r"-2.5\times 10^{-6}" and latex_number(-0.5) == "-0.5"
    assert latex_number(11180.33988) == "11{,}180.3399" and latex_number(-90000.0) == "-90{,}000"
    assert latex_number(1234.5) == "1{,}234.5" and latex_number(0.000123456) == "0.0001235"
    assert latex_number(99999.99999) == "100{,}000.0000"  # rounding carried to six digits
    assert latex_vector([-1e6, 2.0]) == r"\left[-10^{6}, 2\right]"


def test_a_large_number_in_the_maths_keeps_the_digits_four_significant_ones_would_round():
    """300,001 is not 3×10⁵: from 10⁵ on, the maths writes a number out as it writes one below
    (four decimals, grouped) up to 10⁹, and with nine significant digits past it; a number
    four digits hold exactly keeps its power of ten."""
    assert latex_number(300001.0) == "300{,}001" and latex_number(-149991.25) == "-149{,}991.25"
    assert latex_number(111803.3984375) == "111{,}803.3984"
    assert latex_number(987654321.0) == "987{,}654{,}321"
    assert latex_number(35000147968.0) == r"3.5000148\times 10^{10}"
    assert latex_number(1.5e5) == r"1.5\times 10^{5}" and latex_number(1e20) == "10^{20}"
    assert latex_vector([1e5, 300001.0, 12.0]) == r"\left[10^{5}, 300001, 12\right]"


@pytest.mark.parametrize(
    "values, expected",
    [
        ([179.182, 6.9183, 6.67252], "%,.3f"),  # one count of decimals: 179.182, 6.918, 6.673
        ([12545.9, 11446.0], "%,.1f"),
        ([26464.0, 22528.0, np.nan], "%,.0f"),  # whole numbers stored as floats
        ([0.5, 0.25, np.nan, 0.0], "%,.6f"),
        ([2.5e-5, 100.0], "%.6g"),  # six decades: each its own digits
        ([3.0e7, 1.0e7], "%.6g"),  # past six digits before the point
        ([np.nan, np.inf], "%.6g"),  # nothing to measure
    ],
)
def test_a_tables_column_has_one_count_of_decimals_where_its_values_allow(values, expected):
    assert column_format(np.array(values), 6) == expected


def test_whole_numbers_are_listed_as_runs_in_a_sentence():
    assert runs((3, 4, 5, 9, 12, 13)) == ["3–5", "9", "12–13"]
    assert runs((10, 9, 0, 1, 2, 3, 7, 3)) == ["0–3", "7", "9–10"]  # sorted, each once
    assert runs(()) == []


@pytest.mark.parametrize(
    "value, text",
    [
        (7.153e-07, "7.153×10⁻⁷"),  # format_number's "7.153e-07", as format_cosine writes a gap
        (-3e-9, "−3×10⁻⁹"),
        (1e6, "10⁶"),
        (27.71274, "27.7127"),  # what format_number writes without e-notation is unchanged
        (0.0, "0"),
        (math.nan, "NaN"),
        (26464.0, "26,464"),  # five digits grouped, as the counts beside them
        (-12345.678, "−12,345.678"),
        (9999.5, "9,999.5"),
        (-math.inf, "−∞"),
        (9999.99996, "10,000.0000"),  # grouped as written, not as the value before rounding
    ],
)
def test_a_number_in_a_sentence_writes_its_power_of_ten_out(value, text):
    assert format_reading(value) == text


def test_a_material_shortcode_in_user_text_is_not_the_one_streamlit_rewrites():
    """Streamlit's Markdown rewrites ":material/" to ":material_" even in a code span; the
    literal keeps it apart by an invisible word joiner, and reads as typed without it."""
    from ui.formatting import literal

    shown = literal("1, :material/home:")
    assert ":material/" not in shown and shown.replace("\u2060", "") == "`1, :material/home:`"


def test_a_large_number_to_few_places_keeps_four_digits_with_its_power_of_ten():
    """The dumps story writes the largest entry to one place: 123,456.7 is "1.235×10⁵",
    never "10⁵" (which reads as exactly 100,000); 99,999.96 rounds up to "100,000.0"."""
    assert format_reading(123456.7, 1) == "1.235×10⁵"
    assert format_reading(99999.96, 1) == "100,000.0"


@pytest.mark.parametrize(
    "value, expected",
    [(1842.03, "1,842"), (22552.3, "22,550"), (4.006e6, "4.006×10⁶"), (0.0009765625, "0.0009766"),
     (44.257, "44.26"), (0.012345, "0.01235"), (0.05678, "0.05678"), (7.63e-5, "7.63×10⁻⁵"), (math.inf, "∞")],
)  # fmt: skip
def test_significant_writes_four_digits_as_a_sentence_writes_numbers(value, expected):
    """ "|x| = 1842" and "2.255×10⁴ → 0" beside a grouped "22,552"; "0.000977" beside
    "0.0009766": a number cut to its significant digits is written as the sentences write."""
    from ui.formatting import significant

    assert significant(value) == expected


@pytest.mark.parametrize(
    "text",
    [
        "[x](http://example.com) **b** <b>h</b>",
        "$x^2$ :material/home: :material_home: :streamlit: :smile: _i_ # h ~s~ | a |",
        "1. item",
        "mail a@b.com, WWW.x.org, https://x.y/z?q=1&r=2",
        "every axis >= 1 -> none <- a <-> b -- c ~= d",
        "model.layers.3.post_attention_layernorm",
    ],
)
def test_markdown_escaped_text_reads_back_as_typed_and_starts_no_markup(text):
    """For st.table's cells (read as Markdown, seen in a browser; tests/app/test_presenting.py):
    every Markdown character escaped; what Streamlit reads after the escapes (icons and emoji
    ":name:", bare URLs, "www.", e-mails, "->", "--", ">=") split by a word joiner; nothing
    else changed."""
    written = markdown_escaped(text)
    unescaped = re.sub(r"\\(.)", r"\1", written).replace("\u2060", "")
    assert unescaped == text
    assert not re.search(r"(?<!\\)[\[\]()*_$`<>#|~]", written)  # each one escaped
    bare = written.replace("\\", "").lower()
    assert not re.search(r":\w|www\.|@\w|->|<-|--|>=|~=", bare), bare


def test_markdown_escaped_keeps_leading_spaces_and_writes_a_missing_value_empty():
    assert markdown_escaped("    code?") == "\u00a0" * 4 + "code?"  # not a code block
    assert markdown_escaped(float("nan")) == "" == markdown_escaped(None)


def test_markdown_escaped_writes_invisible_characters_as_escapes():
    assert markdown_escaped("a\u200bb") == "a\\\\u200bb"  # shown as a\u200bb


def test_a_number_typed_on_a_chinese_keyboard_reads_as_ascii_and_no_other_glyph_does():
    """Full-width digits and signs read as typed; NFKC had also read "①②" as 12 and "10²"
    as 102, numbers nobody typed, which a link or a box then took without a word."""
    from ui.formatting import as_ascii
    from ui.url.codec import parse
    from ui.url.pages import KERNELS

    assert as_ascii("－１．５、２") == "-1.5,2" and as_ascii("1e\u20115") == "1e-5"
    assert as_ascii("①②") == "①②" and as_ascii("10²") == "10²"
    assert parse(KERNELS["kn_d"], ["①②"])[1] is not None  # refused, with a message
    assert parse(KERNELS["kn_d"], ["１０２４"])[0] == 1024


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (1.46603e-5, "1.467×10⁻⁵"),  # four digits would round it down to 1.466×10⁻⁵
        (8.0911e-6, "8.092×10⁻⁶"),
        (1.4e-5, "1.4×10⁻⁵"),  # already four digits: itself
        (0.012301, "0.01231"),
        (12.3401, "12.35"),
        (0.0, "0"),
    ],
)
def test_an_upper_bound_is_rounded_up_never_below_the_value(value, said):
    assert upper_bound(value) == said
    if value:
        assert float(said.replace("×10⁻⁵", "e-5").replace("×10⁻⁶", "e-6")) >= value


def test_a_cosine_near_one_is_written_by_its_gap_where_the_gap_is_known():
    """float64 holds a cosine near 1 in steps of 1.1×10⁻¹⁶ (1 − 3.3×10⁻¹⁶ for a gap of
    3.1×10⁻¹⁶): a gap computed on its own (cosine_gap) is written instead."""
    import torch

    from engine.geometry.measures import cosine, cosine_gap

    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    y = torch.nn.functional.rms_norm(x, (4,), eps=1e-5)
    cos, gap = float(cosine(x, y)), float(cosine_gap(x, y))
    assert format_cosine(cos) == "1 − 3.3×10⁻¹⁶" and format_cosine(cos, gap) == "1 − 3.1×10⁻¹⁶"
    assert format_cosine(0.4082, 0.5918) == "0.4082" and format_cosine(1.0, 0.0) == "1"
    assert format_cosine(-0.99999994, 2 - 6e-8) == "−(1 − 6×10⁻⁸)"  # near −1: the cosine's own
