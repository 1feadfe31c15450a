"""Massive activations: set the few huge entries of the residual stream to zero, to their
mean, or leave them — and measure what the model does without them.

Sun et al. (2024) found, in LLaMA2-7B and many other models, a handful of entries of the
residual stream thousands of times larger than the rest, on the first token (and a few
delimiter tokens), in the same few channels whatever the input, appearing at one early
layer and then carried along.  They report (their Table on intervening at the layer where
they appear) that setting them to zero destroys the model — perplexity goes to infinity on
WikiText — while setting them to their mean over many inputs leaves perplexity unchanged:
they act as fixed biases the attention relies on, not as information about the input.

Here, on one text:
- the entries are found with the dumps page's definition and thresholds
  (``engine.dumps.diagnostics.massive_threshold``: |a| above both ``massive_abs`` and
  ``massive_ratio`` times the median |a| of that stream point; the median here is exact,
  the dumps page's is read from a histogram of float16/bfloat16 bins);
- they are set at one stream point (``MassiveSpec.point``; by default the first that holds
  one, where they appear) and the model runs on from there;
- "mean": Sun et al. average each entry over many sequences.  One text is cut into windows
  of ``MassiveSpec.window`` tokens, each run alone as its own sequence up to that point, and
  each massive entry (position t, channel c) is set to the mean of entry (t, c) over the
  windows.  ``window_values`` keeps every window's value, so a page can show how constant
  they are; an entry at a position no window reaches keeps its value (``windows`` = 0).

References:
- Sun, Chen, Kolter, Liu 2024, "Massive Activations in Large Language Models",
  arXiv:2402.17762
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import DumpSpec, MassiveSpec, TextSpec
from engine.dumps.architectures import module_paths
from engine.dumps.diagnostics import massive_threshold
from engine.dumps.hooks import first_tensor, output_tensor
from engine.dumps.live import LiveModel
from engine.experiments.refusals import experiment_error
from engine.experiments.runs import (
    Edits,
    Effect,
    Reference,
    measure,
    model_inputs,
    modified_logits,
    same_model,
)


@dataclass(frozen=True)
class MassiveResult:
    spec: MassiveSpec
    median_abs: np.ndarray  # [L+1] median |a| of each stream point (every token, channel)
    threshold: np.ndarray  # [L+1] above this an entry is massive
    count: np.ndarray  # [L+1] massive entries at each point
    point: int | None  # where they were set; None: no point holds one (nothing was changed)
    token: np.ndarray  # [m] the massive entries at ``point``: position,
    channel: np.ndarray  # [m] channel,
    value: np.ndarray  # [m] signed value in the unmodified run,
    replacement: np.ndarray  # [m] and what it was set to
    window_values: np.ndarray  # [W, m] "mean": each window's value (NaN: t >= window)
    windows: np.ndarray  # [m] "mean": the windows each mean is over
    effect: Effect | None  # None when nothing was changed (no massive entry)
    seconds: float


def find_massive(
    stream: torch.Tensor,
    massive_abs: float = DumpSpec.massive_abs,
    massive_ratio: float = DumpSpec.massive_ratio,
) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
    """(median |a| [P], threshold [P], massive [P, T, d] bool) of a stream [P, T, d], with the
    dumps page's threshold (``massive_threshold``) and the median in numpy's convention."""
    median = np.median(stream.abs().flatten(1).numpy(), axis=1).astype(np.float64)  # [P]
    thresholds = DumpSpec(massive_abs=massive_abs, massive_ratio=massive_ratio)
    threshold = massive_threshold(median, thresholds)  # [P]
    above = stream.abs() > torch.from_numpy(threshold).float()[:, None, None]  # [P, T, d]
    return median, threshold, above


def massive_tokens(ref: Reference) -> tuple[int, ...]:
    """The positions holding a massive entry at some stream point (default thresholds)."""
    _, _, above = find_massive(ref.stream)
    return tuple(int(t) for t in above.any(-1).any(0).nonzero().flatten())


def _hidden(args: tuple, kwargs: dict, new: torch.Tensor) -> tuple[tuple, dict]:
    """(args, kwargs) with the hidden states (``first_tensor``) replaced by ``new``."""
    for index, value in enumerate(args):
        if isinstance(value, torch.Tensor):
            return args[:index] + (new,) + args[index + 1 :], kwargs
    key = (
        "hidden_states"
        if "hidden_states" in kwargs
        else next(k for k, v in kwargs.items() if isinstance(v, torch.Tensor))
    )
    return args, {**kwargs, key: new}


def set_stream(edits: Edits, blocks: tuple[str, ...], point: int, change) -> None:
    """``change(h)`` (h: [B, T, d], returns the new stream) applied at stream point
    ``point``: block ``point``'s input, or the last block's output when ``point`` = L."""
    if point < len(blocks):

        def before(module, args, kwargs):
            return _hidden(args, kwargs, change(first_tensor(args, kwargs)))

        edits.on_input(blocks[point], before)
    else:

        def after(module, args, kwargs, output):
            new = change(output_tensor(output))
            return (new, *output[1:]) if isinstance(output, tuple) else new

        edits.on_output(blocks[-1], after)


class _Reached(Exception):
    """Raised by a hook to end a pass once the stream point it needs has run."""

    def __init__(self, hidden: torch.Tensor):
        self.hidden = hidden


def check_windows_read(spec: MassiveSpec, text: TextSpec) -> None:
    """Refuse a mean over windows that the tokens read cannot fill twice: known from the
    settings alone (at most ``text.max_tokens`` are read), before a prediction is asked for a
    run that cannot happen.  A shorter text is refused by ``check_windows`` once its tokens
    are counted."""
    if spec.setting == "mean" and text.max_tokens < 2 * spec.window:
        raise experiment_error(
            "too_few_windows_read",
            window=spec.window,
            tokens=text.max_tokens,
            largest=text.max_tokens // 2,
            needed=2 * spec.window,
        )


def check_windows(tokens: int, window: int) -> None:
    """Refuse a mean over windows of ``window`` tokens that a text of ``tokens`` tokens cannot
    fill twice (by the run, and by a page as soon as the model's tokenizer has counted them)."""
    if tokens // window < 2:
        raise experiment_error(
            "too_few_windows",
            tokens=tokens,
            window=window,
            windows=tokens // window,
            largest=tokens // 2,
            needed=2 * window,  # tokens for two windows of this length
        )


def _window_stream(live: LiveModel, ref: Reference, point: int, window: int, threads):
    """[W, window, d] the stream at ``point`` with the text cut into W windows, each its own
    sequence; the pass stops once that point is reached."""
    ids = torch.tensor(ref.tokens.ids)
    check_windows(len(ids), window)
    count = len(ids) // window
    batch = ids[: count * window].reshape(count, window)  # [W, window]
    with live.exclusive("float32", threads) as loaded:
        paths = module_paths(loaded.model, loaded.architecture)

        def reached(h: torch.Tensor) -> torch.Tensor:
            raise _Reached(h.detach().clone())

        with Edits(loaded.model) as edits:
            set_stream(edits, paths.blocks, point, reached)
            try:
                with torch.inference_mode():
                    loaded.model(**model_inputs(loaded.model, batch))
            except _Reached as stop:
                return stop.hidden.float()
    raise RuntimeError("the pass ended without reaching the stream point")  # pragma: no cover


def massive_activations(
    live: LiveModel, ref: Reference, spec: MassiveSpec, threads: int | None = 1
) -> MassiveResult:
    """Find the massive entries of ``ref``'s stream and set them as ``spec`` says."""
    start = time.perf_counter()
    same_model(live, ref)
    stream = ref.stream  # [P, T, d], P = L + 1
    median, threshold, above = find_massive(stream, spec.massive_abs, spec.massive_ratio)
    count = above.flatten(1).sum(-1).numpy()  # [P]
    if spec.point is not None and not 0 <= spec.point <= ref.layers:
        raise experiment_error("bad_point", value=spec.point, last=ref.layers)
    holding = np.nonzero(count)[0]
    point = spec.point if spec.point is not None else (int(holding[0]) if holding.size else None)
    none = np.zeros(0, dtype=np.int64)  # no point holds a massive entry: nothing is changed
    token, channel, value, replacement = none, none, np.zeros(0), np.zeros(0)
    window_values, windows, effect = np.zeros((0, 0)), none, None
    if point is not None and count[point] > 0:
        token, channel = (i.numpy() for i in above[point].nonzero(as_tuple=True))  # [m] each
        value = stream[point, token, channel].double().numpy()  # [m]
        window_values = np.zeros((0, len(token)))
        windows = np.zeros(len(token), dtype=int)
        if spec.setting == "zero":
            replacement = np.zeros_like(value)
        elif spec.setting == "mean":
            hidden = _window_stream(live, ref, point, spec.window, threads)  # [W, window, d]
            reach = token < spec.window  # [m]
            window_values = np.full((hidden.shape[0], len(token)), np.nan)
            window_values[:, reach] = hidden[:, token[reach], channel[reach]].double().numpy()
            windows = np.where(reach, hidden.shape[0], 0)
            means = np.where(reach, window_values, 0.0).mean(0)  # [m]
            replacement = np.where(reach, means, value)
        else:  # "keep": the same numbers written back; the pass must reproduce the reference
            replacement = value.copy()
        new = torch.from_numpy(replacement)

        def change(h: torch.Tensor) -> torch.Tensor:
            h = h.clone()
            h[0, token, channel] = new.to(h.dtype)
            return h

        def edit(loaded, paths, edits) -> None:
            set_stream(edits, paths.blocks, point, change)

        effect = measure(ref, modified_logits(live, ref, edit, replay=point, threads=threads))
    return MassiveResult(
        spec=spec,
        median_abs=median,
        threshold=threshold,
        count=count,
        point=point,
        token=token,
        channel=channel,
        value=value,
        replacement=replacement,
        window_values=window_values,
        windows=windows,
        effect=effect,
        seconds=time.perf_counter() - start,
    )
