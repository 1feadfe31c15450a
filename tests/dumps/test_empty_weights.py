"""Empty (meta) parameters for a model about to receive cached weights, in one thread only."""

from __future__ import annotations

import threading

import torch

from engine.dumps.empty_weights import empty_parameters


class _WithBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.register_buffer("freq", torch.arange(4.0), persistent=False)


def test_parameters_are_empty_and_buffers_computed_inside_and_nothing_changes_outside():
    with empty_parameters():
        inside = _WithBuffer()
        with empty_parameters():  # nested: still empty, and still empty after it ends
            torch.nn.Linear(2, 2)
        after_nested = torch.nn.Linear(2, 2)
    assert inside.linear.weight.is_meta and inside.linear.bias.is_meta
    assert (
        isinstance(inside.linear.weight, torch.nn.Parameter) and inside.linear.weight.requires_grad
    )
    assert after_nested.weight.is_meta
    assert not inside.freq.is_meta and inside.freq.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not torch.nn.Linear(2, 2).weight.is_meta


def test_another_threads_modules_are_built_as_usual_meanwhile():
    """accelerate's init_empty_weights swapped register_parameter for the whole process: a
    module another thread built while a cached model loaded (a Depth run, a test's tiny
    model) got meta weights, every one of 2,000 in a loop beside it."""
    stop = threading.Event()

    def load_models():
        while not stop.is_set():
            with empty_parameters():
                assert torch.nn.Linear(16, 16).weight.is_meta

    loader = threading.Thread(target=load_models)
    loader.start()
    try:
        built = [torch.nn.Linear(8, 8) for _ in range(2000)]
    finally:
        stop.set()
        loader.join()
    assert not any(module.weight.is_meta for module in built)
