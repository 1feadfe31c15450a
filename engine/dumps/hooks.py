"""Run a model once with forward hooks that return what they recorded.

``run_with_capture(model, paths, ...)`` registers one hook per module named in ``paths``,
runs the forward pass, removes every hook (also when the pass raises), and returns the
model's output together with a fresh dict of what the hooks saw.  Nothing outlives the call:
the hooks are closures over that dict, which belongs to the call (the way TransformerLens'
``run_with_cache`` returns ``(output, cache)``), so two calls never share state.

Hooks live on the modules, though: two forward passes on the *same* model object at once
(two threads) would each record the other's activations.  ``engine.dumps.live`` holds a
lock per model for that reason.

What is recorded, by name:
- ``<block>.input``: the hidden states entering each block (its first positional argument,
  or ``hidden_states=`` when passed by keyword) — the residual stream;
- ``<last block>.output``: what the last block returns (the first item of a tuple).  Block
  ``i``'s output is block ``i + 1``'s input, the same tensor, so it is stored once;
- ``<norm>.input`` and ``<norm>.output``: a norm module's argument and result.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from engine.dumps.architectures import ModulePaths


def first_tensor(args: tuple, kwargs: dict) -> torch.Tensor:
    """The hidden states a module was called with: its first positional tensor argument,
    else ``hidden_states=`` (decoder layers are called either way)."""
    for value in args:
        if isinstance(value, torch.Tensor):
            return value
    if isinstance(kwargs.get("hidden_states"), torch.Tensor):
        return kwargs["hidden_states"]
    return next(v for v in kwargs.values() if isinstance(v, torch.Tensor))


def output_tensor(output) -> torch.Tensor:
    return output[0] if isinstance(output, (tuple, list)) else output


def run_with_capture(
    model: torch.nn.Module,
    paths: ModulePaths,
    norms: Iterable[str] | None = None,
    **inputs,
) -> tuple[object, dict[str, torch.Tensor]]:
    """``(model(**inputs), recorded)``: the output and the activations named in the module
    docstring, for every block of ``paths`` and the norms in ``norms`` (default: all)."""
    modules = dict(model.named_modules())
    recorded: dict[str, torch.Tensor] = {}
    handles = []

    def keep(name: str, value: torch.Tensor) -> None:
        if name in recorded:
            # A module run twice in one pass (weight sharing) would need one entry per call.
            raise RuntimeError(f"module {name} ran twice in one forward pass")
        recorded[name] = value.detach().clone()  # a copy: later in-place ops cannot change it

    def block_input(name: str):
        return lambda module, args, kwargs: keep(f"{name}.input", first_tensor(args, kwargs))

    def block_output(name: str):
        return lambda module, args, output: keep(f"{name}.output", output_tensor(output))

    def norm_io(name: str):
        def hook(module, args, kwargs, output):
            keep(f"{name}.input", first_tensor(args, kwargs))
            keep(f"{name}.output", output_tensor(output))

        return hook

    try:
        for block in paths.blocks:
            hook = block_input(block)
            handles.append(modules[block].register_forward_pre_hook(hook, with_kwargs=True))
        last = paths.blocks[-1]
        handles.append(modules[last].register_forward_hook(block_output(last)))
        for norm in paths.norms if norms is None else norms:
            hook = norm_io(norm)
            handles.append(modules[norm].register_forward_hook(hook, with_kwargs=True))
        with torch.inference_mode():
            output = model(**inputs)
    finally:
        for handle in handles:
            handle.remove()
    return output, recorded
