"""``AxesSpec`` refuses bad values with a keyed ``EngineError`` whose message names them.

Every key raised here must exist, with the same placeholders, in both
``locales/{en,zh}/errors.toml``, and its params must fill the message.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.axes import limits
from engine.config import AxesSpec
from engine.errors import EngineError
from ui.i18n import catalog, translate


def assert_refused(key: str, match: str, **fields) -> EngineError:
    with pytest.raises(EngineError, match=match) as caught:
        AxesSpec(**fields)
    return assert_translatable(caught.value, key)


def assert_translatable(error: EngineError, key: str) -> EngineError:
    assert error.key == (key if "." in key else f"axes.{key}")
    for lang in ("en", "zh"):
        assert f"errors.{error.key}" in catalog(lang), (lang, error.key)
        text = translate(f"errors.{error.key}", lang, **error.params)
        assert "{" not in text  # every placeholder filled
    return error


def test_defaults_are_the_issue_defaults_and_hashable():
    spec = AxesSpec()
    assert (spec.batch, spec.tokens, spec.d) == (4, 16, 32)
    assert hash(spec) == hash(AxesSpec()) and spec == AxesSpec()


def test_d_zero_is_refused_naming_the_value():
    error = assert_refused("out_of_range", r"d = 0 is not accepted.*from 1 to 1024", d=0)
    assert error.params == {"name": "d", "value": "0", "low": 1, "high": limits.MAX_CHANNELS}


@pytest.mark.parametrize(
    "fields, match",
    [
        (dict(batch=0), "batch = 0"),
        (dict(tokens=limits.MAX_TOKENS + 1), f"tokens = {limits.MAX_TOKENS + 1}"),
        (dict(d=limits.MAX_CHANNELS + 1), f"d = {limits.MAX_CHANNELS + 1}"),
        (dict(seed=-1), "seed = -1"),
        (dict(d=2.5), "d = 2.5"),
        (dict(batch=True), "batch = True"),
    ],
)
def test_sizes_outside_their_range_are_refused(fields, match):
    assert_refused("out_of_range", match, **fields)


def test_a_list_of_lengths_is_stored_as_a_hashable_tuple():
    spec = AxesSpec(source="padded", lengths=[16, 12, 8, 4])
    assert spec.lengths == (16, 12, 8, 4) and hash(spec) == hash(
        AxesSpec(source="padded", lengths=(16, 12, 8, 4))
    )


def test_numpy_integers_are_accepted_and_stored_as_int():
    spec = AxesSpec(batch=np.int64(2), lengths=(np.int32(3), 16))
    assert type(spec.batch) is int and spec.lengths == (3, 16)
    assert all(type(n) is int for n in spec.lengths)


def test_too_many_cells_names_the_product_and_the_limit():
    error = assert_refused("too_many_cells", "B·T·d = 64·512·32", batch=64, tokens=512, d=32)
    assert 64 * 512 * 32 > limits.MAX_CELLS  # grouped as the pages write counts
    assert error.params["cells"] == f"{64 * 512 * 32:,}" == "1,048,576"
    assert error.params["limit"] == f"{limits.MAX_CELLS:,}"


def test_the_largest_accepted_tensor_is_accepted():
    AxesSpec(batch=8, tokens=64, d=128)  # exactly MAX_CELLS
    assert 8 * 64 * 128 == limits.MAX_CELLS


def test_a_length_longer_than_t_is_refused():
    error = assert_refused(
        "length_out_of_range",
        "Sentence 2 has length 17, but every length must be from 1 to T = 16",
        source="padded",
        lengths=(16, 12, 17, 4),
    )
    assert error.params == {"sample": 2, "length": "17", "tokens": 16}


def test_a_zero_length_is_refused():
    assert_refused("length_out_of_range", "Sentence 0 has length 0", lengths=(0, 1, 1, 1))


def test_one_length_per_sequence_is_required():
    assert_refused("lengths_count", "Sentence lengths given: 3, for B = 4", lengths=(5, 5, 5))


def test_groups_not_dividing_d_lists_the_divisors():
    error = assert_refused(
        "groups_not_dividing", "5 does not divide 32", kind="groupnorm", groups=5
    )
    assert error.params["divisors"] == "1, 2, 4, 8, 16, 32"


def test_groups_divide_d_only_for_groupnorm():
    assert AxesSpec(kind="layernorm", groups=5).groups == 5
    assert_refused("out_of_range", "groups = 0", kind="groupnorm", groups=0)
    assert_refused("groups_not_dividing", "64 does not divide 32", kind="groupnorm", groups=64)


@pytest.mark.parametrize("name", ["source", "preset", "kind", "dtype"])
def test_unknown_choices_are_refused_with_the_accepted_ones(name):
    error = assert_refused(
        "config.unknown_value", f"{name} = nope is not accepted", **{name: "nope"}
    )
    assert error.params["name"] == name and error.params["allowed"]


@pytest.mark.parametrize("eps", [-1e-9, math.nan, 2.0, "1e-5"])
def test_eps_outside_zero_to_one_is_refused(eps):
    assert_refused("real_out_of_range", "eps = ", eps=eps)


def test_eps_zero_is_accepted():
    assert AxesSpec(eps=0).eps == 0.0


@pytest.mark.parametrize("value", [math.inf, -2e4, math.nan])
def test_pad_values_beyond_the_limit_are_refused(value):
    assert_refused("real_out_of_range", "pad_value = ", source="padded", pad_value=value)
