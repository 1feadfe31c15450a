"""The class chart, the join link's QR code and its wrapping (pure builders)."""

from __future__ import annotations

import html

import pytest
import segno

from classroom.rules import LessonState, Room
from ui.figures.classroom import (
    LABEL_COLUMNS,
    PROJECTED_COLUMNS,
    PROJECTED_FONT,
    _columns,
    _wrapped,
    answers_chart,
    qr_png,
)
from ui.i18n import translate
from ui.lessons.catalog import LESSONS
from ui.projected import for_projector
from ui.views.classroom import breakable, this_computer_only

OPTIONS = {"a": "About 48", "b": "About 2.5×10¹⁴: it doubles at every layer", "c": "1", "d": "∞"}


def _room(*counts: dict[str, int], revealed: bool = False) -> Room:
    return Room("why_normalize", LessonState(len(counts), True, revealed), 5, counts, True)


def test_each_round_is_a_group_of_bars_with_its_counts():
    figure = answers_chart(_room({"a": 3, "b": 1}, {"b": 4}), OPTIONS, "b", "en")
    assert [bar.name for bar in figure.data] == ["Round 1", "Round 2"]
    assert list(figure.data[0].x) == [3, 1, 0, 0] and list(figure.data[1].x) == [0, 4, 0, 0]
    assert figure.layout.barmode == "group" and figure.layout.showlegend


def test_projected_the_answers_and_counts_are_in_the_rooms_size():
    """Presenting, the answers and their counts are what the room reads: the page's type
    (20 px), kept so by ``for_projector`` (which raises tick labels to 16 px, lowers none)."""
    room = _room({"a": 3, "b": 1})
    shown = for_projector(answers_chart(room, OPTIONS, "b", "en", projected=True))
    assert shown.layout.yaxis.tickfont.size == PROJECTED_FONT == shown.data[0].textfont.size


def test_each_bar_says_its_count_so_the_chart_has_no_count_axis():
    figure = answers_chart(_room({"a": 3, "b": 1}), OPTIONS, "b", "en")
    assert figure.layout.xaxis.visible is False
    assert list(figure.data[0].text) == ["3", "1", "0", "0"]
    assert figure.data[0].textposition == "outside"


@pytest.mark.parametrize(
    "text",
    [
        "(b) About 2.5×10¹⁴: it roughly doubles at every layer",
        "(c) 仍约为 1：残差连接使它保持稳定，每一层都一样；再往后也一样",  # no spaces
        "(b) Post ≈\u00a01 and Pre ≈\u00a048, and both keep growing",  # no-break spaces
        "(a) Nothing: the output is [−1, 1, −1, 1] in the end",  # a list
    ],
)
def test_an_answers_label_is_wrapped_by_its_width_on_screen_and_kept_whole(text):
    """A Chinese character takes two columns (counted as one, its label ran past the width it
    was given); the answer is read whole, never cut with "…", never broken at a no-break
    space ("Pre ≈ / 48"), before closing punctuation or inside a bracketed list
    ("[−1, 1, −1, / 1]")."""
    lines = _wrapped(text, PROJECTED_COLUMNS[0])
    assert "".join(lines).replace(" ", "") == text.replace(" ", "") and len(lines) > 1
    assert all(_columns(line) <= PROJECTED_COLUMNS[0] for line in lines)
    assert not [line for line in lines if line[0] in "，。；：、）"]
    assert all(line.count("[") == line.count("]") for line in lines)


@pytest.mark.parametrize(
    "text, columns, expected",
    [
        ("the output=[−1, 1, −1, 1] in the end", 26, ["the output=[−1, 1, −1, 1]", "in the end"]),
        ("(a) 输出为 [−1, 1, −1, 1]，最后", 16, ["(a) 输出为", "[−1, 1, −1, 1]，", "最后"]),
        ("About 2.5×10¹⁴，然后", 10, ["About", "2.5×10¹⁴，", "然后"]),
        ("see [a bracket longer than two dozen characters] end", 20, None),
        ("a ] b [ c", 3, ["a ]", "b [", "c"]),
    ],
)
def test_a_bracket_keeps_its_word_and_its_punctuation_and_a_long_one_wraps(text, columns, expected):
    """A short bracketed list stays with the word it follows and the closing punctuation
    after it; a long one wraps as words do; unbalanced brackets are plain characters."""
    lines = _wrapped(text, columns, most=9)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    if expected is None:
        assert all(_columns(line) <= columns for line in lines)
    else:
        assert lines == expected


def test_every_lessons_answers_fit_a_720_px_projector_whole():
    """Each answer in two lines at most, whole: the chart of two rounds (its legend on top)
    is at most 338 px high, which leaves the page's title, the question and its counts above
    it on a 1,280 × 720 screen (tests/e2e/test_class_mode_browser.py measures the page)."""
    for item in LESSONS:
        for lang in ("en", "zh"):
            options = {
                o: translate(f"lessons.{item.id}.options.{o}", lang, **item.texts()) for o in "abcd"
            }
            room = _room({"a": 1}, {"a": 1}, revealed=True)
            figure = answers_chart(room, options, item.answer, lang, projected=True)
            assert figure.layout.height <= 338, (item.id, lang)
            assert all(label.count("<br>") <= 1 for label in figure.data[0].y), (item.id, lang)
            assert not [label for label in figure.data[0].y if "…" in label], (item.id, lang)
            # balanced: no word, character or tick left alone on a line ("…保持稳 / 定")
            for label in figure.data[0].y:
                lines = html.unescape(label.removeprefix("<b>").removesuffix("</b>"))
                assert min(_columns(line) for line in lines.split("<br>")) >= 8, label
                assert "= 0<br>" not in label and "+<br>" not in label, label  # a formula whole


def test_the_answer_is_marked_only_once_revealed():
    hidden = answers_chart(_room({"b": 2}), OPTIONS, "b", "en")
    shown = answers_chart(_room({"b": 2}, revealed=True), OPTIONS, "b", "en")
    assert not any("✓" in label for label in hidden.data[0].y)
    assert [("✓" in label) for label in shown.data[0].y] == [False, True, False, False]


@pytest.mark.parametrize("projected", [False, True])
def test_the_right_answers_tick_stays_within_its_labels_width(projected):
    """The tick is wrapped with the answer, held to its last word: it ran two columns past
    the label's width when added after the wrap."""
    long = {**OPTIONS, "b": "About 2.5×10¹⁴: it doubles at every layer of a deep stack of them"}
    shown = answers_chart(_room({"b": 2}, revealed=True), long, "b", "en", projected=projected)
    lines = html.unescape(shown.data[0].y[1].removeprefix("<b>").removesuffix("</b>"))
    lines = lines.split("<br>")
    widest = max(_columns(line) for line in lines)
    assert lines[-1].endswith("\u00a0✓") and len(lines) > 1
    assert widest <= (PROJECTED_COLUMNS[-1] if projected else LABEL_COLUMNS)


def _looks(bar) -> list[tuple]:
    """How each of a trace's bars is drawn: (its fill, its outline's width)."""
    colors, widths = bar.marker.color, bar.marker.line.width
    count = len(bar.y)
    colors = list(colors) if isinstance(colors, list | tuple) else [colors] * count
    widths = list(widths) if isinstance(widths, list | tuple) else [widths] * count
    return list(zip(colors, widths, strict=True))


def test_once_revealed_the_right_answers_bars_are_drawn_unlike_the_others():
    hidden = answers_chart(_room({"b": 2}, {"b": 1}), OPTIONS, "b", "en")
    shown = answers_chart(_room({"b": 2}, {"b": 1}, revealed=True), OPTIONS, "b", "en")
    for bar in hidden.data:  # before the reveal no bar stands out
        assert len(set(_looks(bar))) == 1
    for bar in shown.data:  # in every round: the answer (b) unlike a, c, d, which look alike
        a, b, c, d = (tuple(look) for look in _looks(bar))
        assert a == c == d and b[0] != a[0] and b[1] != a[1]


def test_labels_are_in_the_page_language_and_long_answers_wrap():
    figure = answers_chart(_room({"a": 1}, {"a": 1}), OPTIONS, "b", "zh")
    assert figure.data[1].name == "第 2 轮"
    assert "<br>" in figure.data[0].y[1]


def test_the_join_links_qr_code_has_few_modules_to_read_from_the_back_of_a_room():
    join = "http://normscope.example.org:8501/lessons?ls_class=ABCDEF"
    png = qr_png(join)
    assert png.startswith(b"\x89PNG")
    assert segno.make(join, error="m").version <= 4  # 33 x 33 modules at most


def test_the_join_link_wraps_after_a_slash_a_question_mark_or_an_ampersand_only():
    shown = breakable("http://h.example:8501/lessons?lang=zh&ls_class=AB<C")
    assert shown == (
        "http://<wbr>h.example:8501/<wbr>lessons?<wbr>lang=zh&amp;<wbr>ls_class=AB&lt;C"
    )
    assert (
        html.unescape(shown.replace("<wbr>", ""))
        == "http://h.example:8501/lessons?lang=zh&ls_class=AB<C"
    )


@pytest.mark.parametrize(
    "address, host",
    [
        ("http://127.0.0.1:8501/lessons?ls_class=ABCDEF", "127.0.0.1"),
        ("http://127.1.2.3:8501/lessons", "127.1.2.3"),
        ("http://localhost:8501/lessons", "localhost"),
        ("http://[::1]:8501/lessons", "::1"),
        ("http://[::ffff:127.0.0.1]:8501/lessons", "::ffff:127.0.0.1"),
        ("http://0.0.0.0:8501/lessons", "0.0.0.0"),
        ("http://localhost.:8501/lessons", "localhost."),
        ("http://192.0.2.2:8501/lessons?ls_class=ABCDEF", None),
        ("https://normscope.example.org/lessons", None),
        ("lessons?ls_class=ABCDEF", None),  # no address known: nothing to warn of
    ],
)
def test_a_join_link_at_this_computers_own_address_is_named_for_the_warning(address, host):
    assert this_computer_only(address) == host
