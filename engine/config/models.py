"""ModelShape: what the catalog's calculator reads from a model config (engine/models/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.fields import Checked, param
from engine.config.norms import DTYPES

READ_BY = ("named", "model_type", "fields", "generic")


@dataclass(frozen=True)
class ModelShape(Checked):
    """The numbers of a model's config.json the norm calculator reads (``engine.models``).

    Field names are ours; ``engine/models/config_json.py`` maps Hugging Face's aliases
    (``hidden_size`` / ``n_embd`` / ``d_model``, ...) onto them.  None: not in the config and
    not needed for this family.
    """

    family: str  # a catalog id (engine/models/catalog.toml)
    hidden: int = param(low=1)  # width of the residual stream d
    layers: int = param(low=1)  # layers of the (first) stack; T5: encoder layers
    decoder_layers: int = param(0, low=0)  # T5: decoder layers; 0 where there is one stack
    heads: int | None = param(None, low=1)
    kv_heads: int | None = param(None, low=1)
    head_dim: int | None = param(None, low=1)
    intermediate: int | None = param(None, low=1)  # MLP width
    vocab: int | None = param(None, low=1)
    positions: int | None = param(None, low=1)  # learned position embeddings (GPT-2)
    tied_embeddings: bool = False  # the LM head reuses the token embedding
    attention_bias: bool = False  # q, k, v, o projections have biases
    mlp_bias: bool = False
    q_lora_rank: int | None = param(None, low=1)  # DeepSeek MLA: compressed query width
    kv_lora_rank: int | None = param(None, low=1)  # DeepSeek MLA: compressed key-value width
    eps: float | None = param(None, low=0.0)  # the norms' ε as the config sets it
    dtype: str | None = param(None, choices=DTYPES)  # the config's torch_dtype, if one of DTYPES
    # a torch_dtype the config names that is not one of DTYPES ("int4", "float8_e4m3fn"):
    # its bytes are not counted, bfloat16's are assumed, and the page says which it read
    unread_dtype: str | None = None
    dtype_field: str = "torch_dtype"  # the field the config names it by (transformers 5: dtype)
    # how the family was chosen: "named" (the caller named it), "model_type" (the only family
    # of the config's model_type), "fields" (of those sharing it, the one whose example the
    # config's fields match best), "generic" (a model_type the catalog lacks: read by its
    # standard fields as a Pre-RMSNorm decoder)
    read_by: str = param("named", choices=READ_BY)
