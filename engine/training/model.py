"""A tiny GPT for the training lab: Pre-LN or Post-LN, small enough to train live on a CPU.

    Pre-LN  (GPT-2):        x <- x + Attn(LN_1(x));  x <- x + MLP(LN_2(x));  ...  LN_f(x)
    Post-LN (Vaswani 2017): x <- LN_1(x + Attn(x));  x <- LN_2(x + MLP(x))

Parameters are plain tensors initialised from a private ``torch.Generator`` (no ``nn.Linear``,
whose constructor would draw from the global RNG): GPT-2's N(0, 0.02) for every matrix,
zeros for biases, ones for LayerNorm gains.  LayerNorm goes through ``engine.normalize``.

References:
- Vaswani et al. 2017, "Attention Is All You Need", arXiv:1706.03762
- Radford et al. 2019, GPT-2 (Pre-LN with a final ln_f)
- Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture", arXiv:2002.04745
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine.config import NormSpec
from engine.norms.dispatch import normalize

INIT_STD = 0.02  # GPT-2
_LAYERNORM = NormSpec(kind="layernorm", eps=1e-5)


class LayerNorm(nn.Module):
    """LayerNorm with a gain and a bias, computed by ``engine.normalize``."""

    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return normalize(x, _LAYERNORM, self.weight, self.bias, backend="torch").y


def _matrix(gen: torch.Generator, fan_in: int, fan_out: int) -> nn.Parameter:
    return nn.Parameter(torch.randn(fan_in, fan_out, generator=gen) * INIT_STD)


class Block(nn.Module):
    """One Transformer layer: causal self-attention then an MLP, each with its LayerNorm."""

    def __init__(self, d: int, heads: int, placement: str, gen: torch.Generator):
        super().__init__()
        self.heads, self.placement = heads, placement
        self.ln_1, self.ln_2 = LayerNorm(d), LayerNorm(d)
        self.w_qkv, self.b_qkv = _matrix(gen, d, 3 * d), nn.Parameter(torch.zeros(3 * d))
        self.w_o, self.b_o = _matrix(gen, d, d), nn.Parameter(torch.zeros(d))
        self.w_fc, self.b_fc = _matrix(gen, d, 4 * d), nn.Parameter(torch.zeros(4 * d))
        self.w_proj, self.b_proj = _matrix(gen, 4 * d, d), nn.Parameter(torch.zeros(d))

    def attention(self, h: torch.Tensor) -> torch.Tensor:
        B, T, d = h.shape
        qkv = h @ self.w_qkv + self.b_qkv  # [B, T, 3d]
        q, k, v = qkv.view(B, T, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, nh, T, d/nh]
        y = y.transpose(1, 2).reshape(B, T, d)  # [B, T, d]
        return y @ self.w_o + self.b_o  # [B, T, d]

    def mlp(self, h: torch.Tensor) -> torch.Tensor:
        return F.gelu(h @ self.w_fc + self.b_fc) @ self.w_proj + self.b_proj  # [B, T, d]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.placement == "pre":
            x = x + self.attention(self.ln_1(x))  # [B, T, d]
            return x + self.mlp(self.ln_2(x))
        x = self.ln_1(x + self.attention(x))  # [B, T, d]
        return self.ln_2(x + self.mlp(x))


class TinyGPT(nn.Module):
    """Token + position embeddings, ``layers`` blocks, (ln_f for Pre-LN), a linear head."""

    def __init__(
        self,
        vocab: int,
        max_len: int,
        layers: int,
        d: int,
        heads: int,
        placement: str,
        seed: int,
    ):
        super().__init__()  # placement and heads dividing d are TrainSpec's to check
        gen = torch.Generator().manual_seed(seed)
        self.placement = placement
        self.tok_emb = nn.Parameter(torch.randn(vocab, d, generator=gen) * INIT_STD)
        self.pos_emb = nn.Parameter(torch.randn(max_len, d, generator=gen) * INIT_STD)
        self.blocks = nn.ModuleList(Block(d, heads, placement, gen) for _ in range(layers))
        self.ln_f = LayerNorm(d) if placement == "pre" else None
        self.w_head = _matrix(gen, d, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits [B, T, vocab] for token ids [B, T]."""
        T = tokens.shape[1]
        x = self.tok_emb[tokens] + self.pos_emb[:T]  # [B, T, d]
        for block in self.blocks:
            x = block(x)  # [B, T, d]
        if self.ln_f is not None:
            x = self.ln_f(x)
        return x @ self.w_head  # [B, T, vocab]
