"""Join codes, secrets, and what the join limits leave a guesser."""

from __future__ import annotations

import pytest

from classroom import rules


def test_new_codes_use_only_the_unambiguous_alphabet():
    codes = [rules.new_code() for _ in range(200)]
    assert all(len(c) == rules.CODE_LENGTH for c in codes)
    assert set("".join(codes)) <= set(rules.CODE_ALPHABET)
    assert not set("01ILOU") & set(rules.CODE_ALPHABET)
    assert len(set(codes)) == len(codes)


@pytest.mark.parametrize(
    "typed, code",
    [
        ("ABCDEF", "ABCDEF"),
        ("abc-def", "ABCDEF"),
        (" ab cd ef\n", "ABCDEF"),
        # any dash: the page says dashes do not matter (a slide or a phone writes these)
        ("ABC—DEF", "ABCDEF"),
        ("ABC–DEF", "ABCDEF"),
        ("ABC\u2010DEF", "ABCDEF"),
        ("ABC\u2011DEF", "ABCDEF"),
        ("ABC−DEF", "ABCDEF"),  # the minus sign
        ("ABC_DEF", None),
        ("ß2345", None),  # Python upper-cases it to "SS": no code's letter
        ("ABCDE", None),
        ("ABCDEFG", None),
        ("ABCDE1", None),
        ("ＡＢＣＤＥＦ", "ABCDEF"),  # typed on a Chinese keyboard: read as its letters
        ("ａｂｃ－ｄｅｆ", "ABCDEF"),
        ("A" * 1000, None),
        (None, None),
        (123456, None),
    ],
)
def test_a_typed_code_is_normalized_or_refused(typed, code):
    assert rules.normalize_code(typed) == code


def test_a_code_is_shown_in_two_halves():
    assert rules.shown_code("ABCDEF") == "ABC-DEF"
    assert rules.normalize_code(rules.shown_code("ABCDEF")) == "ABCDEF"


def test_a_secret_matches_only_its_own_digest():
    key = rules.new_secret(256)
    assert rules.matches(key, rules.digest(key))
    assert not rules.matches(key + "x", rules.digest(key))
    assert not rules.matches(rules.digest(key), rules.digest(key))
    assert not rules.matches(None, rules.digest(key))
    assert not rules.matches("", rules.digest(""))


def test_one_address_guessing_finds_a_class_in_no_useful_time():
    alone = rules.brute_force(addresses=1, open_classes=rules.MAX_OPEN_CLASSES)
    client = rules.JOIN_LIMITS["client"]
    assert alone.codes == 30**6
    assert alone.guesses_per_day == client.count * 86400 / client.window_s
    assert alone.expected_days > 3 * 365  # even with the server full of classes
    assert alone.chance_per_class < 1e-4


def test_many_addresses_are_bounded_by_the_servers_limit_plus_one_guess_each():
    client, server = rules.JOIN_LIMITS["client"], rules.JOIN_LIMITS["server"]
    windows_per_day = 86400 / client.window_s
    many = rules.brute_force(addresses=1000, open_classes=1)
    assert many.guesses_per_day == (server.count + 1000) * windows_per_day
    few = rules.brute_force(addresses=5, open_classes=1)
    assert few.guesses_per_day == 5 * client.count * windows_per_day
    assert many.chance_per_class < 1e-3


@pytest.mark.parametrize(
    "text, code",
    [
        ("https://example.org/lessons?lang=zh&ls_class=ABC-DEF", "ABC-DEF"),
        ("http://10.0.0.5:8501/classroom?cl_code=abcdef&cl_key=k", "abcdef"),
        ("/lessons?ls_class=AAAAAA&ls_class=BBBBBB", "BBBBBB"),  # the last, as the page reads
        ("https://example.org/lessons?lang=en", "https://example.org/lessons?lang=en"),
        ("ABC-DEF", "ABC-DEF"),
        ("what?", "what?"),
        ("http://[?ls_class=ABCDEF", "ABCDEF"),  # no valid URL, still a query
        ("https://x/lessons?ls_class=ABCDEF#top", "ABCDEF"),
    ],
)
def test_a_pasted_link_gives_its_code_and_other_text_stays(text, code):
    assert rules.code_of_link(text) == code
