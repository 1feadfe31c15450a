"""ui.url: list parameters in links.  A list keeps its known items and names the unknown ones;
an empty item is no item; a repeated one counts once; a list naming more different items than
its page could know is read only that far, keeping the known ones."""

from __future__ import annotations

from ui.labels import every_label
from ui.url.codec import parse
from ui.url.pages import DEPTH, KERNELS


def test_an_empty_item_in_a_list_is_no_item():
    assert parse(DEPTH["dp_placements"], ["post,"]) == (["post"], None)
    assert parse(DEPTH["dp_placements"], ["post,,pre"]) == (["post", "pre"], None)
    value, refusal = parse(DEPTH["dp_placements"], [","])  # nothing named at all: refused
    assert value is None and refusal is not None


def test_a_list_keeps_its_known_items_and_names_the_unknown_ones():
    """A stale lesson answer in a learner's link must not wipe the answers beside it."""
    from ui.url.pages import LESSONS_PAGE

    value, refusal = parse(LESSONS_PAGE["ls_answers"], ["worked_example.b,bogus.z,rmsnorm.c"])
    assert value == ["worked_example.b", "rmsnorm.c"]
    assert refusal.key == "partly_accepted" and refusal.params["value"] == "bogus.z"
    value, refusal = parse(DEPTH["dp_placements"], ["post", "sideways"])
    assert value == ["post"] and refusal.params["value"] == "sideways"
    # two unknown numbers read as two: "3,999" read as three thousand nine hundred ninety-nine
    from ui.url.pages import AXES

    value, refusal = parse(AXES["ax_sizes"], ["1,3,999"])
    assert value == [1] and refusal.params["value"] == "3, 999"
    assert parse(LESSONS_PAGE["ls_lesson"], ["precision"]) == ("precision", None)
    assert parse(LESSONS_PAGE["ls_lesson"], ["<script>"])[1] is not None


def test_a_list_naming_more_items_than_it_has_names_is_refused_before_they_are_read():
    param = DEPTH["dp_placements"]  # seven placements, each by its id and its names
    assert parse(param, ["post,pre,post,pre"]) == (["post", "pre"], None)  # repeats are kept
    names = {name for p in param.choices for name in every_label("placement", p)}
    every_name = [*param.choices, *sorted(names)]  # ids, en and zh names, older names
    assert len({n.casefold() for n in every_name}) > 2 * len(param.choices)
    value, refusal = parse(param, [",".join(every_name)])  # each at its last name's place
    assert refusal is None and sorted(value) == sorted(param.choices)
    value, refusal = parse(param, [",".join(f"sideways{i}" for i in range(48_000))])
    assert value is None and refusal.key == "too_many_items"
    assert refusal.params["items"] == "48,000"
    assert refusal.params["limit"] == len({n.casefold() for n in every_name})
    assert len(refusal.params["value"]) < 200  # what the notice repeats, not the whole list
    value, refusal = parse(param, [f"s{i}" for i in range(len(every_name) + 1)])  # as keys
    assert value is None and refusal.key == "too_many_items"


def test_an_over_long_list_keeps_the_known_items_among_those_it_reads():
    param = DEPTH["dp_placements"]
    most = len({n.casefold() for p in param.choices for n in (p, *every_label("placement", p))})
    long_list = ["pre", "post", *(f"x{i}" for i in range(most))]  # more than it could know
    value, refusal = parse(param, [",".join(long_list)])
    assert value == ["pre", "post"] and refusal.key == "too_many_items_kept"
    assert refusal.params["items"] == f"{most + 2:,}" and refusal.params["limit"] == most
    value, refusal = parse(param, [",".join([*(f"x{i}" for i in range(most)), "pre"])])
    assert value is None and refusal.key == "too_many_items"  # "pre" was past what is read


def test_a_repeated_item_counts_once_before_the_count():
    widths = KERNELS["kn_widths"]
    most = 2 * len(widths.choices)
    assert parse(widths, [",".join(["256"] * (most + 1))]) == ([256], None)
    assert parse(widths, ["256"] * 48_000) == ([256], None)  # as repeated keys, the same
    spelled = [f"{w},{w}.0,{w:e}" for w in widths.choices]  # one number, however written
    assert ",".join(spelled).count(",") + 1 > 2 * len(widths.choices)  # the limit before
    assert parse(widths, [",".join(spelled)]) == (list(widths.choices), None)
