"""The class the class-store tests work on: the lessons voted on, the instructor's address,
and a new class with learners joined (``class_with``)."""

from __future__ import annotations

from ui.lessons.catalog import LESSON_IDS

FIRST, SECOND = LESSON_IDS[0], LESSON_IDS[1]
INSTRUCTOR = "192.0.2.1"  # the instructor's address


def class_with(store, learners: int):
    new = store.create_class(INSTRUCTOR)
    tokens = [store.join(new.code, f"10.0.0.{i}") for i in range(learners)]
    return new, tokens
