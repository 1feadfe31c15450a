"""The experiments' specs refuse bad values with translatable errors (each message is checked
where it is raised: ``tests/conftest.py``)."""

from __future__ import annotations

import pytest

from engine.config import (
    FoldSpec,
    FreezeSpec,
    FreezeSweepSpec,
    HalfSpec,
    LensSpec,
    MassiveSpec,
    SwapSpec,
    TextSpec,
)
from engine.config.experiments import (
    EXPERIMENT_MAX_CHARACTERS,
    EXPERIMENT_MAX_TOKENS,
    LENS_MAX_POSITIONS,
)
from engine.errors import EngineError


@pytest.mark.parametrize(
    "make, key",
    [
        (lambda: TextSpec(text="fr"), "config.unknown_value"),
        (
            lambda: TextSpec(prompt="x" * (EXPERIMENT_MAX_CHARACTERS + 1)),
            "experiments.prompt_too_long",
        ),
        (lambda: TextSpec(prompt=3), "config.not_a_text"),
        (lambda: TextSpec(max_tokens=1), "axes.out_of_range"),
        (lambda: TextSpec(max_tokens=EXPERIMENT_MAX_TOKENS + 1), "axes.out_of_range"),
        (lambda: TextSpec(max_tokens=64.0), "axes.out_of_range"),
        (lambda: MassiveSpec(setting="half"), "config.unknown_value"),
        (lambda: MassiveSpec(point=-1), "axes.out_of_range"),
        (lambda: MassiveSpec(window=0), "axes.out_of_range"),
        (lambda: MassiveSpec(massive_abs=0.0), "config.not_positive"),
        (lambda: MassiveSpec(massive_ratio=float("nan")), "config.not_positive"),
        (lambda: SwapSpec(layers=(1, 1)), "experiments.bad_list"),
        (lambda: SwapSpec(layers=(-2,)), "experiments.bad_list"),
        (lambda: SwapSpec(layers=(True,)), "experiments.bad_list"),
        (lambda: SwapSpec(layers="0,1"), "experiments.bad_list"),
        (lambda: SwapSpec(layers=(), final=False), "experiments.nothing_chosen"),
        (lambda: SwapSpec(final="yes"), "config.unknown_value"),
        (lambda: FreezeSpec(layers=()), "experiments.nothing_chosen"),
        (lambda: FreezeSpec(exempt="bos"), "config.unknown_value"),
        (lambda: FreezeSweepSpec(exempt=None), "config.unknown_value"),
        (lambda: FreezeSweepSpec(tolerance=0.0), "config.not_positive"),
        (lambda: FoldSpec(final=None), "config.unknown_value"),
        (lambda: LensSpec(positions=()), "experiments.bad_list"),
        (lambda: LensSpec(positions=tuple(range(LENS_MAX_POSITIONS + 1))), "experiments.bad_list"),
        (lambda: LensSpec(top_k=0), "axes.out_of_range"),
        (lambda: HalfSpec(divergence=-0.1), "config.not_positive"),
        (lambda: HalfSpec(upcast="no"), "config.unknown_value"),
    ],
)
def test_a_bad_value_is_refused_with_a_translatable_key(make, key):
    with pytest.raises(EngineError) as caught:
        make()
    assert caught.value.key == key
    assert str(caught.value)  # an English sentence for Python users


def test_lists_are_kept_as_tuples_so_specs_hash():
    spec = SwapSpec(layers=[3, 1])
    assert spec.layers == (3, 1) and hash(spec) == hash(SwapSpec(layers=(3, 1)))
    assert LensSpec(positions=[0, 5]).positions == (0, 5)


def test_the_massive_thresholds_default_to_the_dumps_page_definition():
    from engine.config import DumpSpec

    spec = MassiveSpec()
    assert (spec.massive_abs, spec.massive_ratio) == (
        DumpSpec().massive_abs,
        DumpSpec().massive_ratio,
    )
