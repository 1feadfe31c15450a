"""The Model catalog page through AppTest: the table, a family's detail and its Depth link, the
calculator on a catalog example and on pasted configs (good, malformed, unfamiliar)."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from engine.models.loader import catalog
from tests.app.conftest import APP
from tests.plain_text import plain
from ui.views import models as models_view

SMOLLM2 = {  # HuggingFaceTB/SmolLM2-135M's shape, as in the catalog's example
    "model_type": "llama",
    "hidden_size": 576,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "intermediate_size": 1536,
    "vocab_size": 49152,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": True,
    "torch_dtype": "float32",
}


def _open(app):
    app.switch_page("app_pages/models.py").run()
    assert not app.exception
    return app


def _metrics(app) -> dict[str, str]:
    """Each metric's value as a test writes it (a number and its unit: a no-break space)."""
    return {m.label: plain(m.value) for m in app.metric}


def _paste(app, text: str):
    app.segmented_control(key="md_input").set_value("paste").run()
    app.text_area(key="md_config_text").input(text).run()
    assert not app.exception
    return app


def _link(app):
    links = app.get("page_link")
    assert len(links) == 1
    return links[0].proto


def test_table_lists_every_family_and_writes_unknown_facts_as_unknown(app):
    _open(app)
    assert app.title[0].value == "Model catalog"
    table = app.dataframe[0].value
    assert list(table["family"]) == [f.name for f in catalog().families]
    assert (table != "").all().all() and not table.isna().any().any()
    gpt3 = table.set_index("family").loc["GPT-3"]
    assert gpt3["eps_released"] == "unknown" and gpt3["eps_field"] == "unknown"
    gemma2 = table.set_index("family").loc["Gemma 2"]
    assert gemma2["placement"] == "Peri-Norm (sandwich)" and gemma2["per_layer"] == "4"
    assert gemma2["gain"] == "(1 + γ), γ initialized to 0"
    t5 = table.set_index("family").loc["T5"]
    assert t5["per_layer"] == "2 / 3"  # encoder / decoder
    assert t5["final"] == "encoder.final_layer_norm, decoder.final_layer_norm"  # both stacks'
    assert t5["modules"] == "layer.0.layer_norm, layer.1.layer_norm, layer.2.layer_norm"
    widths = {c: v.get("width") for c, v in json.loads(app.dataframe[0].proto.columns).items()}
    for column in ("modules", "final", "placement"):  # every name whole: Gemma 3's QK-norms
        widest = max(models_view._text_px(cell) for cell in table[column])
        assert widths[column] >= widest, column


def test_default_example_is_gpt3_with_seed_000s_count_and_share(app):
    _open(app)
    metrics = _metrics(app)
    # 2 x 2 x 12,288 x 96 + 2 x 12,288 (Brown et al. 2020, Table 2.1; seed 000)
    assert metrics["Norm parameters"] == "4,743,168"
    assert metrics["Share of all parameters"] == "0.0027 %"
    assert metrics["Norm modules"] == "193"
    assert any(
        "96 × 24,576 + 96 × 24,576 + 1 × 24,576 = 4,743,168" in m.value for m in app.markdown
    )
    columns = json.loads(app.dataframe[1].proto.columns)  # the per-module table
    kinds = [columns[c]["type_config"]["type"] for c in app.dataframe[1].value.columns]
    assert kinds == ["text", "text", "number", "number", "number", "number"]
    hint = "Wider than this column: scroll sideways for the rest of the table →"
    assert [c.value for c in app.caption].count(hint) == 2  # shown on a narrower column only


def test_malformed_json_is_refused_with_where_it_broke(app):
    _paste(_open(app), '{"model_type": "llama", "hidden_size": 4096,,}')
    assert "not valid JSON" in app.error[0].value and "line 1" in app.error[0].value
    assert "Norm parameters" not in _metrics(app)


def test_missing_field_is_named_with_its_aliases(app):
    _paste(_open(app), json.dumps({"model_type": "llama", "num_hidden_layers": 2}))
    assert app.error[0].value == (
        "The config has no hidden_size / n_embd / d_model, which the calculator needs."
    )


def test_an_unfamiliar_model_type_is_read_as_a_generic_pre_rmsnorm_decoder(app):
    phi3 = {**SMOLLM2, "model_type": "phi3", "hidden_size": 3072, "num_hidden_layers": 32}
    phi3 |= {"num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32064}
    _paste(_open(app), json.dumps(phi3))
    assert not app.error
    captions = " ".join(c.value for c in app.caption)
    assert "Read as **a generic Pre-RMSNorm decoder**" in captions
    assert "Its model_type is not in the catalog" in app.warning[0].value  # not small print
    assert _metrics(app)["Norm parameters"] == f"{(2 * 32 + 1) * 3072:,}"
    _paste(app, json.dumps({"model_type": "mamba", "hidden_size": 8}))
    assert "num_hidden_layers" in app.error[0].value  # what a generic read needs, named


def test_empty_paste_box_asks_for_a_config(app):
    _open(app).segmented_control(key="md_input").set_value("paste").run()
    assert not app.error
    assert "Paste a model's config.json" in app.info[0].value


def test_pasted_llama_config_is_counted_and_the_shared_model_type_said(app):
    _paste(_open(app), json.dumps(SMOLLM2))
    assert not app.error
    metrics = _metrics(app)
    # 30 layers x 2 RMSNorms x 576 + the final 576, no bias
    assert metrics["Norm parameters"] == f"{(2 * 30 + 1) * 576:,}"
    captions = " ".join(c.value for c in app.caption)
    assert "Read as **SmolLM2**" in captions and "match best" in captions
    bytes_each = 2 * 576 * 4  # read and write [1, 576] in float32, the config's torch_dtype
    assert metrics["Bytes, one norm"] == f"{bytes_each:,} B"
    assert any("float32 (the config's torch_dtype" in m.value for m in app.markdown)


def test_a_paste_longer_than_any_config_is_refused_and_the_previous_result_goes(app):
    _paste(_open(app), json.dumps(SMOLLM2))
    assert "Norm parameters" in _metrics(app)
    _paste(app, json.dumps({**SMOLLM2, "pad": " " * 250_000}))
    assert "characters long; a config.json is read up to 200,000" in app.error[0].value
    assert "Norm parameters" not in _metrics(app)


@pytest.mark.parametrize("named", ["float8_e4m3fn", "int4"])
def test_a_torch_dtype_the_calculator_does_not_count_is_named_not_said_missing(app, named):
    _paste(_open(app), json.dumps({**SMOLLM2, "torch_dtype": named}))
    assert not app.error
    said = " ".join(m.value for m in app.markdown)
    assert f"not the config's torch_dtype `{named}`" in said and "names no torch_dtype" not in said
    assert _metrics(app)["Bytes, one norm"] == f"{2 * 576 * 2:,} B"  # bfloat16 assumed


def test_pasted_config_stays_out_of_the_url_and_in_its_session(app, browser_session, calls):
    counted = calls("engine.models.calculator.norm_budget")
    _paste(_open(app), json.dumps(SMOLLM2))
    assert "SmolLM2" not in json.dumps(dict(app.query_params)) and "576" not in str(
        app.query_params
    )
    pasted = len(counted)
    app.run()
    assert len(counted) == pasted  # kept for this session ...
    browser_session("other")
    app.run()
    assert len(counted) == pasted + 1  # ... and computed afresh for another


def test_a_paste_survives_a_look_at_the_example_and_back(app):
    _paste(_open(app), json.dumps(SMOLLM2))
    app.segmented_control(key="md_input").set_value("example").run()
    app.segmented_control(key="md_input").set_value("paste").run()
    assert app.text_area(key="md_config_text").value == json.dumps(SMOLLM2)
    assert _metrics(app)["Norm parameters"] == f"{(2 * 30 + 1) * 576:,}"


def test_hostile_pastes_are_refused_with_a_message_never_a_traceback(app):
    _open(app)
    for text in (
        "[" * 10_000 + "]" * 10_000,
        '{"model_type": "llama", "hidden_size": 1' + "0" * 5000 + "}",
        '{"model_type": "\\ud800"}',
        json.dumps({**SMOLLM2, "hidden_size": 2**62, "vocab_size": 2**62}),
        json.dumps({"model_type": "[evil](//e.io) **x**", "hidden_size": "[a](//e.io)"}),
    ):
        _paste(app, text)
        assert app.error, text[:40]
    assert '`"[a](//e.io)"`' in app.error[0].value  # the pasted text shown literally


def test_simulate_link_opens_depth_with_the_family_placement_and_norm(app):
    _open(app)
    app.selectbox(key="md_family").select("gemma2").run()
    link = _link(app)
    assert link.page == "depth" and not link.disabled
    assert parse_qs(link.query_string) == {
        "lang": ["en"],
        "dp_placements": ["peri"],
        "dp_norm": ["rmsnorm"],
    }
    app.selectbox(key="md_family").select("bert").run()  # LayerNorm is the Depth default
    assert parse_qs(_link(app).query_string) == {
        "lang": ["en"],
        "dp_placements": ["post"],
        "dp_final": ["false"],
    }


def test_ngpt_cannot_be_simulated_and_says_why(app):
    _open(app)
    app.selectbox(key="md_family").select("ngpt").run()
    assert not app.exception
    assert _link(app).disabled
    assert any("L2 (x / ‖x‖) is none of them" in c.value for c in app.caption)


def test_every_family_detail_renders_its_wiring(app):
    _open(app)
    for family in catalog().families:
        app.selectbox(key="md_family").select(family.id).run()
        assert not app.exception and not app.error, family.id
        chart = json.loads(app.get("plotly_chart")[0].proto.spec)
        assert family.name in chart["layout"]["title"]["text"]


def test_every_catalog_example_is_counted_without_a_refusal(app):
    _open(app)
    for family in (f for f in catalog().families if f.example is not None):
        app.selectbox(key="md_example").select(family.id).run()
        assert not app.exception and not app.error, family.id
        assert _metrics(app)["Norm parameters"] != "", family.id


def test_share_link_opens_the_family_and_example_in_chinese():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(
        {"lang": "zh", "md_family": "olmo2", "md_example": "llama3", "md_dtype": "float16"}
    )
    at.switch_page("app_pages/models.py").run()
    assert not at.exception
    assert at.title[0].value == "模型目录"
    assert at.selectbox(key="md_family").value == "olmo2"
    assert at.selectbox(key="md_example").value == "llama3"
    assert "未知" in set(at.dataframe[0].value["eps_released"])  # OLMo 2's released ε
    assert any("float16" in m.value for m in at.markdown)


def test_hostile_url_values_are_refused_with_a_message():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(
        {"lang": "en", "md_family": "<script>", "md_tokens": "1e400", "md_input": "upload"}
    )
    at.switch_page("app_pages/models.py").run()
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "md_family" in warnings and "md_tokens" in warnings and "md_input" in warnings
    assert at.selectbox(key="md_family").value == "llama3"  # the default, not the script


def test_an_examples_label_reads_in_the_pages_language():
    """An example that is a config class's defaults, not a released model, says so in
    Chinese on the Chinese page; a model's name reads the same in both."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update({"lang": "zh", "md_example": "qwen2"})
    _open(app)
    shown = app.selectbox(key="md_example").options  # the labels as the page drew them
    assert "Qwen2Config() 的默认值（并非已发布的检查点）" in shown
    assert catalog().family("gpt3").example.label in shown


CONTENT_PX = 820  # the page's column in a 1,280 px window, sidebar open (measured in Chromium)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_examples_module_table_fits_a_1280_px_window(lang):
    """The module table's columns, sized to their text, fit the page's column at 1,280 px:
    its last column (each row's total, the table's point) was cut, behind a scroll hint."""
    for family in (f for f in catalog().families if f.example is not None):
        app = AppTest.from_file(APP, default_timeout=60)
        app.query_params.update({"lang": lang, "md_example": family.id})
        groups = _open(app).dataframe[1]  # the catalog, then the module table
        widths = [c["width"] for c in json.loads(groups.proto.columns).values() if "width" in c]
        assert len(widths) == 6 and sum(widths) + 2 <= CONTENT_PX, (family.id, widths)


def test_presenting_the_catalog_is_html_with_every_family_and_column(app):
    """Presenting, the catalog is an HTML table, whose text follows the projector's type (the
    data grid drew 26 px text in columns sized for 17.5 px at 1,920 × 1,080): every family
    and column of the grid, the family's column first."""
    plain = _open(app).dataframe[0]
    headers = [c["label"] for c in json.loads(plain.proto.columns).values() if "label" in c]
    projected = AppTest.from_file(APP, default_timeout=60)
    projected.query_params.update({"present": "on"})
    shown = _open(projected).table[0].value
    written = [re.sub(r"\\(.)", r"\1", h) for h in shown.columns]  # as Markdown, escaped
    assert written == headers and len(shown) == len(catalog().families)
    assert [re.sub(r"\\(.)", r"\1", f) for f in shown.iloc[:, 0]] == [
        f.name for f in catalog().families
    ]


def test_a_cells_width_is_never_under_what_chromium_draws():
    measured = {  # px in the tables' 14 px Source Sans, as Chromium measured them
        "encoder.layer.{i}.attention.output.LayerNorm": 265,
        "cross-attention input (pre-norm) · decoder": 247,
        "layers.{i}.post_feedforward_layernorm": 227,
        "Module (transformers)": 131,
        "18,432": 39,
        "WWWWWWWWWW": 110,
        "输出层之后的范数": 112,
    }
    for text, px in measured.items():
        assert px <= models_view._text_px(text) <= 1.1 * px, text


def test_families_listed_in_a_chinese_sentence_are_joined_with_the_enumeration_comma():
    """ "model_type 为 `llama` 的配置属于 LLaMA, Llama 2, …": a half-width comma between names
    in a Chinese sentence."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update({"lang": "zh", "md_family": "llama3"})
    _open(app)
    sharing = [f.name for f in catalog().sharing_model_type("llama")]
    said = [c.value for c in app.caption if "model_type 为 `llama`" in c.value]
    assert len(sharing) > 2 and len(said) == 1
    assert "、".join(sharing) in said[0] and ", ".join(sharing[:2]) not in said[0]


def test_the_fusion_sentence_subtracts_and_says_what_its_bytes_leave_out(app):
    """GPT-3 at one token: 23.6 − 18.9 = 4.7 MB in one unit (the bytes were written to three
    digits each: 23.6, 18.9 and 4.72); its gains and biases, as many bytes as the
    activations at one token, are said to be left out."""
    _open(app)
    text = plain(" ".join(m.value for m in app.markdown))
    assert "move 23.6 MB, fused 18.9 MB, so fusing saves 4.7 MB" in text
    metrics = _metrics(app)  # the metric beside it, the same digits
    assert metrics["Fused add + norm saves"] == "4.7 MB"
    assert "MB of activations (their gains and biases not counted)" in text
    assert "**One forward pass** over 1 token in bfloat16" in text  # B × T = 1, not a sequence


@pytest.mark.parametrize(
    "lang, said", [("en", "this text is a JSON array."), ("zh", "而这段文字是一个 JSON 数组。")]
)
def test_a_pasted_array_is_named_by_jsons_word_in_the_pages_language(lang, said):
    app = AppTest.from_file(APP, default_timeout=60)  # opened in ``lang`` from its link
    app.query_params["lang"] = lang
    app.run()
    # AppTest formats a control's options outside the session (in English), so a rerun of a
    # Chinese page's controls fails: the paste is in place before the page's one run
    app.session_state["md_input"] = "paste"
    app.session_state["md_config_text"] = "[1, 2]"
    assert _open(app).error[0].value.endswith(said)


def test_a_layernorm_or_mixture_of_experts_config_the_catalog_lacks_gets_no_counts(app):
    """Phi-2 (LayerNorms with a bias: 2,048 norm parameters a layer, counted 1,792 as RMSNorm)
    and Mixtral (experts left out of 'All parameters': 39.46 M for 53.6 M) were read as Llama
    (the refusals in Chinese: tests/models/test_model_config_json.py)."""
    import transformers

    for config, field in (
        (transformers.PhiConfig(), "layer_norm_eps"),
        (transformers.MixtralConfig(), "num_local_experts"),
    ):
        _paste(_open(app), config.to_json_string())
        assert not app.exception and len(app.error) == 1
        assert f"`{config.model_type}`" in app.error[0].value and field in app.error[0].value
        assert "Norm parameters" not in _metrics(app)


def test_deepseeks_latent_norms_are_said_to_keep_their_own_eps(app):
    """DeepseekV3Attention builds kv_a_layernorm (and q_a_layernorm with a q_lora_rank) with
    eps=1e-6 whatever rms_norm_eps says; the calculator stated the config's ε alone."""
    import torch
    import transformers

    config = transformers.DeepseekV3Config(
        hidden_size=512, num_hidden_layers=3, q_lora_rank=None, rms_norm_eps=1e-5
    )
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    latent = {name.rsplit(".", 1)[-1]: m.variance_epsilon for name, m in model.named_modules()
              if name.endswith("a_layernorm")}  # fmt: skip
    assert latent == {"kv_a_layernorm": 1e-6}  # the oracle: no q_a_layernorm without the rank
    _paste(_open(app), config.to_json_string())
    captions = " ".join(c.value for c in app.caption).replace("\u00a0", " ")
    assert "Its `self_attn.kv_a_layernorm` take ε = 10⁻⁶ whatever the config says" in captions
    assert "q_a_layernorm" not in captions
