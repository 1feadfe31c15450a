"""The logit lens: decode every layer's residual stream as if it were the last one.

nostalgebraist (2020) read a GPT-2's intermediate residual stream h_l through the model's
own unembedding, after its final norm: W_U · norm_f(h_l).  Three ways of applying that norm
are compared here, position by position and layer by layer (``LENS_VARIANTS``):

- ``own_scale``: the final norm computed on h_l itself, each token divided by its own RMS
  at layer l (σ for LayerNorm, after subtracting its mean), then γ (and β): the lens as
  intended;
- ``final_scale``: h_l divided by the scale the final norm computed on the *last* layer's
  stream, h_L: what a cache of the final norm's scale hands back when it is applied to an
  earlier layer (the pitfall of TransformerLens issue 1076).  The residual stream grows
  with depth, so an early layer's logits come out far too small and its distribution
  nearly uniform (high entropy), which reads as "the model knows nothing yet";
- ``no_norm``: W_U · h_l with no norm at all.

At the last point (h_L) ``own_scale`` and ``final_scale`` are the model's own logits.
Per layer and position: the top tokens and their probabilities, the entropy of the
distribution (nats), its KL divergence from the model's output distribution
KL(p_model ‖ p_lens), and whether its most likely token is the model's.  A model with
final-logit soft-capping (Gemma 2: tanh(z / c) · c) has it applied to every lens as well.

References:
- nostalgebraist 2020, "interpreting GPT: the logit lens", LessWrong
- Belrose et al. 2023, "Eliciting Latent Predictions from Transformers with the Tuned
  Lens", arXiv:2303.08112
- TransformerLens issue 1076 (a cached final-norm scale applied to earlier layers)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import LENS_DEFAULT_POSITIONS, LENS_VARIANTS, LensSpec
from engine.dumps.architectures import module_paths
from engine.dumps.live import LiveModel
from engine.experiments import norm_maps
from engine.experiments.refusals import experiment_error
from engine.experiments.runs import Reference, kl_divergence, same_model


@dataclass(frozen=True)
class LensResult:
    spec: LensSpec
    positions: tuple[int, ...]  # [P] the text positions decoded
    variants: tuple[str, ...]  # [3] LENS_VARIANTS
    top_ids: np.ndarray  # [3, L+1, P, k] most likely tokens, most likely first
    top_probs: np.ndarray  # [3, L+1, P, k]
    entropy: np.ndarray  # [3, L+1, P] nats
    kl_to_model: np.ndarray  # [3, L+1, P] KL(model's output ‖ lens), nats
    agrees: np.ndarray  # [3, L+1, P] bool: the lens' top token is the model's
    token_texts: Mapping[int, str]  # every id in top_ids (and the model's top), decoded
    model_top: np.ndarray  # [P] the model's most likely next token at each position
    seconds: float

    @property
    def mean_entropy(self) -> np.ndarray:
        """[3, L+1] mean over the positions."""
        return self.entropy.mean(-1)


def default_positions(tokens: int) -> tuple[int, ...]:
    """``LENS_DEFAULT_POSITIONS`` positions spread evenly over the text, the last included."""
    count = min(tokens, LENS_DEFAULT_POSITIONS)
    return tuple(sorted({int(round(i)) for i in np.linspace(0, tokens - 1, count)}))


def lens_inputs(norm: norm_maps.NormModule, h: torch.Tensor, final_rstd: torch.Tensor):
    """[3, P, d] what each variant hands the unembedding, from h [P, d] and the final
    norm's scale on the last layer at the same positions, final_rstd [P]."""
    own = norm_maps.computed(norm, h, norm.kind)  # [P, d]
    cached = norm_maps.frozen(norm, h, final_rstd[:, None])  # [P, d]
    return torch.stack([own, cached, h])  # [3, P, d]


def logit_lens(
    live: LiveModel, ref: Reference, spec: LensSpec, threads: int | None = 1
) -> LensResult:
    """Decode ``ref``'s residual stream at ``spec.positions`` through the three lenses."""
    start = time.perf_counter()
    same_model(live, ref)
    tokens = len(ref.tokens.ids)
    positions = spec.positions or default_positions(tokens)
    bad = [p for p in positions if p >= tokens]
    if bad:
        raise experiment_error("bad_positions", value=bad[0], last=tokens - 1)
    where = torch.tensor(positions)
    z_model = ref.logits[where]  # [P, V]
    final_rstd = ref.norm_rstd[ref.final_norm, where]  # [P]
    points, k = ref.stream.shape[0], spec.top_k
    top_ids = np.zeros((3, points, len(positions), k), dtype=np.int64)
    top_probs = np.zeros((3, points, len(positions), k))
    entropy = np.zeros((3, points, len(positions)))
    kl = np.zeros((3, points, len(positions)))
    agrees = np.zeros((3, points, len(positions)), dtype=bool)
    model_top = z_model.argmax(-1)  # [P]
    with live.exclusive("float32", threads) as loaded, torch.inference_mode():
        model = loaded.model
        paths = module_paths(model, loaded.architecture)
        norm = norm_maps.norm_modules(model, loaded.architecture, paths)[ref.final_norm]
        unembed = model.get_output_embeddings()
        cap = getattr(model.config, "final_logit_softcapping", None)
        for point in range(points):
            h = ref.stream[point, where]  # [P, d]
            inputs = lens_inputs(norm, h, final_rstd)  # [3, P, d]
            z = unembed(inputs).float()  # [3, P, V]
            if cap:
                z = torch.tanh(z / cap) * cap
            log_q = torch.log_softmax(z, dim=-1)  # [3, P, V]
            q = log_q.exp()
            entropy[:, point] = -(q * log_q).nan_to_num(0.0).sum(-1).double().numpy()
            kl[:, point] = kl_divergence(z_model, z).numpy()
            best = q.topk(k, dim=-1)
            top_ids[:, point] = best.indices.numpy()
            top_probs[:, point] = best.values.double().numpy()
            agrees[:, point] = (best.indices[..., 0] == model_top[None]).numpy()
    ids = sorted(set(top_ids.flatten().tolist()) | set(model_top.tolist()))
    decode = live.loaded.tokenizer.decode
    return LensResult(
        spec=spec,
        positions=tuple(positions),
        variants=LENS_VARIANTS,
        top_ids=top_ids,
        top_probs=top_probs,
        entropy=entropy,
        kl_to_model=kl,
        agrees=agrees,
        token_texts={i: decode([i]) for i in ids},
        model_top=model_top.numpy(),
        seconds=time.perf_counter() - start,
    )
