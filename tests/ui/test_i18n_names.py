"""One name for one thing in every text: a placement as the controls name it, a vector's
entries in Chinese."""

import re

import pytest

from ui.i18n import LANGUAGES, catalog, translate

# Xiong et al.'s names for two placements: a text may give them only beside the app's own
# names (labels.placement), which the controls and legends show.
PAPER_NAMES = {"Pre-LN": "pre", "Post-LN": "post"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_placements_are_named_as_the_controls_name_them(lang):
    from engine.models.loader import catalog as models

    ours = {paper: translate(f"labels.placement.{i}", lang) for paper, i in PAPER_NAMES.items()}
    for key, text in catalog(lang).items():
        for paper, name in ours.items():
            assert paper not in text or name in text, f"{key} ({lang}): {paper} without {name}"
    olmo2 = translate("labels.placement.olmo2", lang)
    assert olmo2 == models().family("olmo2").name  # as the model catalog names it
    assert not [key for key, text in catalog(lang).items() if "OLMo-2" in text]


def test_a_vectors_entries_have_one_chinese_name():
    """Chinese names a vector's entries 元素 on every page; 分量 is kept for a component
    along a direction (LayerNorm removes the one along the all-ones vector)."""
    for key, text in catalog("zh").items():
        for found in re.finditer("分量", text):
            before = text[max(0, found.start() - 3) : found.start()]
            assert before in ("方向的", "向量的"), (
                f"{key}: …{text[found.start() - 12 : found.end()]}"
            )
