"""Class mode's way to its data: one ``ClassStore`` per server process, the client's address,
and a store action's refusal as the reader's text.

The store (``classroom/store.py``) decides every rule; the instructor's page and the learner's
lessons page only call it and say what it refused.  Nothing here is engine work, so it does
not go through ``ui/compute.py``: each call is one or two indexed queries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from classroom.store import ClassStore, open_store
from engine.errors import EngineError
from ui.errors import error_text
from ui.lessons.catalog import ANSWER_IDS

R = TypeVar("R")
COOKIE_PREFIX = "normscope_class_"  # + the class code: this browser's learner token in it


@st.cache_resource(show_spinner=False)
def store() -> ClassStore:
    """The process's class store (SQLite file, or PostgreSQL when its URL is set)."""
    return open_store(ANSWER_IDS)


def client() -> str:
    """Where this browser's requests come from, for the store's per-address limits."""
    return st.context.ip_address or "local"


def attempt(action: Callable[..., R], *args) -> tuple[R | None, str | None]:
    """``action(*args)`` on the store: (its result, None), or (None, the refusal's message)."""
    try:
        return action(*args), None
    except EngineError as error:
        return None, error_text(error)
