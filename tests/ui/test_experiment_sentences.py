"""The Experiments page's sentences write their numbers as its metrics do (``number``:
×10ⁿ), never in a program's e-notation."""

from __future__ import annotations

import re
from types import SimpleNamespace as Run

import pytest

from ui.text.experiments import fold_sentences


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_folds_sentence_writes_small_numbers_as_powers_of_ten(lang):
    result = Run(
        max_logit_difference=7.63e-05,
        max_abs_logit=36.0,
        folded=("a",) * 60,
        multiplications_saved=34560,
        multiplications_per_token=10**8,
        parameters_removed=34560,
        parameters_added=0,
        unfoldable=(),
        untied=(),
    )
    first = fold_sentences(Run(result=result), lang)[0]
    assert not re.search(r"\de[-+]\d", first), first
    assert "7.63×10⁻⁵" in first and "2.119×10⁻⁶" in first and "10⁻⁵" in first
