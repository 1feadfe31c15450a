"""What each placement of the norm is: ONE table, looked up by the simulator, the theory
overlays, the wiring diagrams and the model catalog.

A placement says where the norms sit around each residual branch F of a layer:

    id          update of the stream x                   used by
    post        x <- Norm(x + F(x))                      original Transformer, BERT
    pre         x <- x + F(Norm(x))                      GPT-2, Llama (+ final norm)
    pre_scaled  x <- x + F(Norm(x) / sqrt(l))            LayerNorm scaling, layer l >= 1
    peri        x <- x + Norm(F(Norm(x)))                Gemma 2/3 "sandwich", Peri-LN
    olmo2       x <- x + Norm(F(x))                      OLMo 2
    deepnorm    x <- Norm(alpha x + F(x)), F's init * beta   DeepNet
    none        x <- x + F(x)

Each entry also says which theory describes it (Xiong et al.'s Lemma 2 and Theorem 1,
DeepNorm's constants) and what real models call its norm modules in Hugging Face
transformers.  Nothing here imports the rest of the engine: it is data.

References:
- Vaswani et al. 2017, "Attention Is All You Need" (Post-LN), arXiv:1706.03762
- Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture", arXiv:2002.04745
- Wang et al. 2022, "DeepNet: Scaling Transformers to 1,000 Layers", arXiv:2203.00555
- Team Gemma 2024, "Gemma 2", arXiv:2408.00118 (pre- and post-norms around each sublayer)
- Kim et al. 2025, "Peri-LN", arXiv:2502.02732
- Team OLMo 2024, "2 OLMo 2 Furious", arXiv:2501.00656 (norms on the sublayer outputs)
- Sun et al. 2025, "The Curse of Depth in Large Language Models", arXiv:2502.05795
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BranchNorms:
    """Where the norms sit around one residual branch F."""

    before: bool  # F reads Norm(x): x + F(Norm(x))
    after: bool  # F's output is normed before the add: x + Norm(F(.))
    on_stream: bool  # the sum is normed, so the stream itself is: Norm(x + F(x))

    @property
    def count(self) -> int:
        """Norm modules around one branch."""
        return int(self.before) + int(self.after) + int(self.on_stream)


@dataclass(frozen=True)
class ModuleNames:
    """What a real model family calls these norms (Hugging Face transformers module names).

    ``attention`` and ``mlp`` are (before, after, on_stream) for that branch, None where the
    placement has no norm.  The Llama-family ``post_attention_layernorm`` is the MLP's
    pre-norm in Llama but the attention output's norm in Gemma 2 and OLMo 2.
    """

    family: str
    attention: tuple[str | None, str | None, str | None]
    mlp: tuple[str | None, str | None, str | None]
    final: str | None  # the norm after the last layer, where the family has one


@dataclass(frozen=True)
class Placement:
    """One placement: what the simulator does, what theory describes it, what models call it."""

    id: str
    update: str  # the stream's update as a formula (code, not translated)
    norms: BranchNorms
    final_norm: bool  # a final norm on top belongs to the design (the stream is never normed)
    scale_branch_input: bool  # LayerNorm scaling: the branch reads Norm(x) / sqrt(l)
    deepnorm: bool  # identity path times alpha, branch weights' init times beta
    lemma2: str | None  # "pre_band": Lemma 2's band; "post_level": its 3/2 level; None
    theorem1_slope: float | None  # Theorem 1's slope of the last layer's gradient vs L
    module_names: ModuleNames


_NO_NAMES = (None, None, None)

PLACEMENTS: dict[str, Placement] = {
    p.id: p
    for p in (
        Placement(
            id="post",
            update="x ← Norm(x + F(x))",
            norms=BranchNorms(before=False, after=False, on_stream=True),
            final_norm=False,
            scale_branch_input=False,
            deepnorm=False,
            lemma2="post_level",
            theorem1_slope=0.0,
            module_names=ModuleNames(
                "BERT",
                (None, None, "attention.output.LayerNorm"),
                (None, None, "output.LayerNorm"),
                None,
            ),
        ),
        Placement(
            id="pre",
            update="x ← x + F(Norm(x))",
            norms=BranchNorms(before=True, after=False, on_stream=False),
            final_norm=True,
            scale_branch_input=False,
            deepnorm=False,
            lemma2="pre_band",
            theorem1_slope=-0.5,
            module_names=ModuleNames(
                "GPT-2 / Llama",
                ("ln_1 / input_layernorm", None, None),
                ("ln_2 / post_attention_layernorm", None, None),
                "ln_f / model.norm",
            ),
        ),
        Placement(
            id="peri",
            update="x ← x + Norm(F(Norm(x)))",
            norms=BranchNorms(before=True, after=True, on_stream=False),
            final_norm=True,
            scale_branch_input=False,
            deepnorm=False,
            lemma2=None,
            theorem1_slope=None,
            module_names=ModuleNames(
                "Gemma 2",
                ("input_layernorm", "post_attention_layernorm", None),
                ("pre_feedforward_layernorm", "post_feedforward_layernorm", None),
                "model.norm",
            ),
        ),
        Placement(
            id="olmo2",
            update="x ← x + Norm(F(x))",
            norms=BranchNorms(before=False, after=True, on_stream=False),
            final_norm=True,
            scale_branch_input=False,
            deepnorm=False,
            lemma2=None,
            theorem1_slope=None,
            module_names=ModuleNames(
                "OLMo 2",
                (None, "post_attention_layernorm", None),
                (None, "post_feedforward_layernorm", None),
                "model.norm",
            ),
        ),
        Placement(
            id="deepnorm",
            update="x ← Norm(α·x + F(x)),  F's init × β",
            norms=BranchNorms(before=False, after=False, on_stream=True),
            final_norm=False,
            scale_branch_input=False,
            deepnorm=True,
            lemma2=None,
            theorem1_slope=None,
            module_names=ModuleNames(
                "DeepNet (torchscale)",
                (None, None, "self_attn_layer_norm"),
                (None, None, "final_layer_norm"),
                None,
            ),
        ),
        Placement(
            id="pre_scaled",
            update="x ← x + F(Norm(x) / √l)",
            norms=BranchNorms(before=True, after=False, on_stream=False),
            final_norm=True,
            scale_branch_input=True,
            deepnorm=False,
            lemma2=None,
            theorem1_slope=None,
            module_names=ModuleNames(
                "LayerNorm scaling, Llama names",
                ("input_layernorm", None, None),
                ("post_attention_layernorm", None, None),
                "model.norm",
            ),
        ),
        Placement(
            id="none",
            update="x ← x + F(x)",
            norms=BranchNorms(before=False, after=False, on_stream=False),
            final_norm=False,
            scale_branch_input=False,
            deepnorm=False,
            lemma2=None,
            theorem1_slope=None,
            module_names=ModuleNames("—", _NO_NAMES, _NO_NAMES, None),
        ),
    )
}

PLACEMENT_IDS = tuple(PLACEMENTS)


def norms_per_layer(placement_id: str, branches: int, final_norm: bool, layers: int = 1) -> int:
    """Norm modules in ``layers`` layers of ``branches`` branches, plus the final norm if any."""
    p = PLACEMENTS[placement_id]
    return layers * branches * p.norms.count + int(final_norm and p.final_norm)
