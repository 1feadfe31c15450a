"""What every long engine computation shares: progress and stop callbacks, and thread caps.

``Progress`` is called with the fraction done (0..1); ``StopCheck`` is polled between units of
work, and a computation that sees it return True raises ``Cancelled``.  ``ui/compute.py``
passes both, so a page can show progress and cancel work nobody waits for any more.

``torch_threads`` runs a computation with a given number of intra-op threads, then restores.
Why it exists: on a small shared CPU (2 cores, other processes busy) OpenMP's worker threads
spin-wait for each other, and a 2-thread run of the depth simulator is many times slower than
a 1-thread run (benchmarks/RESULTS.md, "Depth simulator (CPU)").  Callers that know they
share the machine pass ``threads=1``; ``None`` leaves torch's setting alone.

The setting is process-wide for new threads and per-thread for OpenMP, so the manager saves
and restores the calling thread's value under a lock; it never changes anything permanently.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

Progress = Callable[[float], None]
StopCheck = Callable[[], bool]


class Cancelled(Exception):
    """Raised inside a computation when its ``StopCheck`` returned True."""


_LOCK = threading.Lock()
_active = 0  # blocks currently inside torch_threads, across every thread of the process
_saved = 0  # torch's thread count before the first of them entered


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Within the block torch uses ``threads`` intra-op threads (None: unchanged).

    torch's setting is process-wide, and Streamlit runs sessions in threads, so blocks may
    overlap: the first block to enter saves the setting and the last to leave restores it
    (a reference count under a lock), whatever order they finish in.
    """
    global _active, _saved
    if threads is None:
        yield
        return
    if threads < 1:
        raise ValueError(f"threads must be >= 1 or None, got {threads}")
    with _LOCK:
        if _active == 0:
            _saved = torch.get_num_threads()
        _active += 1
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        with _LOCK:
            _active -= 1
            if _active == 0:
                torch.set_num_threads(_saved)
