"""The lessons' data and link logic, without a browser: every lesson complete in both
languages, targets checked against the URL contract."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import pytest

from engine.norms.precision_presets import preset
from tests.plain_text import plain
from ui.i18n import LANGUAGES, catalog, translate
from ui.lessons.catalog import (
    ANSWER_IDS,
    LESSON_IDS,
    LESSONS,
    OPTIONS,
    answers_by_lesson,
    lesson,
    score,
)
from ui.lessons.targets import TARGETS, Target, query_text, target_query
from ui.url.codec import LANDINGS, PageParams, parse, serialize
from ui.url.pages import DEPTH, PAGES
from ui.views.lessons import app_root, page_address
from ui.widgets.vector_lab import preset_label_params

PARTS = ("title", "idea", "question", "reveal", "explain", "next", "link")


def test_every_lesson_offers_four_answers():
    # the lessons and their teaching order are pinned with the link's ls_lesson
    # (test_url_params.py)
    assert len(ANSWER_IDS) == 4 * len(LESSONS) == 4 * len(LESSON_IDS)


@pytest.mark.parametrize("lang", list(LANGUAGES))
@pytest.mark.parametrize("item", LESSONS, ids=LESSON_IDS)
def test_every_lesson_reads_in_both_languages_with_its_numbers_filled(item, lang):
    for part in PARTS + tuple(f"options.{o}" for o in OPTIONS):
        key = f"lessons.{item.id}.{part}"
        assert key in catalog(lang), key
        text = translate(key, lang, **item.texts())
        assert text.strip() and not re.search(r"\{\w+\}", text), key
    assert item.answer in OPTIONS
    used = set().union(
        *(
            re.findall(r"\{(\w+)\}", catalog(lang)[f"lessons.{item.id}.{part}"])
            for part in PARTS + tuple(f"options.{o}" for o in OPTIONS)
        )
    )
    assert used <= set(item.facts), used - set(item.facts)  # every number comes from a fact


def test_the_chinese_text_is_a_translation_not_a_copy():
    han = re.compile(r"[\u4e00-\u9fff]")
    for item in LESSONS:
        for part in PARTS:
            assert han.search(catalog("zh")[f"lessons.{item.id}.{part}"]), (item.id, part)


UNITS = {"bytes"}  # as FLOPs: a unit a Chinese page writes in Latin letters too


def test_the_maths_shown_in_every_language_holds_no_words():
    """Lesson maths is the same in English and Chinese, so ``\\text{}`` outside a subscript
    holds names and units only, no English word (a Chinese page showed "not W_Q" and "at
    initialisation")."""
    for item in LESSONS:
        for maths in (*item.maths, *item.answer_maths):
            for match in re.finditer(r"(_\{)?\\text\{([^}]*)\}", maths):
                words = set(re.findall(r"\b[a-z]{2,}\b", match[2])) - UNITS
                assert match[1] or not words, (item.id, maths)


def test_each_question_has_four_different_options():
    for item in LESSONS:
        for lang in LANGUAGES:
            texts = [
                translate(f"lessons.{item.id}.options.{o}", lang, **item.texts()) for o in OPTIONS
            ]
            assert len(set(texts)) == 4, (item.id, lang, texts)


def target_ready(target: Target, pages: dict[str, PageParams]) -> bool:
    """True when ``pages`` has the target's page, every parameter, accepts every value, and
    the page marks the place the link lands on."""
    page = pages.get(target.page)
    if page is None or (target.at and target.at not in LANDINGS.get(target.page, ())):
        return False
    for key, value in target.as_dict().items():
        if key not in page.by_key:
            return False
        parsed, refusal = parse(page[key], serialize(page[key], value))
        if refusal is not None or parsed != value:
            return False
    return True


def test_every_lesson_has_a_target_and_the_built_pages_accept_theirs():
    assert set(TARGETS) == set(LESSON_IDS)
    ready = {lesson_id for lesson_id, target in TARGETS.items() if target_ready(target, PAGES)}
    assert ready == set(LESSON_IDS)  # every page a lesson needs is built


def test_a_target_with_an_unknown_parameter_or_value_is_not_ready():
    assert not target_ready(Target("depth", (("dp_nothing", 1),)), PAGES)
    assert not target_ready(Target("depth", (("dp_placements", ("sideways",)),)), PAGES)
    assert not target_ready(Target("nowhere"), PAGES)


def test_a_lesson_link_writes_every_value_even_defaults_with_language_and_mode():
    query = target_query(TARGETS["worked_example"], PAGES["vector_lab"], "zh", "on")
    assert query == {
        "lang": ["zh"],
        "present": ["on"],
        "vl_text": ["1, 2, 3, 4"],  # the page's default, written anyway
        "vl_norm": ["layernorm"],
        "vl_eps": ["0"],
    }
    off = target_query(TARGETS["why_normalize"], DEPTH, "en")
    assert off == {"lang": ["en"], "dp_placements": ["none"], "at": ["results"]}
    assert parse_qs(query_text(off)) == off


def test_answers_keep_the_last_choice_per_lesson_and_count_the_right_ones():
    answers = answers_by_lesson(["worked_example.a", "worked_example.b", "rmsnorm.a", "bogus.b"])
    assert answers == {"worked_example": "b", "rmsnorm": "a"}
    assert score(answers) == (2, 1)
    assert lesson("worked_example").answer == "b"


def test_addresses_for_the_printed_sheet():
    assert app_root("http://host:8501/lessons", "lessons") == "http://host:8501"
    assert app_root("https://example.org/normscope/lessons", "lessons") == (
        "https://example.org/normscope"
    )
    assert app_root("http://host:8501/", "lessons") == "http://host:8501"
    assert page_address("http://h", "depth", "lang=en") == "http://h/depth?lang=en"
    assert page_address("http://h", "", "lang=en") == "http://h/?lang=en"  # the default page


# --- staging: nothing before the commit states the answer ----------------------------------

# What each answer says in words or maths, which the issue found printed above its question:
# none of it may appear before the commit, all of it after (in the explanation).
ANSWER_MARKERS = {
    "why_normalize": {"en": ["doubles"], "zh": ["翻一倍"], "maths": [r"\approx 2"]},
    "rmsnorm": {"en": ["σ² + μ²"], "zh": ["σ² + μ²"], "maths": [r"\sigma^2 + \mu^2"]},
    "geometry": {"en": ["on that plane"], "zh": ["同时落在"], "maths": [r"\langle"]},
    "batchnorm_sequences": {"en": [], "zh": [], "maths": [r"= \beta_c"]},
    "pre_post": {"en": ["grows with depth"], "zh": ["随深度增长"], "maths": []},
    "peri_olmo2": {"en": ["not by how large"], "zh": ["碰巧有多大"], "maths": []},
    "deepnorm": {"en": ["only a little"], "zh": ["一点点"], "maths": []},
    "precision": {"en": [], "zh": [], "maths": [r"\infty", r"90{,}000"]},
    "cost": {"en": [], "zh": [], "maths": [r"\longrightarrow"]},
    "real_models": {"en": ["jumps"], "zh": ["跃升"], "maths": []},
}


def _before_commit(item, lang: str) -> str:
    parts = [translate(f"lessons.{item.id}.{p}", lang, **item.texts()) for p in PARTS[:3]]
    return "\n".join(parts + list(item.maths))


def _after_commit(item, lang: str) -> str:
    parts = [translate(f"lessons.{item.id}.{p}", lang, **item.texts()) for p in PARTS[3:5]]
    return "\n".join(parts + list(item.answer_maths))


@pytest.mark.parametrize("lang", list(LANGUAGES))
@pytest.mark.parametrize("item", LESSONS, ids=LESSON_IDS)
def test_no_lesson_states_its_answer_before_the_commit(item, lang):
    markers = ANSWER_MARKERS.get(item.id, {})
    before, after = _before_commit(item, lang), _after_commit(item, lang)
    for marker in markers.get(lang, []) + markers.get("maths", []):
        assert marker not in before, (item.id, lang, marker)
        assert marker in after, (item.id, lang, marker)  # said, but only after the commit
    # the numbers only the right option states (not the question) are not in the set-up either
    template = catalog(lang)[f"lessons.{item.id}.options.{item.answer}"]
    question = catalog(lang)[f"lessons.{item.id}.question"]
    asked = {item.facts[n].text for n in re.findall(r"\{(\w+)\}", question)}
    for name in set(re.findall(r"\{(\w+)\}", template)) - set(re.findall(r"\{(\w+)\}", question)):
        shown = item.facts[name].text
        if shown not in asked:
            assert shown not in before, (item.id, lang, name, shown)


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_every_lesson_link_is_short_enough_for_a_qr_code(lang):
    for lesson_id, target in TARGETS.items():
        query = query_text(target_query(target, PAGES[target.page], lang, "results"))
        address = page_address("https://normscope.example.org", target.page, query)
        assert len(address) <= 500, (lesson_id, len(address))


def test_a_lesson_that_promises_a_part_of_a_page_lands_there():
    promised = {  # lesson -> the part of its page its text points to
        "batchnorm_sequences": "batch_of_one",
        "cost": "memory",
        "real_models": "residual",
        "why_normalize": "results",
    }
    for lesson_id, place in promised.items():
        target = TARGETS[lesson_id]
        assert target.at == place and target_ready(target, PAGES), lesson_id
        assert target_query(target, PAGES[target.page], "en")["at"] == [place]
    nowhere = Target("kernels", (("kn_d", 4096),), at="batch_of_one")  # another page's place
    assert not target_ready(nowhere, PAGES)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_precision_lesson_names_the_example_as_the_vector_lab_menu_does(lang):
    """Its next step asks for an example by name: the same words as the "Example row" menu."""
    rows = {"massive_activation": preset("massive_activation").rows()}
    params = preset_label_params("massive_activation", rows)
    menu = plain(translate("vector_lab.preset_short.massive_activation", lang, **params))
    name = re.split(r"[,，]\s*d = ", menu)[0]  # the menu adds the width
    item = next(lesson for lesson in LESSONS if lesson.id == "precision")
    assert f"“{name}”" in plain(translate("lessons.precision.next", lang, **item.texts()))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_precision_lesson_names_the_statistics_menu_by_its_label(lang):
    """Its next step asks to change a menu by name: the words the Vector Lab's menu shows."""
    item = next(lesson for lesson in LESSONS if lesson.id == "precision")
    step = plain(translate("lessons.precision.next", lang, **item.texts()))
    for label in ("vector_lab.computed_in", "vector_lab.source", "labels.source.preset"):
        assert f"“{plain(translate(label, lang))}”" in step, label


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_gemma_lesson_writes_the_stored_weight_as_the_vector_lab_it_opens(lang):
    """The Vector Lab's field is γ and its steps scale by (1 + γᵢ): the lesson says γ, not w."""
    item = next(lesson for lesson in LESSONS if lesson.id == "gemma_offset")
    parts = PARTS + tuple(f"options.{o}" for o in OPTIONS)
    texts = [translate(f"lessons.gemma_offset.{part}", lang, **item.texts()) for part in parts]
    assert not [text for text in texts if re.search(r"(?<![\w`])w(?![\w`])", text)]
    assert "1 + γ" in texts[0] and dict(TARGETS["gemma_offset"].values)["vl_gamma"] == "0"
    maths = "".join(item.maths + item.answer_maths)
    assert r"(1 + \gamma_i)" in maths and not re.search(r"\bw_", maths)  # as the steps write it


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_first_lesson_tells_the_measured_value_from_the_doubling_law(lang):
    """2.5×10¹⁴ is the engine's seeded stack; 2⁴⁸ ≈ 2.8×10¹⁴ is what exact doubling gives."""
    item = next(lesson for lesson in LESSONS if lesson.id == "why_normalize")
    assert item.facts["doubling"].value == 2.0 ** item.facts["layers"].value
    reveal = translate("lessons.why_normalize.reveal", lang, **item.texts())
    assert item.texts()["none_final"] in reveal and item.texts()["doubling"] in reveal


# --- no lesson gives away a later lesson's answer --------------------------------------------

# How an earlier lesson's text could state a later lesson's answer (regexes, filled with the
# later lesson's facts), besides that lesson's own ANSWER_MARKERS: lesson 1 said where Pre-Norm
# and Post-Norm end (lesson 7's question), lesson 3 that LayerNorm's outputs have mean 0 and
# length √d (lesson 5's).
GIVEAWAYS = {
    "geometry": {
        "en": [r"mean 0 and length √d", r"add up to 0"],
        "zh": [r"均值都是 0", r"之和为 0"],
    },
    "pre_post": {
        "en": [r"Pre-Norm[^.]*≈\s{pre_final}", r"Post-Norm[^.]*stays at 1"],
        "zh": [r"Pre-Norm[^。]*≈\s{pre_final}", r"Post-Norm[^。]*保持在 1"],
    },
}


def _every_part(item, lang: str) -> str:
    return "\n".join(translate(f"lessons.{item.id}.{p}", lang, **item.texts()) for p in PARTS)


@pytest.mark.parametrize("lang", list(LANGUAGES))
@pytest.mark.parametrize("item", LESSONS[1:], ids=LESSON_IDS[1:])
def test_no_lesson_gives_away_a_later_lessons_answer(item, lang):
    """Every text of the lessons before ``item`` (their explanations, too) leaves its answer
    to be predicted; each pattern is one the lesson's own explanation matches."""
    given = GIVEAWAYS.get(item.id, {}).get(lang, [])
    patterns = [p.format(**item.texts()) for p in given]
    patterns += [re.escape(m) for m in ANSWER_MARKERS.get(item.id, {}).get(lang, [])]
    if given:
        assert any(re.search(p, _after_commit(item, lang)) for p in patterns), item.id
    for earlier in LESSONS[: LESSONS.index(item)]:
        text = _every_part(earlier, lang)
        found = [p for p in patterns if re.search(p, text)]
        assert not found, (earlier.id, "gives away", item.id, found)
