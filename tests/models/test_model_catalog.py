"""The catalog file: every family follows the file's rules, and the facts pages quote."""

import re

import pytest

from engine.config import DEPTH_NORMS, NORM_KINDS
from engine.depth.placements import PLACEMENTS
from engine.errors import EngineError
from engine.models.config_json import parse_config
from engine.models.families import BRANCHES, EXTRA_ROLES, POSITIONS, WIDTHS
from engine.models.loader import catalog, family_from_row
from ui.i18n import catalog as messages

ISSUE_FAMILIES = {
    "GPT-2",
    "BERT",
    "T5",
    "Llama 2",
    "Llama 3",
    "Mistral",
    "Qwen 2",
    "Qwen 3",
    "Gemma 2",
    "Gemma 3",
    "OLMo 2",
    "DeepSeek-V3",
    "nGPT",
    "SmolLM2",
}
ARXIV = re.compile(r"arXiv:\d{4}\.\d{4,5}")


def test_the_issue_families_are_all_there():
    assert ISSUE_FAMILIES <= {f.name for f in catalog().families}


CATALOG_KINDS = NORM_KINDS + ("l2",)  # nGPT's x / ||x||_2 (arXiv:2410.01131, Sec. 2)


@pytest.mark.parametrize("family", catalog().families, ids=catalog().ids)
def test_every_family_follows_the_files_rules(family):
    """The file is ours, so its rules are checked here, not on every start of the app."""
    assert family.source and all(s.strip() for s in family.source)
    assert len(family.source_zh) == len(family.source)
    assert family.placement in PLACEMENTS and family.norm_kind in CATALOG_KINDS
    assert family.weight_init in ("ones", "zeros", "none", None)
    assert family.total_formula in ("gpt2", "llama", None)
    assert (family.note is None) == (family.note_zh is None)
    assert (family.eps_released_source is None) == (family.eps_released_source_zh is None)
    assert family.eps_released is None or family.eps_released_source is not None
    assert family.norm_class is None or family.model_class is not None
    for value in (family.eps_default, family.eps_released, family.weight_offset):
        assert value is None or (isinstance(value, float) and value >= 0)
    assert all(isinstance(v, bool | int | float | str) for _, v in family.config_defaults)
    placed = {p for p in POSITIONS if getattr(family.placement_entry.norms, p)}
    assert family.stacks
    for stack in family.stacks:
        assert (stack.name, stack.count) in {("decoder", "layers"), ("encoder", "layers"),
                                             ("decoder", "decoder_layers")}  # fmt: skip
        order = [b.branch for b in stack.branches]
        assert order and set(order) <= set(BRANCHES) and len(set(order)) == len(order)
        for branch in stack.branches:  # the placement's norms, where names are known
            named = {p for p in POSITIONS if branch.at(p) is not None}
            assert named in (set(), placed), (stack.name, branch.branch, named, placed)
        assert all(e.width in WIDTHS and e.role in EXTRA_ROLES for e in stack.extra)
        assert stack.layers_path is not None or not stack.norm_modules()
    if any(e.role == "qk_norm" for s in family.stacks for e in s.extra):
        assert family.qk_norm is True


def test_a_misspelt_field_stops_the_catalog_from_loading():
    row = {
        "name": "X",
        "model_types": [],
        "norm_kind": "rmsnorm",
        "placement": "pre",
        "source": ["a paper, arXiv:0000.00000"],
        "source_zh": ["一篇论文，arXiv:0000.00000"],
        "stacks": [{"name": "decoder", "count": "layers", "attention": {"before": "ln"}}],
    }
    assert family_from_row("x", row).stacks[0].branches[0].before == "ln"
    with pytest.raises(TypeError, match="epsilon"):
        family_from_row("x", {**row, "epsilon": 1e-5})
    with pytest.raises(TypeError, match="bfore"):
        family_from_row(
            "x", {**row, "stacks": [{**row["stacks"][0], "attention": {"bfore": "ln"}}]}
        )


def test_every_paper_family_cites_an_arxiv_id_except_gpt2():
    # GPT-2's report has no arXiv id; every other family's paper has one
    for family in catalog().families:
        cited = any(ARXIV.search(s) for s in family.source)
        assert cited or family.id == "gpt2", family.id


def test_facts_the_brief_names():
    c = catalog()
    assert (c.family("llama2").eps_field, c.family("llama2").eps_released) == ("rms_norm_eps", 1e-5)
    assert c.family("llama1").eps_released == 1e-6
    assert (c.family("bert").eps_field, c.family("bert").eps_default) == ("layer_norm_eps", 1e-12)
    assert (c.family("gpt2").eps_field, c.family("gpt2").eps_default) == (
        "layer_norm_epsilon",
        1e-5,
    )
    t5 = c.family("t5")
    assert (t5.eps_field, t5.eps_default, t5.norm_kind, t5.bias) == (
        "layer_norm_epsilon",
        1e-6,
        "rmsnorm",
        False,
    )
    for gemma in ("gemma2", "gemma3"):
        assert (c.family(gemma).weight_init, c.family(gemma).weight_offset) == ("zeros", 1.0)
        assert c.family(gemma).norms_per_layer()[0] >= 4
    assert c.family("olmo2").placement == "olmo2"
    assert [f.qk_norm for f in (c.family("qwen3"), c.family("gemma3"), c.family("qwen2"))] == [
        True,
        True,
        False,
    ]


def test_unknown_facts_are_none_not_guesses():
    gpt3 = catalog().family("gpt3")
    assert gpt3.eps_default is None and gpt3.eps_field is None and gpt3.norm_class is None
    assert catalog().family("olmo2").eps_released is None


def test_gpt3_context_length_is_cited_from_section_2_1_not_table_2_1():
    """Brown et al. 2020's Table 2.1 lists n_layers, d_model, n_heads and d_head; the context
    window, n_ctx = 2048, is in the text of Sec. 2.1."""
    gpt3 = catalog().family("gpt3")
    cited = [*gpt3.source, gpt3.example.source]
    for source in cited:
        for part in source.split(";"):
            if "Table 2.1" in part:
                assert "n_ctx" not in part, part
    assert any("Sec. 2.1" in s and "n_ctx" in s and "2048" in s for s in cited)
    assert gpt3.example.config["n_positions"] == 2048


def test_module_names_feed_the_wiring_diagram_and_simulate_link():
    gemma2 = catalog().family("gemma2")
    names = gemma2.module_names
    assert names.attention == ("input_layernorm", "post_attention_layernorm", None)
    assert names.mlp == ("pre_feedforward_layernorm", "post_feedforward_layernorm", None)
    assert (gemma2.placement, gemma2.depth_norm) == ("peri", "rmsnorm")
    assert catalog().family("ngpt").depth_norm is None
    for family in catalog().families:
        assert family.depth_norm in DEPTH_NORMS + (None,)


@pytest.mark.parametrize("placement", PLACEMENTS.values(), ids=list(PLACEMENTS))
def test_a_placements_example_families_name_every_norm_it_places(placement):
    """The Depth page labels each placement's diagram with its example families' modules."""
    positions = [p for p in ("before", "after", "on_stream") if getattr(placement.norms, p)]
    for family in (catalog().family(f) for f in placement.examples):
        assert family.placement_entry.norms == placement.norms, family.id
        assert family.final_norm == placement.final_norm, family.id
        by_branch = {b.branch: b for b in family.stacks[0].branches}
        for branch in ("attention", "mlp"):
            assert all(by_branch[branch].at(p) for p in positions), (family.id, branch)
    assert bool(placement.examples) == (placement.id != "none")


def test_deepnet_names_the_torchscale_decoders_post_norms():
    deepnet = catalog().family("deepnet")
    names = catalog().placement_names("deepnorm")
    assert (names.attention[2], names.mlp[2], names.final) == (
        "self_attn_layer_norm",
        "final_layer_norm",  # the MLP's norm on the stream, not a norm after the last layer
        None,
    )
    assert any("torchscale" in s and "decoder.py" in s for s in deepnet.source)
    assert catalog().placement_names("pre").final == "ln_f / norm"


WITH_EXAMPLE = [family for family in catalog().families if family.example is not None]


@pytest.mark.parametrize("family", WITH_EXAMPLE, ids=[family.id for family in WITH_EXAMPLE])
def test_examples_parse_as_their_family(family):
    shape = parse_config(family.example.config, family=family.id)
    assert shape.family == family.id


def test_unknown_family_is_a_keyed_error():
    with pytest.raises(EngineError) as caught:
        catalog().family("gpt5")
    assert caught.value.key == "models.unknown_family"


@pytest.mark.parametrize(
    "refused, key",
    [
        (lambda: catalog().family("gpt5"), "models.unknown_family"),
        (lambda: parse_config('{"model_type": "llama",'), "models.bad_json"),
        (lambda: parse_config('{"hidden_size": 64}'), "models.missing_field"),
    ],
)
def test_a_models_refusal_has_a_message_in_each_language(refused, key):
    with pytest.raises(EngineError) as caught:
        refused()
    assert caught.value.key == key
    for lang in ("en", "zh"):
        catalog_text = messages(lang)[f"errors.{key}"]  # no fallback to English
        assert catalog_text.format(**caught.value.params)


def _cited(text: str) -> list[str]:
    """What a source cites, whatever the language it is glossed in: arXiv ids, quoted titles
    (in Chinese between “ and ”), code (names with _ . () or inner capitals, paths) and
    numbers, in order."""
    pattern = (
        r"arXiv:\d{4}\.\d{5}|'[^']*'|“[^”]*”"
        r"|[\w-]+/[\w.-]*[\d-][\w.-]*"  # a hub repository: openai-community/gpt2
        r"|\w+(?:\.\w+)+(?:\(\))?|\w*_\w*|\w+\(\)|[A-Z][a-z0-9]+[A-Z]\w*"
        r"|\d+(?:,\d{3})*(?:\.\d+)?"
    )
    return sorted(re.sub(r"^“(.*)”$", r"'\1'", cited) for cited in re.findall(pattern, text))


def test_chinese_sources_cite_exactly_what_the_english_ones_cite():
    """source_zh translates the glosses; every citation, name and number stays the same."""
    pairs = []
    for family in catalog().families:
        pairs += list(zip(family.source, family.source_zh, strict=True))
        if family.eps_released_source is not None:
            pairs.append((family.eps_released_source, family.eps_released_source_zh))
        if family.example is not None:
            pairs.append((family.example.source, family.example.source_zh))
    assert len(pairs) > 40
    for english, chinese in pairs:
        assert _cited(chinese) == _cited(english), (english, chinese)
        assert re.search(r"[\u4e00-\u9fff]", chinese), chinese  # translated, not copied
