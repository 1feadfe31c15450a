"""Capture a real model's residual stream and norms on a few prompts, as a dump.

``capture(loaded, prompts)`` runs a model loaded by ``model_files`` once on the prompts,
batched and padded on the right, with the hooks of ``engine.dumps.hooks``; ``Capture.save``
(``python -m engine.dumps capture``, see ``cli``) writes what they recorded as a safetensors
file the dumps loader reads as it is:

- ``<blocks>.{i}.input`` [B, T, d] for every block and ``<blocks>.{L-1}.output``: the
  residual stream (block i's output is block i+1's input, stored once);
- ``<norm>.input`` / ``<norm>.output`` [B, T, d'] for the norms of the blocks chosen by
  ``norm_layers`` and for the norms outside the blocks, and ``<norm>.weight`` (and
  ``.bias``) [d']: what the output was multiplied by — for Gemma, ``1 + weight``;
- metadata (safetensors ``__metadata__``, str → str): the model, its weights' origin (the
  fields of ``engine.dumps.weights_origin``), the dtypes, the prompts, each token's text
  and id, each prompt's length (``capture_info`` reads it back).

With prompts of different lengths the shorter ones are padded on the right: a real token
never sees a pad (causal and padding masks), so its activations are those of the prompt run
alone, but the pad positions hold activations too and enter the dump's statistics; the
metadata's ``lengths`` says which positions are real.

References:
- Sun, Chen, Liu, Liu 2024, "Massive Activations in Large Language Models", arXiv:2402.17762
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from engine.config import CAPTURE_DTYPES
from engine.dumps.architectures import Architecture, ModulePaths, module_paths, norm_eps
from engine.dumps.hooks import run_with_capture
from engine.dumps.model_files import LoadedModel
from engine.dumps.refusals import capture_error
from engine.dumps.sources import DumpFile
from engine.dumps.weights_origin import WeightsOrigin, from_metadata
from engine.dumps.written import write_whole

FORMAT = "normscope.capture/1"  # metadata["format"] of a capture
STORE_CHOICES = ("same",) + CAPTURE_DTYPES
PARTIAL_CHARACTER = "\ufffd"  # a token holding only some bytes of a character


@dataclass(frozen=True)
class Capture:
    """One forward pass's activations (named as in the module docstring) and metadata."""

    tensors: Mapping[str, torch.Tensor]  # name → [B, T, d] activation or [d] weight
    metadata: Mapping[str, str]
    stream: tuple[str, ...]  # [L + 1] the residual stream's entries, in depth order
    norms: tuple[str, ...]  # the recorded norms' module paths, in forward order
    norm_layers: tuple[int | None, ...]  # the block of each (None: outside the blocks)
    tokens: tuple[tuple[str, ...], ...]  # [B][T] each position's text (pads included)
    lengths: tuple[int, ...]  # [B] real tokens of each prompt; the rest are pads
    logits: torch.Tensor | None  # [B, T', V] the model's logits (T' = 1: the last only)

    def stored(self, dtype: str = "same") -> dict[str, torch.Tensor]:
        """The tensors in ``dtype`` ("same": as computed), refusing a float16 overflow."""
        if dtype == "same":
            return dict(self.tensors)
        if dtype not in CAPTURE_DTYPES:
            raise capture_error(
                "bad_value", name="store", value=dtype, accepted=", ".join(STORE_CHOICES)
            )
        target = getattr(torch, dtype)
        largest = torch.finfo(target).max
        out = {}
        for name, tensor in self.tensors.items():
            peak = float(tensor.abs().max())
            if peak > largest and peak != float("inf"):
                raise capture_error(
                    "storage_overflow", entry=name, value=round(peak, 1), dtype=dtype, max=largest
                )
            out[name] = tensor.to(target).contiguous()
        return out

    def to_bytes(self, dtype: str = "same") -> bytes:
        """The capture as the bytes of a safetensors file."""
        from safetensors.torch import save

        metadata = dict(self.metadata)
        metadata["storage_dtype"] = metadata["compute_dtype"] if dtype == "same" else dtype
        return save(self.stored(dtype), metadata=metadata)

    def dump_file(self, name: str = "live.safetensors", dtype: str = "same") -> DumpFile:
        """The capture as an in-memory dump file: ``engine.dumps.report`` accepts it."""
        return DumpFile(path=name, data=self.to_bytes(dtype))

    def save(self, path: str | Path, dtype: str = "same") -> Path:
        """Write the capture to ``path`` (through a temporary file beside it, renamed when
        whole: a failed write leaves no damaged file)."""
        path = Path(path)
        check_out(path)
        data = self.to_bytes(dtype)
        path.parent.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(path.parent).free
        if free < len(data):
            raise capture_error(
                "out_no_space",
                path=str(path),
                need_mb=round(len(data) / 10**6, 1),
                free_mb=round(free / 10**6, 1),
            )
        write_whole(path, data)
        return path


def check_out(path: Path) -> None:
    """Refuse a capture's ``--out`` that cannot be written, before any model is loaded."""
    if path.suffix.lower() != ".safetensors":
        raise capture_error("bad_out", path=str(path))
    check_writable(path)


def check_writable(path: Path, folder: bool = False) -> None:
    """Refuse an output file (or, ``folder``, a folder of files) that cannot be written,
    before the work that fills it: a capture's ``--out``, a report's ``--json`` / ``--csv``."""
    if path.exists() and path.is_dir() != folder:
        raise capture_error("out_not_a_folder" if folder else "out_is_directory", path=str(path))
    existing = path.parent.absolute()
    while not existing.exists():  # the folders the writer would make
        existing = existing.parent
    if not existing.is_dir():
        raise capture_error("out_parent_is_file", path=str(path), parent=str(existing))
    writable = path if path.exists() else existing
    if not os.access(writable, os.W_OK) or not os.access(existing, os.W_OK | os.X_OK):
        raise capture_error("out_not_writable", path=str(path), directory=str(existing))


@dataclass(frozen=True)
class CaptureInfo:
    """What a capture's metadata says (``capture_info``), for a page to label tokens."""

    model: str
    weights: WeightsOrigin
    architecture: str
    compute_dtype: str
    storage_dtype: str
    prompts: tuple[str, ...]
    tokens: tuple[tuple[str, ...], ...]  # [B][T]
    lengths: tuple[int, ...]  # [B]


def capture_info(metadata: Mapping[str, str] | Iterable[tuple[str, str]]) -> CaptureInfo | None:
    """Read a capture's metadata (``DumpReport.metadata`` or ``Dump.metadata``); None when
    the dump was not written by a capture (or its metadata is damaged)."""
    meta = dict(metadata.items() if isinstance(metadata, Mapping) else metadata)
    weights = from_metadata(meta)
    if meta.get("format") != FORMAT or weights is None:
        return None
    try:
        info = CaptureInfo(
            model=meta["model"],
            weights=weights,
            architecture=meta["architecture"],
            compute_dtype=meta["compute_dtype"],
            storage_dtype=meta.get("storage_dtype", meta["compute_dtype"]),
            prompts=tuple(json.loads(meta["prompts"])),
            tokens=tuple(tuple(row) for row in json.loads(meta["tokens"])),
            lengths=tuple(int(n) for n in json.loads(meta["lengths"])),
        )
    except (KeyError, TypeError, ValueError, OverflowError, RecursionError):
        return None  # damaged: a missing key, "[1e400]", JSON nested past the parser's depth
    texts = [*info.prompts, *(text for row in info.tokens for text in row)]
    return info if all(isinstance(t, str) and encodable(t) for t in texts) else None


def encodable(text: str) -> bool:
    """Whether UTF-8 holds ``text`` (not a lone surrogate, U+D800-DFFF, which JSON's
    "\\ud800" makes): the page's downloads are UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def token_texts(tokenizer, ids: Sequence[int]) -> tuple[str, ...]:
    """Each token's text: what decoding it adds to the text before it.

    Byte-level tokenizers split a Chinese character into tokens holding a few of its UTF-8
    bytes each; such a token adds no whole character and is shown as U+FFFD, and the token
    that completes the character carries it.
    """
    texts, emitted = [], ""
    for end in range(1, len(ids) + 1):
        decoded = tokenizer.decode(list(ids[:end]), skip_special_tokens=False)
        complete = decoded.rstrip(PARTIAL_CHARACTER)
        if complete.startswith(emitted) and len(complete) > len(emitted):
            texts.append(complete[len(emitted) :])
            emitted = complete
        elif complete.startswith(emitted):
            texts.append(PARTIAL_CHARACTER)
        else:  # decoding rewrote earlier text (e.g. clean-up of spaces): the token alone
            texts.append(tokenizer.decode([ids[end - 1]], skip_special_tokens=False))
            emitted = complete
    return tuple(texts)


def tokenize(
    tokenizer, prompts: Sequence[str], context: int | None, limit: int | None = None
) -> list[list[int]]:
    """Each prompt's token ids, refusing no prompt, an empty one, or one that is too long
    for the model (``context``) or for the caller (``limit``, the live model's cap)."""
    if not prompts:
        raise capture_error("no_prompts")
    rows = []
    for index, prompt in enumerate(prompts):
        ids = tokenizer(prompt, add_special_tokens=True)["input_ids"]
        if not ids:
            raise capture_error("empty_prompt", index=index + 1)
        if context is not None and len(ids) > context:
            raise capture_error("prompt_too_long", index=index + 1, tokens=len(ids), limit=context)
        if limit is not None and len(ids) > limit:
            raise capture_error("live_prompt_too_long", tokens=len(ids), limit=limit)
        rows.append(list(ids))
    return rows


def _pad_id(tokenizer) -> int:
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if value is not None:
            return int(value)
    return 0


def _chosen_norms(paths: ModulePaths, norm_layers: Sequence[int] | None) -> list[str]:
    """The norms of the chosen blocks (None: all) and every norm outside the blocks."""
    if norm_layers is None:
        return list(paths.norms)
    chosen = set(norm_layers)
    pairs = zip(paths.norms, paths.norm_layers)
    return [name for name, layer in pairs if layer is None or layer in chosen]


def _norm_parameters(model, arch: Architecture, norms: list[str]) -> dict[str, torch.Tensor]:
    """``<norm>.weight`` (``1 + weight`` for Gemma: what the output is multiplied by) and
    ``<norm>.bias`` of each captured norm."""
    modules = dict(model.named_modules())
    out = {}
    for name in norms:
        module = modules[name]
        weight = getattr(module, "weight", None)
        if isinstance(weight, torch.Tensor):
            out[f"{name}.weight"] = (weight.detach().float() + arch.weight_offset).to(weight.dtype)
        bias = getattr(module, "bias", None)
        if isinstance(bias, torch.Tensor):
            out[f"{name}.bias"] = bias.detach().clone()
    return out


def capture(
    loaded: LoadedModel,
    prompts: Sequence[str],
    norm_layers: Sequence[int] | None = None,
    keep_logits: str = "last",
    limit: int | None = None,
) -> Capture:
    """Run ``loaded`` once on ``prompts`` and return what the hooks recorded.

    ``norm_layers``: the blocks whose norms are recorded (None: all; norms outside the
    blocks always are).  ``keep_logits``: "last" (the next-token logits only, cheaper) or
    "all" positions.  ``limit``: at most this many tokens per prompt (the live model's cap).
    """
    model, tokenizer, arch = loaded.model, loaded.tokenizer, loaded.architecture
    paths = module_paths(model, arch)
    if norm_layers is not None:
        last = len(paths.blocks) - 1
        bad = [i for i in norm_layers if not 0 <= i <= last]
        if bad:
            raise capture_error("bad_norm_layers", value=",".join(map(str, bad)), last=last)
    rows = tokenize(tokenizer, prompts, loaded.context, limit)
    lengths = [len(row) for row in rows]
    width = max(lengths)
    pad = _pad_id(tokenizer)
    input_ids = torch.tensor([row + [pad] * (width - len(row)) for row in rows])  # [B, T]
    attention_mask = torch.tensor([[1] * n + [0] * (width - n) for n in lengths])  # [B, T]
    inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
    accepted = inspect.signature(model.forward).parameters
    if "use_cache" in accepted:
        inputs["use_cache"] = False
    if keep_logits == "last" and "logits_to_keep" in accepted:
        inputs["logits_to_keep"] = 1  # the LM head on the last position only
    norms = _chosen_norms(paths, norm_layers)
    layer_of = dict(zip(paths.norms, paths.norm_layers))
    output, recorded = run_with_capture(model, paths, norms, **inputs)
    tensors = dict(recorded)
    tensors.update(_norm_parameters(model, arch, norms))
    ids = input_ids.tolist()
    tokens = tuple(token_texts(tokenizer, row) for row in ids)
    modules = dict(model.named_modules())
    eps = norm_eps(modules[paths.norms[0]]) if paths.norms else None
    metadata = {
        "format": FORMAT,
        "model": loaded.name,
        **loaded.weights.metadata(),
        "architecture": arch.name,
        "norm_kind": arch.norm_kind,
        "placement": arch.placement,
        "norm_eps": "" if eps is None else repr(eps),
        "compute_dtype": loaded.dtype,
        "prompts": json.dumps(list(prompts), ensure_ascii=False),
        "tokens": json.dumps([list(row) for row in tokens], ensure_ascii=False),
        "token_ids": json.dumps(ids),
        "lengths": json.dumps(lengths),
        "padding": "right" if len(set(lengths)) > 1 else "none",
        "blocks": str(len(paths.blocks)),
    }
    logits = getattr(output, "logits", None)
    return Capture(
        tensors=tensors,
        metadata=metadata,
        stream=tuple(f"{block}.input" for block in paths.blocks) + (f"{paths.blocks[-1]}.output",),
        norms=tuple(norms),
        norm_layers=tuple(layer_of[name] for name in norms),
        tokens=tokens,
        lengths=tuple(lengths),
        logits=None if logits is None else logits.detach(),
    )
