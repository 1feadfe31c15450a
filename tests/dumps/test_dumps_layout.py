"""Layout inference from the names tools give: the stream chosen, its order and axes, the
norm pairs found, and the overrides."""

from __future__ import annotations

import pytest
import torch

from engine.config import DumpSpec
from engine.dumps.dump import open_dump
from engine.dumps.names import split_index
from engine.dumps.report import report_bytes
from engine.errors import EngineError
from tests.dumps import dump_files as files


@pytest.mark.parametrize(
    "name, template, index",
    [
        ("hidden_states.12", "hidden_states.{i}", 12),
        ("blocks.3.ln1.hook_normalized", "blocks.{i}.ln1.hook_normalized", 3),
        ("model.layers.4.input_layernorm.output", "model.layers.{i}.input_layernorm.output", 4),
        ("model.transformer.h.11.output.0", "model.transformer.h.{i}.output.0", 11),
        ("layer_03", "layer_{i}", 3),
        ("7", "{i}", 7),
        ("ln_final.hook_normalized", "ln_final.hook_normalized", None),
        ("fc2", "fc2", None),
    ],
)
def test_layer_number_is_a_free_standing_integer(name, template, index):
    assert split_index(name) == (template, index)


def test_transformer_lens_cache(tmp_path):
    x = files.stream()  # 5 points = 4 blocks' resid_pre + the last resid_post
    dump = open_dump(files.write_safetensors(tmp_path / "tl.safetensors", files.tl_names(x)))
    layout = dump.layout
    assert layout.stream == "blocks.{i}.hook_resid_pre"
    assert layout.streams[:2] == ("blocks.{i}.hook_resid_pre", "blocks.{i}.hook_resid_post")
    assert "blocks.{i}.ln1.hook_scale" not in layout.streams  # per-token scales, [B, T, 1]
    assert [s.label for s in layout.layers][-2:] == [
        "blocks.3.hook_resid_pre",
        "blocks.3.hook_resid_post",
    ]
    labels = {pair.label for pair in layout.norm_pairs}
    assert labels == {f"blocks.{i}.ln{k}" for i in range(4) for k in (1, 2)} | {"ln_final"}
    final = next(p for p in layout.norm_pairs if p.label == "ln_final")
    assert final.inputs[0].entry.key == "blocks.3.hook_resid_post"
    ln2 = next(p for p in layout.norm_pairs if p.label == "blocks.1.ln2")
    assert ln2.inputs[0].entry.key == "blocks.1.hook_resid_mid"


def test_transformer_lens_stream_override_to_resid_mid(tmp_path):
    x = files.stream()
    path = files.write_safetensors(tmp_path / "tl.safetensors", files.tl_names(x))
    layout = open_dump(path, DumpSpec(stream="blocks.{i}.hook_resid_mid")).layout
    assert layout.stream_reason == "override" and len(layout.layers) == 4


def test_hf_module_hooks_pair_the_norm_with_its_weight(tmp_path):
    x = files.stream()
    weight = torch.linspace(0.5, 2.0, x.shape[-1])
    path = files.write_safetensors(tmp_path / "hf.safetensors", files.module_names(x, weight))
    layout = open_dump(path).layout
    assert layout.stream == "model.layers.{i}"  # decoder-layer outputs beat norm inputs
    assert [p.label for p in layout.norm_pairs] == [
        f"model.layers.{i}.input_layernorm" for i in range(5)
    ]
    assert all(p.weight is not None and p.weight.shape == (16,) for p in layout.norm_pairs)


def test_nnsight_style_tuple_outputs_are_a_stream(tmp_path):
    x = files.stream()
    tensors = {f"model.transformer.h.{i}.output.0": x[i] for i in range(x.shape[0])}
    layout = open_dump(files.write_pt(tmp_path / "nn.pt", tensors)).layout
    assert layout.stream == "model.transformer.h.{i}.output.0" and len(layout.layers) == 5


def test_hidden_states_beat_other_numbered_entries(tmp_path):
    x = files.stream()
    tensors = files.hf_names(x) | {f"attn_out.{i}": x[i] for i in range(3)}
    layout = open_dump(files.write_pt(tmp_path / "hs.pt", tensors)).layout
    assert layout.stream == "hidden_states.{i}" and layout.stream_reason == "priority"
    assert set(layout.streams) == {"hidden_states.{i}", "attn_out.{i}"}


def test_unknown_stream_lists_the_accepted_ones(tmp_path):
    path = files.write_pt(tmp_path / "hs.pt", files.hf_names(files.stream()))
    with pytest.raises(EngineError) as caught:
        open_dump(path, DumpSpec(stream="blocks.{i}.hook_resid_pre"))
    assert caught.value.key == "dumps.unknown_stream"
    assert "hidden_states.{i}" in str(caught.value)


def test_axes_override_that_does_not_fit_is_refused(tmp_path):
    path = files.write_safetensors(tmp_path / "d.safetensors", {"h": files.stream()})
    with pytest.raises(EngineError) as caught:
        open_dump(path, DumpSpec(axes="LTd"))
    assert caught.value.key == "dumps.axes_mismatch"
    assert "LBTd" in str(caught.value) and "[5, 2, 7, 16]" in str(caught.value)


def test_mixed_shapes_in_one_stream_name_both_entries(tmp_path):
    x = files.stream()
    tensors = files.hf_names(x)
    tensors["hidden_states.2"] = torch.zeros(2, 7, 8)
    with pytest.raises(EngineError) as caught:
        open_dump(files.write_pt(tmp_path / "hs.pt", tensors))
    assert caught.value.key == "dumps.mixed_shapes"
    assert "hidden_states.2" in str(caught.value) and "hidden_states.0" in str(caught.value)


def test_a_broken_candidate_is_skipped_for_a_good_one(tmp_path):
    x = files.stream()
    tensors = files.hf_names(x) | {"hidden_states_extra.0": torch.zeros(7, 16)}
    tensors |= {"hidden_states_extra.1": torch.zeros(7, 9)}  # mixed: never chosen
    layout = open_dump(files.write_pt(tmp_path / "hs.pt", tensors)).layout
    assert layout.stream == "hidden_states.{i}"


def test_digits_glued_to_a_shared_word_are_layers(tmp_path):
    x = files.stream()
    arrays = {f"h{i}": x[i].numpy() for i in range(5)} | {"ln1": x[0].numpy()}
    layout = open_dump(files.write_npz(tmp_path / "h.npz", arrays)).layout
    assert layout.stream == "h{i}" and len(layout.layers) == 5
    assert "ln1" in layout.streams  # alone, a module name stays a name


def test_block_inputs_and_the_last_output_form_the_stream(tmp_path):
    """Hooks on each decoder layer's input and output (what a capture saves): the stream is
    every block's input plus the last block's output, L+1 points like hidden_states."""
    x = files.stream()  # 5 points: 4 blocks
    tensors = {}
    for i in range(4):
        tensors[f"model.layers.{i}.input"] = x[i]
        tensors[f"model.layers.{i}.output"] = x[i + 1]
    tensors["model.norm.input"] = x[4]
    tensors["model.norm.output"] = torch.nn.functional.rms_norm(x[4], (16,))
    tensors["model.norm.weight"] = torch.ones(16)
    layout = open_dump(files.write_safetensors(tmp_path / "cap.safetensors", tensors)).layout
    assert layout.stream == "model.layers.{i}.input"
    assert [s.label for s in layout.layers] == [f"model.layers.{i}.input" for i in range(4)] + [
        "model.layers.3.output"
    ]
    assert [p.label for p in layout.norm_pairs] == ["model.norm"]
    assert layout.norm_pairs[0].weight is not None


def test_per_layer_entries_of_four_axes_are_refused_with_the_shapes_a_layer_takes(tmp_path):
    x = files.stream()
    tensors = {f"hidden_states.{i}": x[i][None] for i in range(5)}  # [1, B, T, d] each
    with pytest.raises(EngineError) as caught:
        open_dump(files.write_safetensors(tmp_path / "d.safetensors", tensors))
    assert caught.value.key == "dumps.per_layer_axes"
    assert "“hidden_states.0” of shape [1, 2, 7, 16]" in str(caught.value)


def test_a_last_block_output_of_another_batch_is_refused_by_its_rows(tmp_path):
    x = files.stream()  # B = 2
    tensors = {f"model.layers.{i}.input": x[i] for i in range(4)}
    tensors["model.layers.3.output"] = torch.zeros(3, 7, 16)  # B = 3
    with pytest.raises(EngineError) as caught:
        open_dump(files.write_safetensors(tmp_path / "d.safetensors", tensors))
    assert caught.value.key == "dumps.mixed_rows"
    assert caught.value.params == {
        "entry": "model.layers.3.output",
        "rows": 21,
        "other": "model.layers.0.input",
        "other_rows": 14,
    }


def test_more_candidate_streams_than_offered_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.layout.MAX_STREAMS", 2)
    x = files.stream()
    tensors = {f"{name}.{i}": x[i] for name in ("a", "b", "c") for i in range(2)}
    with pytest.raises(EngineError) as caught:
        open_dump(files.write_safetensors(tmp_path / "d.safetensors", tensors))
    assert caught.value.key == "dumps.too_many_streams" and caught.value.params["count"] == 3


def test_more_norm_pairs_than_accepted_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.layout.MAX_NORM_PAIRS", 3)
    path = files.write_safetensors(tmp_path / "d.safetensors", files.module_names(files.stream()))
    with pytest.raises(EngineError) as caught:
        open_dump(path)
    assert caught.value.key == "dumps.too_many_norm_pairs" and caught.value.params["count"] == 5


def test_one_numbered_entry_of_four_axes_is_a_stream_of_its_own(tmp_path):
    x = files.stream()  # [L, B, T, d]
    path = files.write_npy(tmp_path / "run_3.npy", x.numpy())  # the entry's name ends in 3
    layout = open_dump(path).layout
    assert layout.stream == "run_3" and layout.axes == "LBTd"
    assert (len(layout.layers), layout.batch, layout.tokens, layout.d) == tuple(x.shape)


def test_a_stream_stored_in_several_dtypes_names_each_in_layer_order(tmp_path):
    """A dump whose layers were stored in float32, float16 and bfloat16 said "float32", the
    first layer's, and predicted a read's memory from it."""
    x = files.stream(layers=4)
    dtypes = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
    named = {f"hidden_states.{i}": x[i].to(dtype) for i, dtype in enumerate(dtypes)}
    dump = open_dump(files.write_safetensors(tmp_path / "mixed.safetensors", named))
    assert dump.layout.dtype == "float32, float16, bfloat16, float64"
    single = open_dump(files.write_safetensors(tmp_path / "one.safetensors", files.hf_names(x)))
    assert single.layout.dtype == "float32"
    assert report_bytes(dump.layout) > report_bytes(single.layout)  # float64's 8 bytes
