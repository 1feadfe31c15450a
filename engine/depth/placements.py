"""What each placement of the norm is: ONE table, looked up by the simulator, the theory
overlays, the wiring diagrams and the model catalog.

A placement says where the norms sit around each residual branch F of a layer; its
``update`` is the stream's update as a formula.  Each entry also says which theory describes
it (Xiong et al.'s Lemma 2 and Theorem 1, DeepNorm's constants) and which model families of
the catalog (``engine/models/catalog.toml``) are built that way: the wiring diagrams label
the norms with those families' module names.  Nothing here imports the rest of the engine:
it is data.

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

    before: bool = False  # F reads Norm(x): x + F(Norm(x))
    after: bool = False  # F's output is normed before the add: x + Norm(F(.))
    on_stream: bool = False  # the sum is normed, so the stream itself is: Norm(x + F(x))

    @property
    def count(self) -> int:
        """Norm modules around one branch."""
        return int(self.before) + int(self.after) + int(self.on_stream)


@dataclass(frozen=True)
class Placement:
    """One placement: what the simulator does, what theory describes it, who uses it."""

    id: str
    update: str  # the stream's update as a formula (code, not translated)
    norms: BranchNorms
    examples: tuple[str, ...] = ()  # catalog family ids whose module names label its diagram
    final_norm: bool = False  # a final norm belongs to the design (the stream is never normed)
    scale_branch_input: bool = False  # LayerNorm scaling: the branch reads Norm(x) / sqrt(l)
    deepnorm: bool = False  # identity path times alpha, branch weights' init times beta
    lemma2: str | None = None  # "pre_band": Lemma 2's band; "post_level": its 3/2 level
    theorem1_slope: float | None = None  # Theorem 1's slope of the last layer's gradient vs L


PLACEMENTS: dict[str, Placement] = {
    p.id: p
    for p in (
        Placement(
            id="post",
            update="x ← Norm(x + F(x))",
            norms=BranchNorms(on_stream=True),
            examples=("bert",),  # and the original Transformer
            lemma2="post_level",
            theorem1_slope=0.0,
        ),
        Placement(
            id="pre",
            update="x ← x + F(Norm(x))",
            norms=BranchNorms(before=True),
            examples=("gpt2", "llama3"),
            final_norm=True,
            lemma2="pre_band",
            theorem1_slope=-0.5,
        ),
        Placement(
            id="peri",  # Gemma 2/3's "sandwich", Peri-LN
            update="x ← x + Norm(F(Norm(x)))",
            norms=BranchNorms(before=True, after=True),
            examples=("gemma2",),
            final_norm=True,
        ),
        Placement(
            id="olmo2",
            update="x ← x + Norm(F(x))",
            norms=BranchNorms(after=True),
            examples=("olmo2",),
            final_norm=True,
        ),
        Placement(
            id="deepnorm",
            update="x ← Norm(α·x + F(x)),  F's init × β",
            norms=BranchNorms(on_stream=True),
            examples=("deepnet",),
            deepnorm=True,
        ),
        Placement(
            id="pre_scaled",  # LayerNorm scaling (Sun et al.), applied to a Llama
            update="x ← x + F(Norm(x) / √l)",
            norms=BranchNorms(before=True),
            examples=("llama3",),
            final_norm=True,
            scale_branch_input=True,
        ),
        Placement(id="none", update="x ← x + F(x)", norms=BranchNorms()),
    )
}

PLACEMENT_IDS = tuple(PLACEMENTS)
