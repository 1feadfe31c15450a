"""Display names of the engine's ids: one table, looked up everywhere.

The engine and the URL speak in stable ids (``rmsnorm``, ``attention``, ``pre``); people read
names.  Proper names of norms are the same in every language (``NORM_NAMES``); everything
else is translated from ``locales/<lang>/labels.toml``.  ``label(kind, value, lang)``
is pure (``lang`` given) so share links can map names written by older links back to ids.
"""

from __future__ import annotations

from ui.i18n import LANGUAGES, current_language, translate

NORM_NAMES = {
    "layernorm": "LayerNorm",
    "rmsnorm": "RMSNorm",
    "batchnorm": "BatchNorm",
    "instancenorm": "InstanceNorm",
    "groupnorm": "GroupNorm",
    "dyt": "DyT",
    "l2": "L2 (x / ‖x‖)",  # nGPT's projection onto the unit sphere (model catalog only)
}
ACTIVATION_NAMES = {"gelu": "GELU", "relu": "ReLU"}
# The Geometry page's input axes, as its sliders, scene and γ/β table name them (y is the output)
INPUT_AXES = ("x₁", "x₂", "x₃")

# Vocabularies whose names are translated: labels.<vocabulary>.<id>
TRANSLATED = (
    "placement",
    "sublayer",
    "init",
    "task",
    "distribution",
    "source",
    "pass",
    "config_input",  # the model calculator's input: a catalog example or a pasted config
    "norm_role",  # engine.models.calculator.NormGroup.role: where a norm module sits
    "stack",  # a model's tower of layers: decoder, encoder
    "compute",
    "path",
    "dump_source",  # the dumps page: an upload, the built-in example, the live model
    "layer_order",  # engine.config.DumpSpec.layer_order
    "chosen_as",  # engine.dumps.report.NormComparison.reasons
    "dyt_scale",  # engine.dumps.norm_views.FlatBand.scale: the input scale its tokens share
    "axes_source",
    "axes_preset",
)


def label(vocabulary: str, value, lang: str | None = None) -> str:
    """The name people read for ``value`` of ``vocabulary`` ("norm", "placement", ...)."""
    if vocabulary == "norm":
        return NORM_NAMES[value]
    if vocabulary == "activation":
        return ACTIVATION_NAMES[value]
    if vocabulary == "dtype":
        return str(value)  # float16, bfloat16: the names PyTorch prints
    if vocabulary not in TRANSLATED:
        raise KeyError(f"no display names for {vocabulary!r}")
    return translate(f"labels.{vocabulary}.{value}", lang or current_language())


# A name shown before the one in labels.toml: older share links wrote it, and still open.
FORMER_LABELS = {
    ("placement", "olmo2"): ("OLMo-2",),
    ("source", "text"): ("Type vectors",),
    ("source", "preset"): ("An example",),
}


def every_label(vocabulary: str, value) -> set[str]:
    """``value``'s name in every language, and any it had before: what older share links
    wrote instead of the id."""
    current = {label(vocabulary, value, lang) for lang in LANGUAGES}
    return current | set(FORMER_LABELS.get((vocabulary, value), ()))


def placement_label(placement: str) -> str:
    return label("placement", placement)
