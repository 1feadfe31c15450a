"""The Depth page's toggles share a row in thirds: each label holds one line beside its (?)."""

from unicodedata import east_asian_width

import pytest

from ui.i18n import LANGUAGES, translate

ONE_LINE = 26  # characters (a wide CJK one counts twice) in a third of a 1280 px page


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("key", ["depth.residual_scaling", "depth.final_norm"])
def test_toggle_labels_fit_one_line_and_leave_the_formula_to_the_help(key, lang):
    """ "GPT-2 residual scaling 1/√(branches)" wrapped onto two lines at 1280 px and left its
    (?) floating between the toggles; the help says what is scaled and by how much."""
    text = translate(key, lang)
    assert sum(2 if east_asian_width(c) in "WF" else 1 for c in text) <= ONE_LINE
    assert "1/√" in translate("depth.residual_scaling_help", lang)
