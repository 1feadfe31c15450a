"""The instructor's counts file: the store's ids and counts as they were, each row with its
lesson's title in the page's language and whether its option is the right answer."""

from __future__ import annotations

import csv
import io

from classroom import rules
from ui.classroom import counts_for_people
from ui.i18n import translate
from ui.lessons.catalog import LESSON_IDS, OPTIONS, lesson

FIRST, SECOND = LESSON_IDS[:2]


def _counts() -> str:
    options = {lesson_id: OPTIONS for lesson_id in LESSON_IDS}
    counted = [(FIRST, 1, lesson(FIRST).answer, 3), (FIRST, 2, "a", 1), (SECOND, 1, "b", 2)]
    return rules.counts_csv(options, {}, counted)


def test_every_row_keeps_its_ids_and_counts_and_gains_the_title_and_whether_it_is_right():
    plain = list(csv.DictReader(io.StringIO(_counts())))
    for lang in ("en", "zh"):
        rows = list(csv.DictReader(io.StringIO(counts_for_people(_counts(), lang))))
        assert [{k: r[k] for k in ("lesson", "round", "option", "votes")} for r in rows] == plain
        for row in rows:
            assert row["title"] == translate(f"lessons.{row['lesson']}.title", lang)
            assert row["right"] == (
                "yes" if row["option"] == lesson(row["lesson"]).answer else "no"
            )
    first = next(csv.reader(io.StringIO(counts_for_people(_counts(), "zh"))))
    assert first == ["lesson", "round", "option", "votes", "title", "right"]  # ids first


def test_a_title_in_chinese_reads_back_whole():
    text = counts_for_people(_counts(), "zh")
    title = translate(f"lessons.{FIRST}.title", "zh")
    assert any(row[4] == title for row in csv.reader(io.StringIO(text)))
    assert counts_for_people(rules.counts_csv({}, {}, []), "zh") == (
        "lesson,round,option,votes,title,right\n"
    )
