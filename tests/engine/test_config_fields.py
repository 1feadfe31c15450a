"""``engine/config/fields.py``: a field's range written once, checked by one function."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from engine.config import ModelShape
from engine.config.fields import Accepts, accepts, check_fields, param
from engine.errors import EngineError
from ui.i18n import translate


@dataclass(frozen=True)
class Toy:
    layers: int = param(4, low=1, high=8)
    eps: float = param(1e-5, low=0.0, high=1.0)
    steps: int = param(10, low=1)
    scale: float = param(1.0, low=0.0)
    lr: float = param(3e-3, positive=True)
    alpha: float = param(0.5, positive=True, high=100.0)
    kind: str = param("a", choices=("a", "b"))
    width: int | None = param(None, low=1, offered=(64, 128))
    plain: int = 3  # no metadata: not checked
    flag: bool = False
    on: bool = param(True)
    name: str = param("x", low=1, high=5)  # a text of 1 to 5 characters besides spaces

    def __post_init__(self) -> None:
        check_fields(self)


def _refused(**fields) -> EngineError:
    with pytest.raises(EngineError) as caught:
        Toy(**fields)
    error = caught.value
    for lang in ("en", "zh"):  # the message exists in both languages and every {name} is filled
        text = translate(f"errors.{error.key}", lang, **error.params)
        assert text != f"errors.{error.key}" and "{" not in text, (lang, error.key)
    assert "{" not in str(error)
    return error


def test_accepted_values_are_kept_and_stored_as_int_and_float():
    toy = Toy(layers=np.int64(8), eps=0, steps=1000, scale=np.float32(2.5), width=64)
    assert (toy.layers, toy.eps, toy.scale, toy.width) == (8, 0.0, 2.5, 64)
    assert type(toy.layers) is int and type(toy.eps) is float and type(toy.scale) is float
    assert Toy(plain="anything").plain == "anything"


@pytest.mark.parametrize("value", [0, 9, 2.5, "4", True])
def test_a_whole_number_outside_both_bounds_gets_the_range_message(value):
    error = _refused(layers=value)
    assert error.key == "axes.out_of_range"
    assert error.params == {"name": "layers", "value": str(value), "low": 1, "high": 8}


@pytest.mark.parametrize("value", [-1e-9, 1.5, math.nan, math.inf, "1e-5"])
def test_a_number_outside_both_bounds_gets_the_range_message(value):
    error = _refused(eps=value)
    assert error.key == "axes.real_out_of_range"
    assert error.params == {"name": "eps", "value": str(value), "low": 0.0, "high": 1.0}


def test_a_lower_bound_alone_refuses_smaller_values_and_nan():
    assert _refused(steps=0).params == {"name": "steps", "value": 0, "minimum": 1}
    assert _refused(scale=-0.5).key == "config.below_minimum"
    assert _refused(scale=math.nan).key == "config.below_minimum"
    assert Toy(scale=math.inf).scale == math.inf  # no upper bound given


def test_a_value_of_the_wrong_type_is_named_as_such():
    assert _refused(steps=2.5).key == "config.not_whole"
    assert _refused(steps=True).key == "config.not_whole"
    assert _refused(scale="big").key == "config.not_a_number"
    assert _refused(width=2.5).key == "config.not_whole"


def test_positive_refuses_zero_and_bounds_from_zero_when_capped():
    assert _refused(lr=0.0).params == {"name": "lr", "value": 0.0}
    assert _refused(lr=-1).key == "config.not_positive"
    assert _refused(alpha=0.0).key == "config.not_positive"
    error = _refused(alpha=101.0)
    assert (error.key, error.params["low"], error.params["high"]) == (
        "axes.real_out_of_range",
        0,
        100.0,
    )


def test_choices_refuse_anything_else_and_list_what_is_accepted():
    error = _refused(kind="c")
    assert error.key == "config.unknown_value"
    assert error.params == {"name": "kind", "value": "c", "allowed": "a, b"}


def test_a_flag_is_a_bool_and_a_text_has_its_length():
    assert Toy(flag="yes").flag == "yes"  # no metadata: not checked
    assert _refused(on=1).key == "config.unknown_value"
    assert _refused(name=3).key == "config.not_a_text"
    assert _refused(name="  ").key == "config.empty"
    assert _refused(name="abcdef").params == {"name": "name", "chars": "6", "limit": "5"}


def test_none_is_accepted_only_where_the_annotation_allows_it():
    assert Toy(width=None).width is None
    assert _refused(width=0).key == "config.below_minimum"
    assert _refused(steps=None).key == "config.not_whole"


def test_the_metadata_is_readable_from_the_class_and_an_instance():
    table = accepts(Toy)
    assert table == accepts(Toy())
    assert set(table) == {
        *("layers", "eps", "steps", "scale", "lr", "alpha", "kind", "width", "on", "name")
    }
    assert table["layers"] == Accepts(low=1, high=8)
    assert table["width"].offered == (64, 128) and table["kind"].choices == ("a", "b")


def test_a_high_bound_without_a_low_one_is_a_mistake_in_the_spec():
    with pytest.raises(TypeError):
        param(1, high=8)


def test_model_shape_checks_its_fields_through_the_metadata():
    shape = ModelShape("llama", np.int64(4096), 32, eps=1e-5, dtype="bfloat16")
    assert type(shape.hidden) is int and shape.dtype == "bfloat16"
    assert accepts(ModelShape)["hidden"].low == 1
    for fields, key in (
        ({"hidden": 0}, "config.below_minimum"),
        ({"kv_heads": 0}, "config.below_minimum"),
        ({"eps": -1.0}, "config.below_minimum"),
        ({"hidden": 4096.5}, "config.not_whole"),
        ({"dtype": "int8"}, "config.unknown_value"),
    ):
        with pytest.raises(EngineError) as caught:
            ModelShape(**{"family": "llama", "hidden": 8, "layers": 2, **fields})
        assert caught.value.key == key, fields
    with pytest.raises(TypeError):
        ModelShape("llama")  # hidden and layers are required
