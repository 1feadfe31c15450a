"""What a kept value is keyed by: a function's name and a digest of its arguments, for the
engine's results (``ui/compute.py``) and the figures built once per input
(``ui/views/charts.py``, ``built``).

Streamlit cannot hash a function, and its own hashing walks a tuple number by number in
Python on every rerun (the Vector Lab's 64 x 1,024 inputs: more than their computation), so
the caches get the name and a digest of the pickle instead."""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Callable
from typing import Any


def function_name(fn: Callable) -> str:
    """Names the function in a cache key."""
    return f"{fn.__module__}.{fn.__qualname__}"


def digest(key: Any) -> bytes:
    """``key`` (specs, tuples, numbers, text) as 16 bytes, equal for equal values.  Pickled
    without its memo: with it, a text shared by two fields pickles unlike two equal texts."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True
    pickler.dump(key)
    return hashlib.blake2b(buffer.getvalue(), digest_size=16).digest()
