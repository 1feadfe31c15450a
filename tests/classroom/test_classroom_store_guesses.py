"""The class store, SQLite and PostgreSQL: an instructor's link tests no code for free, and a
class past its day is deleted although nobody starts or joins another."""

from __future__ import annotations

import pytest

from classroom import rules
from engine.errors import EngineError
from tests.classroom.conftest import TABLES
from tests.classroom.sample_class import FIRST, INSTRUCTOR, class_with


def test_an_instructors_action_refuses_an_open_classs_code_as_it_refuses_a_wrong_one(store):
    """Wrong join codes are counted and limited per address; an instructor's action answers
    before any count, so it must not tell an open class's code (wrong key) from a code no
    class has: the Class page with ``cl_code=<guess>&cl_key=x`` would test any number."""
    new = store.create_class(INSTRUCTOR)
    wrong = "222222" if new.code != "222222" else "333333"
    said = {}
    for code in [wrong] * (3 * rules.JOIN_LIMITS["client"].count) + [new.code]:
        with pytest.raises(EngineError) as refusal:
            store.room(code, "any key", FIRST)
        said[code] = refusal.value.key
    assert said[new.code] == said[wrong] == "classroom.not_instructor"


def test_a_class_past_its_day_is_deleted_while_its_pages_poll_it(store, snapshot, clock):
    """ "A class and everything it recorded are deleted 24 hours after it starts": the polled
    reads purge too (at most once a minute a process), not only a start or a join."""
    new, (ann,) = class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    clock.advance(rules.CLASS_LIFETIME_S * 7)  # a week later
    for call in (
        lambda: store.learner_view(new.code, ann, FIRST),  # what a learner's page polls
        lambda: store.room(new.code, new.instructor_key, FIRST),  # the instructor's chart
        lambda: store.vote(new.code, ann, f"{FIRST}.b"),
        lambda: store.export_csv(new.code, new.instructor_key),
    ):
        with pytest.raises(EngineError):
            call()
    rows = snapshot()
    assert rows["votes"] == rows["learners"] == rows["classes"] == [], {
        table: len(rows[table]) for table in TABLES
    }
