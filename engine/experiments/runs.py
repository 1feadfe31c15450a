"""The unmodified run every experiment compares with, modified passes on the shared model,
and the measures of an effect.

    ref = reference(live, TextSpec("en", max_tokens=512))   # the unmodified model, once
    ref.perplexity, ref.stream [L+1, T, d], ref.norm_rstd [N, T]
    logits = modified_logits(live, ref, edit, replay=12)    # a modified pass
    effect = measure(ref, logits)                           # perplexity, KL, top-1 agreement

Sharing the model.  ``live`` is the process's one model object (``engine.dumps.live``): a
modified pass holds it exclusively (``LiveModel.exclusive``), makes its changes through
``Edits`` (forward hooks, a module's ``forward`` replaced, a parameter replaced), and undoes
every one of them in a ``finally`` before letting go, whether the pass finished, raised or
was cancelled.  Another session therefore never sees a change, and the model's own logits
are bit-identical before and after (tests/experiments check both).

Replaying the unchanged blocks.  An edit that touches block ``l`` and later leaves blocks
``0 .. l-1`` computing exactly what they computed in the unmodified run; ``replay=l``
replaces their ``forward`` by one that returns the unmodified run's output (the residual
stream the reference recorded), so a pass costs only the blocks from ``l`` on, the final
norm and the unembedding.  The model's own glue (embeddings, masks, position encodings,
the head and any logit soft-capping) still runs.  With nothing edited a replayed pass gives
logits bit-identical to the reference's (tested): the later blocks see the same numbers.

The measures, at every position t of the text (T tokens):
- perplexity: exp of the mean negative log-likelihood of tokens 1 .. T-1, each predicted
  from the tokens before it (the same number as Hugging Face's ``model(ids, labels=ids)``
  loss, exponentiated; tested);
- KL(original ‖ modified) = Σ_v p(v) (log p(v) − log q(v)) of the next-token distributions,
  in nats (inf where the modified logits are not finite);
- top-1 agreement: the most likely next token is the same.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import TextSpec
from engine.dumps.architectures import ModulePaths, module_paths
from engine.dumps.hooks import run_with_capture
from engine.dumps.live import LiveModel
from engine.dumps.model_files import LoadedModel
from engine.experiments import norm_maps
from engine.experiments.refusals import experiment_error
from engine.experiments.text import TextTokens, tokenize_text
from engine.threads import Cancelled, StopCheck


@dataclass(frozen=True)
class Reference:
    """The unmodified model on the text: what every experiment compares with."""

    model: str  # the model's name (LiveModel.name)
    architecture: str  # its row of engine.dumps.architectures
    tokens: TextTokens
    logits: torch.Tensor  # [T, V] float32
    stream: torch.Tensor  # [L+1, T, d] float32: each block's input, then the last block's output
    norms: tuple[str, ...]  # [N] every norm's module path, in forward order
    norm_layers: tuple[int | None, ...]  # [N] the block of each (None: the final norm)
    norm_rstd: torch.Tensor  # [N, T] float32: 1/RMS (1/σ for LayerNorm) of each norm's input
    nll: np.ndarray  # [T-1] float64: -log p(token t+1 | tokens <= t)

    @property
    def layers(self) -> int:
        return self.stream.shape[0] - 1

    @property
    def perplexity(self) -> float:
        return perplexity(self.nll)

    @property
    def final_norm(self) -> int:
        """Index in ``norms`` of the norm after the last block."""
        return max(i for i, layer in enumerate(self.norm_layers) if layer is None)


@dataclass(frozen=True)
class Effect:
    """A modified model's predictions on the text, against the unmodified model's."""

    nll: np.ndarray  # [T-1] -log q(token t+1 | tokens <= t), nats
    kl: np.ndarray  # [T] KL(original ‖ modified) of each position's next token, nats
    top1: np.ndarray  # [T] bool: the most likely next token is the same
    reference_perplexity: float

    @property
    def perplexity(self) -> float:
        return perplexity(self.nll)

    @property
    def perplexity_ratio(self) -> float:
        """Modified over unmodified perplexity (1: unchanged)."""
        return self.perplexity / self.reference_perplexity

    # The mean KL and the top-1 agreement count the T−1 positions whose next token is in the
    # text, as the perplexity and the page's chart and CSV do; the last position's (a token
    # after the text) is in ``kl`` and ``top1`` but in neither (the page's mean was 0.0804
    # over 16 positions beside a chart of 15 whose mean is 0.0773).

    @property
    def mean_kl(self) -> float:
        return float(self.kl[:-1].mean())

    @property
    def top1_agreement(self) -> float:
        """The share of positions (of a text token) whose most likely next token is unchanged."""
        return float(self.top1[:-1].mean())


def perplexity(nll: np.ndarray) -> float:
    """exp(mean NLL); inf when some NLL is not finite."""
    mean = float(np.mean(nll))
    return math.exp(mean) if math.isfinite(mean) and mean < 700 else math.inf


def _nll(logits: torch.Tensor, lse: torch.Tensor, ids: tuple[int, ...]) -> np.ndarray:
    """[T-1] -log q(token t+1) = lse_t − z_t[token t+1], float64 (NaN read as inf)."""
    targets = torch.tensor(ids[1:])[:, None]  # [T-1, 1]
    picked = lse[:-1].double() - logits[:-1].gather(1, targets)[:, 0].double()  # [T-1]
    return torch.nan_to_num(picked, nan=math.inf).numpy()


KL_SLICE_BYTES = 8 << 20  # float64 logits taken at a time by kl_divergence (rows of them)


def _row_slices(rows: int, width: int):
    step = max(1, KL_SLICE_BYTES // (8 * width))
    return (slice(start, start + step) for start in range(0, rows, step))


def kl_divergence(z_p: torch.Tensor, z_q: torch.Tensor) -> torch.Tensor:
    """[...] float64 KL(p ‖ q) in nats of the distributions with logits z_p, z_q [..., V]
    (broadcast against each other), p = softmax z_p.

    KL = Σ_v p_v Δ_v + log Σ_v p_v e^(−Δ_v), Δ = z_p − z_q, taken without an lse:
    p_v = e^(z_p,v − m_p) / s_p and Σ_v p_v e^(−Δ_v) = e^(m_q − m_p) · S_q / s_p, where m is a
    row's largest logit and s_p, S_q the sums of e^(z − m).  So its second term is
    log(S_q / s_p) + (m_q − m_p): exactly 0 for equal logits, with no difference of two
    logsumexps of the logits' size (~10) to lose the last digits of a small KL, and q's mass
    counted where p is 0, since S_q reads z_q itself.

    The sums run over the whole vocabulary (49,152 tokens in SmolLM2) with terms that cancel
    to a few hundredths: from float32 probabilities, differences and sums they were off by
    1 % (0.04224 where float64 gives 0.04181, position 104 of a 128-token swap).  So the
    logits, read as the exact numbers they are, are taken to float64 a few rows at a time
    (``KL_SLICE_BYTES``: a float64 copy of the whole [..., V] would triple their memory).
    """
    shape = torch.broadcast_shapes(z_p.shape, z_q.shape)
    z_p, z_q = (z.expand(shape).reshape(-1, shape[-1]) for z in (z_p, z_q))  # [N, V]
    kl = torch.empty(len(z_p), dtype=torch.float64)
    for rows in _row_slices(*z_p.shape):
        z_p_part, z_q_part = z_p[rows].double(), z_q[rows].double()
        m_p = z_p_part.amax(-1, keepdim=True)
        m_q = z_q_part.amax(-1, keepdim=True)
        e_p = torch.exp(z_p_part - m_p)  # [n, V], p up to the factor 1 / s_p
        s_p = e_p.sum(-1)
        mean_delta = (e_p * z_p_part.sub_(z_q_part)).sum(-1) / s_p  # Σ p Δ; z_p's copy is Δ
        s_q = z_q_part.sub_(m_q).exp_().sum(-1)  # in place: z_q's copy becomes e^(z_q − m_q)
        kl[rows] = mean_delta + torch.log(s_q / s_p) + (m_q - m_p)[:, 0]
    return kl.clamp_min(0.0).reshape(shape[:-1])


def measure(ref: Reference, logits: torch.Tensor) -> Effect:
    """The effect of a modification whose logits on the text are ``logits`` [T, V]."""
    logits = logits.float()
    lse = torch.logsumexp(logits, dim=-1)  # [T]
    finite = torch.isfinite(lse)  # [T]: a NaN or +inf logit makes the row's lse not finite
    kl = kl_divergence(ref.logits, logits)  # [T]
    kl = torch.where(finite, torch.nan_to_num(kl, nan=math.inf), math.inf)
    top1 = (ref.logits.argmax(-1) == logits.argmax(-1)) & finite  # [T]
    return Effect(
        nll=_nll(logits, lse, ref.tokens.ids),
        kl=kl.numpy(),
        top1=top1.numpy(),
        reference_perplexity=ref.perplexity,
    )


# ----- the shared model ---------------------------------------------------------------------


def causal(live: LiveModel) -> None:
    """Refuse a model that does not predict the next token (BERT)."""
    arch = live.loaded.architecture
    if arch.head != "causal":
        raise experiment_error("not_causal", model=live.name, architecture=arch.name)


def model_inputs(model: torch.nn.Module, ids) -> dict:
    """Keyword arguments of a plain pass over ``ids`` ([B, T] or one sequence)."""
    input_ids = torch.as_tensor(ids)
    inputs = {"input_ids": input_ids if input_ids.dim() == 2 else input_ids[None]}
    if "use_cache" in inspect.signature(model.forward).parameters:
        inputs["use_cache"] = False
    return inputs


def logits_of(output) -> torch.Tensor:
    return output.logits[0].float()  # [T, V]


def reference(live: LiveModel, spec: TextSpec, threads: int | None = 1) -> Reference:
    """The unmodified model on ``spec``'s text: logits, residual stream, each norm's scale.

    It holds 2·T·V + (L+1)·T·d float32 numbers: about 240 MB for SmolLM2 on 512 tokens."""
    causal(live)
    tokens = tokenize_text(live.loaded.tokenizer, spec, live.loaded.context)
    with live.exclusive("float32", threads) as loaded:
        paths = module_paths(loaded.model, loaded.architecture)
        norms = norm_maps.norm_modules(loaded.model, loaded.architecture, paths)
        output, recorded = run_with_capture(
            loaded.model, paths, None, **model_inputs(loaded.model, tokens.ids)
        )
    stream_names = [f"{block}.input" for block in paths.blocks] + [f"{paths.blocks[-1]}.output"]
    stream = torch.stack([recorded.pop(name)[0].float() for name in stream_names])  # [L+1, T, d]
    rstd = torch.stack(
        [norm_maps.rstd(norm, recorded.pop(f"{norm.path}.input")[0]) for norm in norms]
    )  # [N, T]
    logits = logits_of(output)
    return Reference(
        model=live.name,
        architecture=loaded.architecture.name,
        tokens=tokens,
        logits=logits,
        stream=stream,
        norms=paths.norms,
        norm_layers=paths.norm_layers,
        norm_rstd=rstd,
        nll=_nll(logits, torch.logsumexp(logits, dim=-1), tokens.ids),
    )


def same_model(live: LiveModel, ref: Reference) -> None:
    if ref.model != live.name or ref.architecture != live.loaded.architecture.name:
        raise experiment_error("other_model", reference=ref.model, model=live.name)


class Edits(contextlib.ExitStack):
    """Changes made to a model for one pass: ``with Edits(model) as edits:`` reverts every
    one, last first, when the block ends (also on an error)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.modules = dict(model.named_modules())

    def on_output(self, path: str, hook) -> None:
        """``hook(module, args, kwargs, output)``; what it returns replaces the output."""
        handle = self.modules[path].register_forward_hook(hook, with_kwargs=True)
        self.callback(handle.remove)

    def on_input(self, path: str, hook) -> None:
        """``hook(module, args, kwargs)``; an ``(args, kwargs)`` it returns replaces them."""
        handle = self.modules[path].register_forward_pre_hook(hook, with_kwargs=True)
        self.callback(handle.remove)

    def forward(self, module: torch.nn.Module, function: Callable) -> None:
        """``module``'s ``forward`` replaced by ``function`` (hooks on it still run)."""
        if "forward" in module.__dict__:
            self.callback(setattr, module, "forward", module.__dict__["forward"])
        else:
            self.callback(delattr, module, "forward")
        module.forward = function

    def parameter(self, module: torch.nn.Module, name: str, value: torch.Tensor) -> None:
        """``module.<name>`` replaced by a new parameter holding ``value``; the original
        parameter object is put back on exit (so a tied weight is tied again)."""
        self.callback(module._parameters.__setitem__, name, module._parameters[name])
        module._parameters[name] = torch.nn.Parameter(value, requires_grad=False)


Edit = Callable[[LoadedModel, ModulePaths, Edits], None]


def replay_blocks(edits: Edits, paths: ModulePaths, ref: Reference, count: int, dtype) -> None:
    """Blocks ``0 .. count-1`` return the reference's stream instead of computing it."""
    for index in range(count):
        cached = ref.stream[index + 1][None].to(dtype)  # [1, T, d]

        def replayed(*args, _cached=cached, **kwargs):
            return _cached

        edits.forward(edits.modules[paths.blocks[index]], replayed)


def stop_between_blocks(edits: Edits, paths: ModulePaths, should_stop: StopCheck | None):
    """``Cancelled`` raised before a block runs once ``should_stop()`` says so: a pass is
    stopped within one block's time, and leaving the ``Edits`` block undoes its edits."""
    if should_stop is None:
        return

    def check(module, args, kwargs):
        if should_stop():
            raise Cancelled()

    for block in paths.blocks:
        edits.on_input(block, check)


def modified_logits(
    live: LiveModel,
    ref: Reference,
    edit: Edit,
    replay: int = 0,
    threads: int | None = 1,
    should_stop: StopCheck | None = None,
) -> torch.Tensor:
    """[T, V] float32 logits of the float32 model on ``ref``'s text with ``edit`` applied
    (and blocks ``0 .. replay-1`` replayed from ``ref``), everything undone afterwards."""
    same_model(live, ref)
    with live.exclusive("float32", threads) as loaded:
        model = loaded.model
        paths = module_paths(model, loaded.architecture)
        with Edits(model) as edits:
            replay_blocks(edits, paths, ref, replay, ref.stream.dtype)
            stop_between_blocks(edits, paths, should_stop)
            edit(loaded, paths, edits)
            with torch.inference_mode():
                output = model(**model_inputs(model, ref.tokens.ids))
        return logits_of(output)


def check_layers(layers: tuple[int, ...] | None, blocks: int) -> None:
    """Refuses the first of ``layers`` (None: every block) a model of ``blocks`` blocks lacks
    ("experiments.bad_layers"): when an experiment runs, and before, where the model's block
    count is known without loading it (``engine.dumps.live.live_model_blocks``)."""
    bad = [layer for layer in layers or () if not 0 <= layer < blocks]
    if bad:
        raise experiment_error("bad_layers", value=bad[0], last=blocks - 1)


def chosen_norms(
    ref: Reference, layers: tuple[int, ...] | None, final: bool
) -> tuple[tuple[int, ...], int]:
    """(indices into ``ref.norms`` of the norms of ``layers`` (None: every block) and, with
    ``final``, the final norm; the first block they touch, for ``replay``)."""
    check_layers(layers, ref.layers)
    wanted = set(range(ref.layers) if layers is None else layers)
    chosen = tuple(
        i
        for i, layer in enumerate(ref.norm_layers)
        if (layer in wanted) or (layer is None and final and i == ref.final_norm)
    )
    first = min(wanted) if wanted else ref.layers
    return chosen, first
