import math

import pytest
import torch
import torch.nn.functional as F

from engine.config import MAX_ROWS, MAX_VECTOR_WIDTH
from ui.errors import input_error_text
from ui.i18n import catalog, translate
from ui.vector_input import (
    MAX_TEXT_CHARS,
    VectorInputError,
    check_representable,
    parse_eps,
    parse_parameter,
    parse_vectors,
    underflow_notes,
)


@pytest.mark.parametrize(
    "text",
    [
        "1, 2, 3, 4",
        "1 2 3 4",
        "[1, 2, 3, 4]",
        "[1, 2, 3, 4,]",  # a trailing comma, as Python writes a list
        "1;2;3;4",
        " 1,\t2 , 3 ,4 ",
        "1e0, 2.0, +3, 4.",
    ],
)
def test_accepted_spellings_of_one_vector(text):
    assert parse_vectors(text) == ((1.0, 2.0, 3.0, 4.0),)


def test_several_rows_and_blank_lines():
    assert parse_vectors("1 2\n\n3 4\n") == ((1.0, 2.0), (3.0, 4.0))
    assert parse_vectors("1 2\n,,\n[]\n3 4") == ((1.0, 2.0), (3.0, 4.0))  # no number: blank


@pytest.mark.parametrize(
    "text, key, params",
    [
        ("", "empty", {}),
        ("  \n ", "empty", {}),
        (",,,", "empty", {}),  # separators alone are no vector (once a row of width 0)
        ("[ , ]\n;", "empty", {}),
        ("1, two, 3", "not_a_number", {"token": "two", "row": 1, "column": 2}),
        ("1_0, 2, 3", "not_a_number", {"token": "1_0", "row": 1, "column": 1}),  # never 10
        # quoted as typed: a brace the token closes itself is its own, a row's bracket is not
        ("3, \\frac{1}{2}", "not_a_number", {"token": "\\frac{1}{2}", "row": 1, "column": 2}),
        ("[abc, 2]", "not_a_number", {"token": "abc", "row": 1, "column": 1}),
        ("1 2\n3", "ragged", {"first": 2, "row": 2, "other": 1}),
        ("1,,2", "missing_number", {"row": 1, "column": 2}),  # not d = 2
        ("1 2\n[3, 4 ; , 5]", "missing_number", {"row": 2, "column": 3}),
        ("1，，2", "missing_number", {"row": 1, "column": 2}),  # full-width commas
        ("1 nan", "non_finite", {"token": "nan", "row": 1, "column": 2}),
        ("inf 1", "non_finite", {"token": "inf", "row": 1, "column": 1}),
        ("∞, 1", "non_finite", {"token": "∞", "row": 1, "column": 1}),  # as inf, not "not a number"
        ("1, −∞", "non_finite", {"token": "-∞", "row": 1, "column": 2}),
        ("1, +-∞", "not_a_number", {"token": "+-∞", "row": 1, "column": 2}),  # two signs
        ("1 1e400", "beyond_float", {"token": "1e400", "row": 1, "column": 2}),
        (
            "-1e-400 1",
            "below_float",
            {"token": "-1e-400", "row": 1, "column": 1, "tiny": "4.9e-324"},
        ),
    ],
)
def test_bad_input_names_the_problem(text, key, params):
    with pytest.raises(VectorInputError) as caught:
        parse_vectors(text)
    assert caught.value.key == key
    assert caught.value.params == params


@pytest.mark.timeout(30)  # a guard against the hang, not a speed target: 0.1 s here
def test_a_token_of_unclosed_brackets_is_quoted_in_one_pass():
    """Each cut counted the brackets again: 400,000 "[" before a letter, inside the text's
    limit, held the page 56 s on every rerun."""
    for text in ("[" * (MAX_TEXT_CHARS - 1) + "x", "x" + ")" * (MAX_TEXT_CHARS - 1)):
        with pytest.raises(VectorInputError) as caught:
            parse_vectors(text)
        assert caught.value.params["token"] == "x"


def test_values_beyond_the_storage_dtype_are_refused():
    with pytest.raises(VectorInputError) as caught:
        parse_vectors("1 70000", "float16")
    assert caught.value.key == "beyond_half"  # advice: store it in float32
    assert caught.value.params["limit"] == "65504"
    assert parse_vectors("1 70000", "float32") == ((1.0, 70000.0),)
    with pytest.raises(VectorInputError) as caught:
        parse_vectors("1e39", "float32")
    assert caught.value.key == "beyond_dtype"  # already float32: no advice to store it so
    assert (caught.value.params["value"], caught.value.params["limit"]) == ("1e39", "3.40282e38")
    with pytest.raises(VectorInputError) as caught:
        parse_vectors("1 123456789", "float16")
    assert caught.value.params["value"] == "123456789"  # as typed, not "1.23457e+08"


def test_the_overflow_threshold_is_where_storing_rounds_to_inf():
    # 65519 rounds down to 65504 (finite); 65520 rounds to inf in float16.
    assert parse_vectors("65519", "float16") == ((65519.0,),)
    with pytest.raises(VectorInputError):
        parse_vectors("65520", "float16")


@pytest.mark.parametrize(
    "text",
    [
        "1，2，3，4",  # full-width commas, as a Chinese keyboard types them
        "1、2、3、4",  # ideographic commas
        "１ ２ ３ ４",  # full-width digits
        "1；2；3；4",
        "1\u30002\u30003\u30004",  # ideographic spaces
        "[1，2，3，4]",
    ],
)
def test_full_width_input_reads_as_ascii(text):
    assert parse_vectors(text) == ((1.0, 2.0, 3.0, 4.0),)


def test_an_ideographic_full_stop_between_digits_is_a_decimal_point():
    """A Chinese keyboard types "。" for "."; between two digits it can mean nothing else."""
    assert parse_vectors("1，2，3；4。5") == ((1.0, 2.0, 3.0, 4.5),)
    assert parse_vectors("－１。５e－３ ２") == ((-1.5e-3, 2.0),)
    assert parse_eps("1。5e-5") == 1.5e-5
    assert parse_parameter("0。5", 2, "γ") == (0.5,)
    for text in ("4。", "。5", "1。2。3"):  # not (only) between two digits: refused
        with pytest.raises(VectorInputError) as error:
            parse_vectors(text)
        assert error.value.key == "not_a_number"
    for lang in ("en", "zh"):  # and the refusal says how to write the decimal point
        assert "“。”" in catalog(lang)["input.not_a_number"]
        assert "“。”" in catalog(lang)["input.parameter_not_a_number"]


def test_unicode_minus_signs_are_minus_signs():
    assert parse_vectors("\u22121, \uff0d2, 3") == ((-1.0, -2.0, 3.0),)
    assert parse_eps("１e−5") == 1e-5
    assert parse_parameter("−1，2", 2, "γ") == (-1.0, 2.0)


def test_values_that_underflow_to_zero_are_reported_with_the_smallest_number():
    rows = parse_vectors("1e-320, 1, 1e-8", "float32")
    first = dict(value="1e-320", row=1, column=1)  # as typed, not "9.99989e-321"
    assert underflow_notes(rows, "float32") == (
        translate("input.underflow_one", "en", dtype="float32", tiny="1.401×10⁻⁴⁵", **first),
    )
    assert underflow_notes(rows, "float16") == (
        translate("input.underflow", "en", count=2, dtype="float16", tiny="5.96×10⁻⁸", **first),
    )
    assert underflow_notes(((1.0, 2.0),), "float16") == ()


def test_size_limits():
    with pytest.raises(VectorInputError) as caught:
        parse_vectors("\n".join(["1"] * (MAX_ROWS + 1)))
    assert caught.value.key == "too_many_rows"
    with pytest.raises(VectorInputError) as caught:
        parse_vectors(" ".join(["1"] * (MAX_VECTOR_WIDTH + 1)))
    assert caught.value.key == "too_wide"
    with pytest.raises(VectorInputError) as caught:
        parse_vectors("\n".join([" ".join(["1"] * 2048)] * 40))
    assert caught.value.key == "too_many_cells"
    assert input_error_text(caught.value).startswith("81,920 numbers in total")  # not 81920


def test_a_row_of_ten_thousand_numbers_is_counted_with_separators():
    with pytest.raises(VectorInputError) as caught:
        parse_vectors(" ".join(["1"] * 10_000))
    assert caught.value.params["d"] == 10_000
    assert input_error_text(caught.value).startswith(
        f"Row 1 has 10,000 numbers; at most {MAX_VECTOR_WIDTH:,} are accepted."
    )


def test_parameters_are_one_value_or_d_values():
    assert parse_parameter("2", 4, "γ") == (2.0,)
    assert parse_parameter("[1, 2, 3, 4]", 4, "γ") == (1.0, 2.0, 3.0, 4.0)
    with pytest.raises(VectorInputError) as caught:
        parse_parameter("1 2", 4, "γ")
    assert caught.value.params == {"name": "γ", "count": 2, "d": 4}
    with pytest.raises(VectorInputError):
        parse_parameter("", 4, "β")


@pytest.mark.parametrize(
    "typed, key",
    [
        ("1 x", "parameter_not_a_number"),
        ("1 nan", "parameter_non_finite"),
        ("1 1e400", "parameter_beyond_float"),
        ("1 1e-400", "parameter_below_float"),
    ],
)
def test_a_bad_parameter_value_is_named_by_its_place_in_the_parameter_not_a_row(typed, key):
    with pytest.raises(VectorInputError) as caught:
        parse_parameter(typed, 2, "β")
    assert caught.value.key == key and caught.value.params["column"] == 2
    params = {k: f"`{v}`" if k == "token" else v for k, v in caught.value.params.items()}
    english = translate(f"input.{key}", "en", **params)
    chinese = translate(f"input.{key}", "zh", **params)
    assert english.startswith("β: `") and "(value 2)" in english and "row" not in english
    assert chinese.startswith("β：`") and "第 2 个值" in chinese and "行" not in chinese


def test_a_number_float64_would_read_as_zero_is_refused_and_zero_itself_is_not():
    assert parse_vectors("5e-324, -0, 0e-999, 0.000, 0e-99999999999999999999") == (
        (math.ulp(0.0), 0.0, 0.0, 0.0, 0.0),
    )
    for tiny in ("2.4e-324", "1e-99999999999999999999", "0.00001e-320", "１e-400"):
        with pytest.raises(VectorInputError) as caught:
            parse_vectors(f"1 {tiny}")
        assert caught.value.key == "below_float", tiny
    with pytest.raises(VectorInputError) as caught:
        parse_parameter("1 1e-400", 2, "γ")
    assert caught.value.key == "parameter_below_float" and caught.value.params["name"] == "γ"
    message = input_error_text(caught.value)
    assert message.startswith("γ: `1e-400` (value 2) is closer to 0"), message
    with pytest.raises(VectorInputError) as caught:
        parse_eps("1e-400")
    assert caught.value.params == {"token": "1e-400", "tiny": "4.9e-324"}
    assert parse_eps("5e-324") == math.ulp(0.0)
    # PyTorch keeps such an ε: its eps argument is a float64 (a zero row stays finite)
    zero_row = torch.zeros(1, 4, dtype=torch.float64)
    assert F.layer_norm(zero_row, (4,), eps=5e-324).isfinite().all()
    assert F.layer_norm(zero_row, (4,), eps=0.0).isnan().all()


@pytest.mark.parametrize("text, value", [("1e-5", 1e-5), ("0", 0.0), (" 0.01 ", 0.01)])
def test_eps_accepted(text, value):
    assert parse_eps(text) == value


@pytest.mark.parametrize("text", ["-1e-5", "abc", "2", "nan", "", "1_0e-6"])
def test_eps_refused(text):
    with pytest.raises(VectorInputError):
        parse_eps(text)


def test_a_drawn_value_past_the_storage_dtype_is_said_as_a_draw():
    """A random draw with a mean shift of 10⁶ was told to "use smaller numbers" it never
    typed, quoting 1000001.5409961082, a value it had never seen."""
    with pytest.raises(VectorInputError) as caught:
        check_representable(((1_000_001.5409961082, 2.0),), "float16", drawn=True)
    message = input_error_text(caught.value)
    assert message.startswith("A drawn value, `1,000,002` (row 1, position 1), cannot be stored")
    assert "A smaller scale or mean shift" in message and "Use smaller numbers" not in message
