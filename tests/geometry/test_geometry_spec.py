"""GeometrySpec refuses bad values with translatable EngineErrors; every key has its text."""

from __future__ import annotations

import string

import numpy as np
import pytest

from engine.config import GeometrySpec
from engine.errors import EngineError
from engine.geometry.cloud import normalized_cloud
from engine.geometry.dyt_sweep import dyt_sweep
from engine.geometry.high_dimension import high_dimension_report
from engine.geometry.meshes import scene_meshes
from engine.geometry.path import vector_path
from engine.geometry.views import plane_view
from ui.i18n import LANGUAGES, catalog

BAD_SPECS = [
    (dict(distribution="cauchy"), "config.unknown_value"),
    (dict(count=0), "axes.out_of_range"),
    (dict(count=2001), "axes.out_of_range"),
    (dict(count=2.0), "axes.out_of_range"),
    (dict(d=0), "axes.out_of_range"),
    (dict(d=8193), "axes.out_of_range"),
    (dict(seed=-1), "axes.out_of_range"),
    (dict(seed=True), "axes.out_of_range"),
    (dict(spread=-0.1), "axes.real_out_of_range"),
    (dict(spread=float("nan")), "axes.real_out_of_range"),
    (dict(shift=float("inf")), "axes.real_out_of_range"),
    (dict(eps=-1e-9), "axes.real_out_of_range"),
    (dict(eps=2.0), "axes.real_out_of_range"),
    (dict(gamma_y=101.0), "axes.real_out_of_range"),
    (dict(beta_z="1"), "axes.real_out_of_range"),
    (dict(dyt_alpha=0.0), "geometry.alpha_zero"),
    (dict(dyt_alpha=-1.0), "axes.real_out_of_range"),
]

BAD_CALLS = [
    (lambda: normalized_cloud(GeometrySpec(d=4)), "geometry.scene_dimension"),
    (lambda: scene_meshes(5), "geometry.scene_dimension"),
    (lambda: vector_path((), GeometrySpec()), "geometry.vector_length"),
    (lambda: vector_path((1.0, float("nan")), GeometrySpec()), "geometry.vector_entry"),
    (lambda: vector_path((1e16, 0.0), GeometrySpec()), "geometry.vector_entry"),
    (lambda: dyt_sweep(GeometrySpec(), alphas=(0.0, 1.0)), "geometry.alphas_invalid"),
    (
        lambda: high_dimension_report(GeometrySpec(), eps_values=(2.0,)),
        "geometry.eps_values_invalid",
    ),
    (lambda: plane_view(GeometrySpec(d=8), method="tsne"), "geometry.view_method"),
    (lambda: plane_view(GeometrySpec(d=8), "axes", (0, 8)), "geometry.view_axes"),
    (lambda: plane_view(GeometrySpec(d=8), "axes", (2, 2)), "geometry.same_axes"),
]


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _assert_translatable(error: EngineError) -> None:
    for lang in LANGUAGES:
        text = catalog(lang)[f"errors.{error.key}"]  # KeyError: no message for the key
        assert _placeholders(text) <= set(error.params), (lang, error.key)
        text.format(**error.params)


@pytest.mark.parametrize("fields, key", BAD_SPECS)
def test_spec_refuses_bad_values_with_a_translatable_key(fields, key):
    with pytest.raises(EngineError) as caught:
        GeometrySpec(**fields)
    assert caught.value.key == key
    assert isinstance(caught.value, ValueError)
    _assert_translatable(caught.value)


@pytest.mark.parametrize("call, key", BAD_CALLS)
def test_functions_refuse_bad_arguments_with_a_translatable_key(call, key):
    with pytest.raises(EngineError) as caught:
        call()
    assert caught.value.key == key
    _assert_translatable(caught.value)


def test_spec_accepts_the_limits_and_numpy_scalars():
    spec = GeometrySpec(count=np.int64(2000), d=8192, eps=0.0, spread=0.0, dyt_alpha=100.0)
    assert spec.count == 2000
    assert hash(spec) == hash(
        GeometrySpec(count=2000, d=8192, eps=0.0, spread=0.0, dyt_alpha=100.0)
    )
