"""The catalog file validates, and the loader refuses malformed rows with a keyed error."""

import dataclasses
import re

import pytest

from engine.config import DEPTH_NORMS, NORM_KINDS
from engine.depth.placements import PLACEMENTS
from engine.errors import EngineError
from engine.models import catalog, parse_catalog, parse_config
from engine.models.loader import CATALOG_PATH

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


@pytest.mark.parametrize("family", catalog().families, ids=catalog().ids)
def test_every_row_has_a_source_a_known_placement_and_kind(family):
    assert family.source and all(s.strip() for s in family.source)
    assert family.placement in PLACEMENTS
    assert family.norm_kind in NORM_KINDS + ("l2",)
    if family.eps_released is not None:
        assert family.eps_released_source


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


def test_rows_are_plain_values():
    rows = catalog().rows()
    assert [r.id for r in rows] == list(catalog().ids)
    for row in rows:
        for value in dataclasses.asdict(row).values():
            assert value is None or isinstance(value, str | int | float | bool | tuple)
        hash(row)


# ---- refusals ------------------------------------------------------------------------------

GOOD = """
schema = 1
[families.x]
name = "X"
model_types = ["x"]
norm_kind = "rmsnorm"
placement = "pre"
source = ["a paper, arXiv:0000.00000"]
source_zh = ["一篇论文，arXiv:0000.00000"]
[[families.x.stacks]]
name = "decoder"
layers = "layers"
count = "layers"
attention = { before = "input_layernorm" }
mlp = { before = "post_attention_layernorm" }
final = "norm"
"""


def test_the_minimal_row_loads():
    family = parse_catalog(GOOD).family("x")
    assert family.eps_default is None and family.bias is None and family.final_norm is True


@pytest.mark.parametrize(
    ("old", "new", "key", "field"),
    [
        (
            'source = ["a paper, arXiv:0000.00000"]',
            "source = []",
            "catalog_missing_field",
            "source",
        ),
        ('source = ["a paper, arXiv:0000.00000"]', "", "catalog_missing_field", "source"),
        ('placement = "pre"', 'placement = "middle"', "catalog_field", "placement"),
        ('norm_kind = "rmsnorm"', 'norm_kind = "scalenorm"', "catalog_field", "norm_kind"),
        ('norm_kind = "rmsnorm"', "norm_kind = 3", "catalog_field", "norm_kind"),
        ('name = "X"', 'name = "X"\neps_default = "1e-5"', "catalog_field", "eps_default"),
        ('name = "X"', 'name = "X"\nbias = "no"', "catalog_field", "bias"),
        ('name = "X"', 'name = "X"\nepsilon = 1e-5', "catalog_unknown_field", "epsilon"),
        (
            'name = "X"',
            'name = "X"\neps_released = 1e-5',
            "catalog_missing_field",
            "eps_released_source",
        ),
        ('name = "X"', 'name = "X"\nnote = "departs"', "catalog_missing_field", "note_zh"),
        ('source_zh = ["一篇论文，arXiv:0000.00000"]', "", "catalog_missing_field", "source_zh"),
        (
            'source_zh = ["一篇论文，arXiv:0000.00000"]',
            'source_zh = ["a", "b"]',
            "catalog_field",
            "source_zh",
        ),  # fmt: skip
        (
            'name = "X"',
            'name = "X"\neps_released = 1e-5\neps_released_source = "config.json of x"',
            "catalog_missing_field",
            "eps_released_source_zh",
        ),
        (
            'attention = { before = "input_layernorm" }',
            'attention = { after = "o" }',
            "catalog_mismatch",
            None,
        ),
        ('count = "layers"', 'count = "blocks"', "catalog_field", "stacks[0].count"),
    ],
)
def test_malformed_rows_are_refused_with_a_keyed_error(old, new, key, field):
    assert old in GOOD
    with pytest.raises(EngineError) as caught:
        parse_catalog(GOOD.replace(old, new))
    assert caught.value.key == f"models.{key}"
    assert caught.value.params["family"] == "x"
    if field is not None:
        assert caught.value.params["field"] == field


def test_a_qk_norm_module_needs_qk_norm_true():
    text = GOOD.replace(
        'final = "norm"',
        'final = "norm"\nextra = [{ module = "q_norm", width = "head_dim", role = "qk_norm" }]',
    )
    with pytest.raises(EngineError, match="qk_norm"):
        parse_catalog(text)
    parse_catalog(text.replace('name = "X"', 'name = "X"\nqk_norm = true'))


def test_invalid_toml_and_wrong_schema_are_refused():
    with pytest.raises(EngineError) as caught:
        parse_catalog("schema = ")
    assert caught.value.key == "models.catalog_unreadable"
    with pytest.raises(EngineError) as caught:
        parse_catalog(GOOD.replace("schema = 1", "schema = 2"))
    assert caught.value.key == "models.catalog_field"


def test_the_shipped_file_is_the_one_loaded():
    assert CATALOG_PATH.name == "catalog.toml" and CATALOG_PATH.exists()
    assert parse_catalog(CATALOG_PATH.read_text(encoding="utf-8")) == catalog()


def test_unknown_family_and_model_type_are_keyed_errors():
    with pytest.raises(EngineError) as caught:
        catalog().family("gpt5")
    assert caught.value.key == "models.unknown_family"
    with pytest.raises(EngineError) as caught:
        catalog().for_model_type("mamba")
    assert caught.value.key == "models.unknown_model_type"
    assert "llama" in caught.value.params["allowed"]


def test_every_models_error_key_has_english_and_chinese_messages():
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    raised = set()
    for path in (root / "engine" / "models").glob("*.py"):
        raised |= set(re.findall(r'"models\.([a-z_]+)"', path.read_text(encoding="utf-8")))
    assert {"missing_field", "bad_json", "catalog_field", "unknown_model_type"} <= raised
    for lang in ("en", "zh"):
        with (root / "locales" / lang / "errors.toml").open("rb") as handle:
            messages = tomllib.load(handle)["models"]
        assert raised == set(messages), lang


def _cited(text: str) -> list[str]:
    """What a source cites, whatever the language it is glossed in: arXiv ids, quoted titles,
    code (names with _ . () or inner capitals, paths) and numbers, in order."""
    pattern = (
        r"arXiv:\d{4}\.\d{5}|'[^']*'"
        r"|[\w-]+/[\w.-]*[\d-][\w.-]*"  # a hub repository: openai-community/gpt2
        r"|\w+(?:\.\w+)+(?:\(\))?|\w*_\w*|\w+\(\)|[A-Z][a-z0-9]+[A-Z]\w*"
        r"|\d+(?:,\d{3})*(?:\.\d+)?"
    )
    return sorted(re.findall(pattern, text))


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
