"""One parse of a GGUF file per model load (``one_parse``).

transformers reads a GGUF model in three ``from_pretrained`` calls (the config, the
tokenizer, the model: the config's twice), and each opens the file anew with gguf's
``GGUFReader``, which parses every metadata field: SmolLM2-135M's 49,152-token vocabulary
and its merges are ~590,000 field parts, seconds a parse. Then, to name the weights, it
builds gguf's tensor-name table (``get_tensor_name_map``) once for each module of the model
(397 times for SmolLM2), each the same table. Neither depends on anything but its arguments.

Inside ``one_parse()`` both are kept: a file's reader by its path (transformers only reads
from it), the name table by its architecture and block count; both are dropped when the
outermost ``one_parse`` ends. A model comes out the same (``tests/dumps/test_gguf_parse.py``)
and a first, uncached load is faster (figures: benchmarks/RESULTS.md, "A GGUF file parsed
once per load").
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_depth = 0  # one_parse scopes open, in every thread
_originals: dict[str, object] = {}  # gguf's own functions while they are replaced
_readers: dict[tuple, object] = {}
_name_maps: dict[tuple, object] = {}


def _kept(store: dict, make, key: tuple):
    with _LOCK:
        found = store.get(key)
    if found is None:
        found = make(*key)  # outside the lock: a parse takes seconds
        with _LOCK:
            found = store.setdefault(key, found)
    return found


def _reader(path, mode: str = "r"):
    return _kept(_readers, _originals["GGUFReader"], (str(path), mode))


def _name_map(arch, n_blocks):
    return _kept(_name_maps, _originals["get_tensor_name_map"], (arch, n_blocks))


@contextmanager
def one_parse() -> Iterator[None]:
    """While open, every ``GGUFReader(path)`` of one file answers the same parsed reader, and
    every ``get_tensor_name_map(arch, blocks)`` the same table (gguf's module attributes,
    which transformers imports at each call, are replaced and then put back)."""
    import gguf

    global _depth
    with _LOCK:
        if _depth == 0:
            _originals.update(
                GGUFReader=gguf.GGUFReader, get_tensor_name_map=gguf.get_tensor_name_map
            )
            gguf.GGUFReader, gguf.get_tensor_name_map = _reader, _name_map
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0:
                gguf.GGUFReader = _originals["GGUFReader"]
                gguf.get_tensor_name_map = _originals["get_tensor_name_map"]
                _originals.clear()
                _readers.clear()
                _name_maps.clear()
