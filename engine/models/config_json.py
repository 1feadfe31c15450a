"""A pasted config.json -> ``ModelShape``: the numbers the norm calculator needs.

Hugging Face configs name one quantity differently per family (GPT-2's ``n_embd`` is
Llama's ``hidden_size`` and T5's ``d_model``); ``FIELD_ALIASES`` is the one table that maps
them.  ``model_type`` picks the catalog family, which says which fields are needed: a field
the family's class fills in by default (``config_defaults`` in catalog.toml) may be left
out; a needed field that is missing is refused with an ``EngineError`` naming it.  A
multimodal config (Gemma 3) is read from its ``text_config``: the language model alone.
"""

from __future__ import annotations

import dataclasses
import json

from engine.config import DTYPES, ModelShape
from engine.errors import EngineError, Phrase
from engine.models.families import Family
from engine.models.loader import catalog

# our field -> the names Hugging Face configs give it, in the order they are looked up
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "decoder_layers": ("num_decoder_layers",),
    "heads": ("num_attention_heads", "n_head", "num_heads"),
    "kv_heads": ("num_key_value_heads",),
    "head_dim": ("head_dim", "d_kv"),
    "intermediate": ("intermediate_size", "n_inner", "d_ff"),
    "vocab": ("vocab_size",),
    "positions": ("n_positions", "max_position_embeddings"),
    "tied_embeddings": ("tie_word_embeddings",),
    "attention_bias": ("attention_bias",),
    "mlp_bias": ("mlp_bias",),
    "q_lora_rank": ("q_lora_rank",),
    "kv_lora_rank": ("kv_lora_rank",),
    "eps": ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon"),
    "dtype": ("torch_dtype", "dtype"),
}
_ABSENT = object()


MAX_COUNT = 2**24  # above every real size (context lengths reach ~10M); products stay exact
MAX_NESTING = 64  # real configs nest 2-3 levels (text_config, rope_scaling)
MAX_CONFIG_CHARS = 200_000  # a config.json is a few kB; a multimodal one with label maps, ~100 kB
SHOWN_CHARS = 60  # of a value repeated in a message


def _shown(value) -> str:
    """A config value as JSON, cut for a message (a pasted 200 KB list is not repeated)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


def _nesting(text: str) -> int:
    """The deepest bracket nesting in ``text`` outside strings (before json builds it)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _decode(text: str) -> dict:
    """The parsed config; refused when it is longer than any config.json, is not JSON, nests
    too deep, holds a number too long to convert, or a string that is not valid Unicode (a
    lone surrogate escape)."""
    if len(text) > MAX_CONFIG_CHARS:
        raise EngineError("models.too_long", {"chars": len(text), "limit": MAX_CONFIG_CHARS})
    if _nesting(text) > MAX_NESTING:
        raise EngineError(
            "models.too_deep",
            {"limit": MAX_NESTING},
        )
    try:
        config = json.loads(text.removeprefix("\ufeff"))  # a byte-order mark some editors write
    except json.JSONDecodeError as error:
        raise EngineError(
            "models.bad_json",
            {"line": error.lineno, "column": error.colno, "error": error.msg},
        ) from error
    except ValueError as error:  # an integer of more digits than Python converts
        raise EngineError("models.number_too_long") from error
    try:
        json.dumps(config, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        raise EngineError("models.bad_unicode") from error
    return config


def _lookup(config: dict, field: str) -> tuple[str, object]:
    """(the HF name found, its value), or (the first alias, _ABSENT)."""
    for alias in FIELD_ALIASES[field]:
        if alias in config:
            return alias, config[alias]
    return FIELD_ALIASES[field][0], _ABSENT


def _missing(field: str) -> EngineError:
    aliases = FIELD_ALIASES.get(field, (field,))
    return EngineError(
        "models.missing_field",
        {"field": aliases[0], "aliases": " / ".join(aliases)},
    )


def _bad(alias: str, value, rule: str) -> EngineError:
    """A field whose value breaks ``rule``: "count", "flag", "eps" or "text"."""
    params = {"field": alias, "value": _shown(value), "high": MAX_COUNT}
    return EngineError(f"models.bad_{rule}", params)


def _count(alias: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
        raise _bad(alias, value, "count")
    return value


class _Reader:
    """Reads one config for one family: the value, else the class default, else a rule."""

    def __init__(self, config: dict, family: Family):
        self.config = config
        self.family = family

    def raw(self, field: str) -> tuple[str, object]:
        alias, value = _lookup(self.config, field)
        if value is _ABSENT:
            for name in FIELD_ALIASES[field]:
                default = self.family.config_default(name)
                if default is not None:
                    return name, default
        return alias, value

    def count(self, field: str, required: bool) -> int | None:
        alias, value = self.raw(field)
        if value is _ABSENT or value is None:
            if required:
                raise _missing(field)
            return None
        return _count(alias, value)

    def flag(self, field: str) -> bool:
        alias, value = self.raw(field)
        if value is _ABSENT or value is None:
            return False
        if not isinstance(value, bool):
            raise _bad(alias, value, "flag")
        return value

    def eps(self) -> float | None:
        names = ((self.family.eps_field,) if self.family.eps_field else ()) + FIELD_ALIASES["eps"]
        for alias in names:
            if alias in self.config and self.config[alias] is not None:
                value = self.config[alias]
                number = isinstance(value, int | float) and not isinstance(value, bool)
                if not number or not 0 <= value <= 1:  # NaN, ∞ and 10**400 fail too
                    raise _bad(alias, value, "eps")
                return float(value)
        return self.family.eps_default

    def dtype(self) -> str | None:
        _, value = self.raw("dtype")
        return value if isinstance(value, str) and value in DTYPES else None

    def unread_dtype(self) -> str | None:
        """A dtype the config names that ``dtype`` does not read: a text as written, anything
        else as JSON ({"a": 1}, not Python's {'a': 1})."""
        _, value = self.raw("dtype")
        named = value not in (_ABSENT, None) and not (isinstance(value, str) and value in DTYPES)
        if not named:
            return None
        return value[:SHOWN_CHARS] if isinstance(value, str) else _shown(value)


def shape_from_config(config: dict, family: Family) -> ModelShape:
    """The ``ModelShape`` of ``config`` (a parsed config.json) read as ``family``."""
    read = _Reader(config, family)
    widths = {extra.width for stack in family.stacks for extra in stack.extra}
    formula = family.total_formula
    hidden = read.count("hidden", required=True)
    layers = read.count("layers", required=True)
    decoder_layers = 0
    if any(stack.count == "decoder_layers" for stack in family.stacks):
        decoder_layers = read.count("decoder_layers", required=False) or layers
    needs_heads = formula is not None or widths & {"head_dim", "q_projection", "kv_projection"}
    heads = read.count("heads", required=bool(needs_heads))
    kv_heads = read.count("kv_heads", required=False) or heads
    if heads is not None and kv_heads is not None and heads % kv_heads:  # 64 of 8, 7 of 30
        # grouped-query attention shares each key-value head among heads / kv_heads query
        # heads; transformers' repeat_kv fails on any other pair
        words = {"field": read.raw("kv_heads")[0], "heads_field": read.raw("heads")[0]}
        raise EngineError("models.kv_heads", {**words, "kv_heads": kv_heads, "heads": heads})
    head_dim = read.count("head_dim", required=False)
    if head_dim is None and heads is not None:
        head_dim = hidden // heads  # what HF does when head_dim is left out
        if head_dim < 1:  # fewer dimensions than heads: name the fields the reader wrote
            words = {"field": read.raw("hidden")[0], "heads_field": read.raw("heads")[0]}
            raise EngineError("models.no_head_dim", {**words, "hidden": hidden, "heads": heads})
    mla = "kv_lora_rank" in widths  # DeepSeek's latent attention
    intermediate = read.count("intermediate", required=formula == "llama")
    if intermediate is None and formula == "gpt2":
        intermediate = 4 * hidden  # GPT2MLP's width when n_inner is null
    return ModelShape(
        family=family.id,
        hidden=hidden,
        layers=layers,
        decoder_layers=decoder_layers,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate=intermediate,
        vocab=read.count("vocab", required=formula is not None),
        positions=read.count("positions", required=formula == "gpt2"),
        tied_embeddings=read.flag("tied_embeddings"),
        attention_bias=read.flag("attention_bias"),
        mlp_bias=read.flag("mlp_bias"),
        q_lora_rank=read.count("q_lora_rank", required=False) if mla else None,
        kv_lora_rank=read.count("kv_lora_rank", required=True) if mla else None,
        eps=read.eps(),
        dtype=read.dtype(),
        unread_dtype=read.unread_dtype(),
        dtype_field=read.raw("dtype")[0],
    )


def _json_type(value) -> Phrase:
    """What JSON calls ``value``'s type (the reader pasted JSON, not Python): "array", not
    "list"; in the reader's language on a page."""
    if value is None:
        name = "null"
    elif isinstance(value, bool):
        name = "boolean"
    else:
        kinds = ((str, "string"), (int | float, "number"), (list, "array"))
        name = next((name for kind, name in kinds if isinstance(value, kind)), "value")
    return Phrase(f"models.json_type.{name}")


def parse_config(source: str | dict, family: str | None = None) -> ModelShape:
    """A config.json (its text, or already parsed) -> ``ModelShape``.

    ``family`` (a catalog id) overrides the config's ``model_type``: use it for a config of
    a family that has no Hugging Face model type (GPT-3 is written as a ``gpt2`` config).
    """
    config = _decode(source) if isinstance(source, str) else source
    if not isinstance(config, dict):
        raise EngineError("models.not_an_object", {"type": _json_type(config)})
    text_config = config.get("text_config")
    if text_config is not None and not isinstance(text_config, dict):  # transformers refuses it
        raise _bad("text_config", text_config, "object")
    if isinstance(text_config, dict) and _lookup(config, "hidden")[1] is _ABSENT:
        # the language model: text_config, with the top level's plain fields (model_type,
        # tie_word_embeddings) where text_config does not set them
        top = {key: value for key, value in config.items() if not isinstance(value, dict)}
        config = {**top, **text_config}
    if family is not None:
        return shape_from_config(config, catalog().family(family))
    model_type = config.get("model_type")
    if model_type is None:
        raise _missing("model_type")
    if not isinstance(model_type, str):
        raise _bad("model_type", model_type, "text")
    sharing = catalog().sharing_model_type(model_type)
    if not sharing:  # read by its standard fields, as the catalog's Pre-RMSNorm decoder
        _refuse_unlike_generic(config, model_type)
        try:
            shape = shape_from_config(config, catalog().family(GENERIC_FAMILY))
        except EngineError as error:  # say why a field of a decoder is asked for
            if error.key != "models.missing_field":
                raise
            params = {**error.params, "model_type": model_type[:SHOWN_CHARS]}
            raise EngineError("models.generic_missing_field", params) from error
        return dataclasses.replace(shape, read_by="generic")
    if len(sharing) == 1:
        return dataclasses.replace(shape_from_config(config, sharing[0]), read_by="model_type")
    chosen = best_match(config, sharing)
    return dataclasses.replace(shape_from_config(config, chosen), read_by="fields")


def _refuse_unlike_generic(config: dict, model_type: str) -> None:
    """Refuse a config the generic reading would count wrong, by what its fields say: a
    LayerNorm's ε (Phi-2's and GPT-NeoX's ``layer_norm_eps``: LayerNorms with a bias, twice
    the parameters), or experts (Mixtral's ``num_local_experts``: MLP weights the Llama
    reading leaves out)."""
    shown = model_type[:SHOWN_CHARS]
    eps_field = next((name for name in FIELD_ALIASES["eps"] if name in config), None)
    if eps_field is not None and eps_field != "rms_norm_eps":
        raise EngineError("models.generic_layernorm", {"model_type": shown, "field": eps_field})
    experts = [
        name
        for name, value in config.items()
        if "expert" in name and isinstance(value, int) and not isinstance(value, bool) and value > 1
    ]
    if experts:  # named by the experts' count (num_local_experts), not those per token
        name = min(experts, key=lambda name: "per_tok" in name)
        params = {"model_type": shown, "field": name[:SHOWN_CHARS], "count": config[name]}
        raise EngineError("models.generic_experts", params)


# A config whose model_type the catalog lacks (Phi-3's "phi3") is read by its standard fields
# (FIELD_ALIASES) as this family: a Pre-RMSNorm decoder, Llama's norms and parameter count.
GENERIC_FAMILY = "llama3"
MATCHED_FIELDS = ("vocab", "hidden", "layers", "heads", "kv_heads", "intermediate", "eps")


def best_match(config: dict, families: tuple[Family, ...]) -> Family:
    """Of ``families`` (sharing one model_type), the one whose example config agrees with
    ``config`` on the most of ``MATCHED_FIELDS`` (Llama 3 8B's vocabulary of 128,256 is Llama
    3's, not LLaMA's); the first in the catalog on a tie, or where none has an example."""

    def agreement(family: Family) -> int:
        if family.example is None:
            return -1
        example = family.example.config
        return sum(
            _lookup(config, field)[1] is not _ABSENT
            and _lookup(config, field)[1] == _lookup(example, field)[1]
            for field in MATCHED_FIELDS
        )

    scores = [agreement(family) for family in families]
    return families[scores.index(max(scores))]
