"""Class mode's way to its data: one ``ClassStore`` per server process, the client's address
(through a trusted proxy too), and a store action's refusal as the reader's text.

The store (``classroom/store.py``) decides every rule; the instructor's page and the learner's
lessons page only call it and say what it refused.  Nothing here is engine work, so it does
not go through ``ui/compute.py``: each call is one or two indexed queries.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import os
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from classroom.store import ClassStore, open_store
from engine.errors import EngineError
from ui.errors import error_text
from ui.i18n import translate
from ui.lessons.catalog import ANSWER_IDS, lesson

R = TypeVar("R")
COOKIE_PREFIX = "normscope_class_"  # + the class code: this browser's learner token in it
INSTRUCTOR_COOKIE = "normscope_teach_"  # + the class code: the instructor's key in it


@st.cache_resource(show_spinner=False)
def store() -> ClassStore:
    """The process's class store (SQLite file, or PostgreSQL when its URL is set)."""
    return open_store(ANSWER_IDS)


# Proxies whose X-Forwarded-For is believed: addresses or networks, comma-separated.  By
# default the loopback (scripts/serve_class.py's HAProxy on this machine); compose.yaml names
# its balancer's address.  Streamlit gives a loopback peer as None.
PROXIES_VARIABLE = "NORMSCOPE_TRUSTED_PROXIES"
DEFAULT_PROXIES = "127.0.0.0/8, ::1"


def _trusted(peer: str | None, setting: str) -> bool:
    if peer is None:
        return True
    try:
        address = ipaddress.ip_address(peer)
        networks = [ipaddress.ip_network(n.strip()) for n in setting.split(",") if n.strip()]
    except ValueError:  # a peer or a setting that is no address: nothing believed
        return False
    return any(address in network for network in networks)


def client_of(peer: str | None, forwarded: str, setting: str = DEFAULT_PROXIES) -> str:
    """The client's address from the TCP peer, or, when the peer is a trusted proxy, from
    the last address of X-Forwarded-For: the one the proxy appended (deploy/haproxy.cfg's
    ``option forwardfor``); earlier ones came from the client and may be forged.  Behind
    HAProxy every learner's peer is the proxy, so without this a whole room would share one
    allowance of wrong codes."""
    if _trusted(peer, setting):
        last = forwarded.split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(last))
        except ValueError:
            pass  # no header (no proxy in front), or not an address
    return peer or "local"


def client() -> str:
    """Where this browser's requests come from, for the store's per-address limits."""
    setting = os.environ.get(PROXIES_VARIABLE, DEFAULT_PROXIES)
    # every line of the header, in order: a proxy adds its own line after the client's
    forwarded = ", ".join(st.context.headers.get_all("X-Forwarded-For"))
    return client_of(st.context.ip_address, forwarded, setting)


def refusal(action: Callable[..., R], *args) -> tuple[R | None, EngineError | None]:
    """``action(*args)`` on the store: (its result, None), or (None, the refusal itself)."""
    try:
        return action(*args), None
    except EngineError as error:
        return None, error


def attempt(action: Callable[..., R], *args) -> tuple[R | None, str | None]:
    """``action(*args)`` on the store: (its result, None), or (None, the refusal's message)."""
    result, error = refusal(action, *args)
    return result, None if error is None else error_text(error)


def counts_for_people(counts: str, lang: str) -> str:
    """The store's counts CSV (``lesson,round,option,votes``, ids) with two columns after
    them for whoever opens the file: the lesson's title in ``lang`` and whether the option is
    the lesson's right answer (``yes``/``no``).  The ids and their order stay as they are, so
    a script that reads the file by id or by column keeps working."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for number, row in enumerate(csv.reader(io.StringIO(counts))):
        if number == 0:
            writer.writerow([*row, "title", "right"])
            continue
        item = lesson(row[0])
        title = translate(f"lessons.{item.id}.title", lang)
        writer.writerow([*row, title, "yes" if row[2] == item.answer else "no"])
    return out.getvalue()
