"""A model's modules built with empty (meta) parameters, in this thread only.

accelerate's ``init_empty_weights`` swaps ``nn.Module.register_parameter`` for the whole
process while it runs.  A module that any other thread builds meanwhile gets meta
parameters: a Depth simulation, a training run, another session's model.  In a thread that
built ``nn.Linear`` 2,000 times beside a loop of ``init_empty_weights``, every weight came out
meta, and the test suite saw it as "Cannot copy out of meta tensor" in a tiny model built
while a cached model loaded.  Two overlapping uses can also leave the swap in place for
good, since each restores what it found.

Here the swap is installed once, for the process, and acts only in a thread inside
``empty_parameters()``.  A parameter is moved to the meta device as it is registered, as
accelerate does.  Buffers are built as usual: rotary frequencies are computed from the
config, and a checkpoint does not hold them.  ``torch.device("meta")`` is thread-local too,
but it would put those buffers on the meta device as well.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch

_local = threading.local()
_install_lock = threading.Lock()
_registered = {}  # "original": nn.Module.register_parameter as found, once installed


def _register(module: torch.nn.Module, name: str, param) -> None:
    _registered["original"](module, name, param)
    if param is None or not getattr(_local, "depth", 0):
        return
    kept = module._parameters[name]
    extra = dict(kept.__dict__)  # a subclass's attributes (transformers marks its own)
    extra.pop("requires_grad", None)
    moved = type(kept)(kept.to("meta"), requires_grad=param.requires_grad)
    moved.__dict__.update(extra)
    module._parameters[name] = moved


@contextmanager
def empty_parameters() -> Iterator[None]:
    """Modules built in this thread inside this block get meta parameters; other threads'
    modules are built as usual."""
    with _install_lock:
        if "original" not in _registered:
            _registered["original"] = torch.nn.Module.register_parameter
            torch.nn.Module.register_parameter = _register
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1
