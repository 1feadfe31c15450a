"""ModelShape: what the catalog's calculator reads from a model config (engine/models/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.checks import at_least, refuse_choice
from engine.config.norms import DTYPES


@dataclass(frozen=True)
class ModelShape:
    """The numbers of a model's config.json the norm calculator reads (``engine.models``).

    Field names are ours; ``engine/models/config_json.py`` maps Hugging Face's aliases
    (``hidden_size`` / ``n_embd`` / ``d_model``, ...) onto them.  None: not in the config and
    not needed for this family.
    """

    family: str  # a catalog id (engine/models/catalog.toml)
    hidden: int  # width of the residual stream d
    layers: int  # layers of the (first) stack; T5: encoder layers
    decoder_layers: int = 0  # T5: decoder layers; 0 where there is one stack
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    intermediate: int | None = None  # MLP width
    vocab: int | None = None
    positions: int | None = None  # learned position embeddings (GPT-2)
    tied_embeddings: bool = False  # the LM head reuses the token embedding
    attention_bias: bool = False  # q, k, v, o projections have biases
    mlp_bias: bool = False
    q_lora_rank: int | None = None  # DeepSeek MLA: compressed query width
    kv_lora_rank: int | None = None  # DeepSeek MLA: compressed key-value width
    eps: float | None = None  # the norms' ε as the config sets it
    dtype: str | None = None  # the config's torch_dtype, where it names one of DTYPES

    def __post_init__(self) -> None:
        at_least("hidden", self.hidden, 1)
        at_least("layers", self.layers, 1)
        at_least("decoder_layers", self.decoder_layers, 0)
        for name in (
            "heads",
            "kv_heads",
            "head_dim",
            "intermediate",
            "vocab",
            "positions",
            "q_lora_rank",
            "kv_lora_rank",
        ):
            if getattr(self, name) is not None:
                at_least(name, getattr(self, name), 1)
        if self.eps is not None:
            at_least("eps", self.eps, 0.0)
        if self.dtype is not None and self.dtype not in DTYPES:
            refuse_choice("dtype", self.dtype, tuple(DTYPES))
