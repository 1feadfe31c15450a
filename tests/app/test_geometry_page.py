"""The Geometry page through AppTest: every section renders, the scene holds what it should,
degenerate inputs are explained, bad input is refused with a message, the Vector Lab links here.
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP
from ui.i18n import translate


def _open(query: dict) -> AppTest:
    """A fresh session opening /geometry with ``query`` (English unless it says otherwise)."""
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update({"lang": "en", **query})
    at.switch_page("app_pages/geometry.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _array(value) -> np.ndarray:
    """A plotly JSON array: a list, or {"dtype", "bdata"} (base64 typed array)."""
    if isinstance(value, dict) and "bdata" in value:
        raw = base64.b64decode(value["bdata"])
        data = np.frombuffer(raw, dtype=np.dtype(value["dtype"]))
        return data.reshape(value["shape"]) if "shape" in value else data
    return np.asarray(value, dtype=float)


def _traces(at: AppTest, key: str) -> dict[str, dict]:
    """The traces of the chart whose key contains ``key``, by their meta tag: an
    ``st.plotly_chart`` or a scene drawn by ``ui.plotly_frame`` (its figure in the args)."""
    for chart in at.get("plotly_chart"):
        if chart.proto.id and key in chart.proto.id:
            return {trace.get("meta"): trace for trace in json.loads(chart.proto.spec)["data"]}
    for frame in at.get("component_instance"):
        if key in frame.proto.id:
            figure = json.loads(json.loads(frame.proto.json_args)["spec"])
            return {trace.get("meta"): trace for trace in figure["data"]}
    raise AssertionError(f"no chart with key {key}")


def _points(trace: dict) -> np.ndarray:
    names = [n for n in ("x", "y", "z") if n in trace]
    return np.column_stack([_array(trace[n]) for n in names])


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [w.value for w in at.warning] + [i.value for i in at.info]
    return " ".join(parts)


def test_the_scene_holds_the_sphere_the_plane_the_axis_and_both_norms():
    at = _open({})
    assert at.title[0].value == "Geometry"
    traces = _traces(at, "ge_chart_scene")
    assert {"sphere", "plane", "ones_axis", "layernorm_set", "inputs"} <= set(traces)
    assert {"layernorm", "rmsnorm", "lines_layernorm", "lines_rmsnorm"} <= set(traces)
    assert traces["sphere"]["type"] == "surface" and traces["plane"]["type"] == "surface"
    x = _points(traces["inputs"])
    layer, rms = _points(traces["layernorm"]), _points(traces["rmsnorm"])
    assert x.shape == layer.shape == rms.shape == (500, 3)
    # float64 oracles on the drawn points: LayerNorm's on the plane x + y + z = 0 at length
    # sqrt(3) sigma / sqrt(sigma^2 + eps); RMSNorm's along x at sqrt(3) rms / sqrt(rms^2 + eps)
    np.testing.assert_allclose(layer.sum(axis=1), 0.0, atol=1e-5)
    sigma, root = x.std(axis=1), np.sqrt(np.mean(x**2, axis=1))
    expected = math.sqrt(3) * sigma / np.sqrt(sigma**2 + 1e-5)
    np.testing.assert_allclose(np.linalg.norm(layer, axis=1), expected, rtol=1e-5)
    np.testing.assert_allclose(rms, x / np.sqrt(root**2 + 1e-5)[:, None], rtol=1e-5, atol=1e-6)
    assert "lie **on the sphere**, wherever the inputs' directions point" in _text(
        at
    ) and "on the circle" in _text(at)


def test_the_lines_and_the_outputs_shown_follow_the_toggles():
    at = _open({})
    at.toggle(key="ge_lines").set_value(False).run()
    at.pills(key="ge_show").set_value(["dyt"]).run()
    assert not at.exception
    traces = _traces(at, "ge_chart_scene")
    assert "dyt" in traces and "layernorm" not in traces and "rmsnorm" not in traces
    assert not any(uid.startswith("lines_") for uid in traces)
    assert at.query_params["ge_show"] == "dyt" and at.query_params["ge_lines"] == "false"


def test_d2_says_layernorm_has_two_outputs_and_counts_them():
    at = _open({"ge_d": "2", "ge_eps": "0"})
    warning = " ".join(w.value for w in at.warning)
    assert "at ε = 0 onto just two points of it" in warning
    notes = " ".join(i.value for i in at.info)
    assert "With d = 2 and ε = 0" in notes and "has only two outputs" in notes
    traces = _traces(at, "ge_chart_scene")
    layer = _points(traces["layernorm"])
    assert layer.shape == (500, 2)
    # at eps = 0 every output is +-(1, -1) up to float32 rounding of x1 - x2
    np.testing.assert_allclose(np.abs(layer), 1.0, atol=1e-3)
    np.testing.assert_allclose(layer.sum(axis=1), 0.0, atol=1e-3)
    plus = int(np.sum(layer[:, 0] > 0))
    assert f"{plus} landed on [1, −1] and {500 - plus} on [−1, 1]" in warning
    assert "0 were 0/0" in warning


def test_d1_and_constant_vectors_are_explained():
    at = _open({"ge_d": "1"})
    text = _text(at)
    assert "LayerNorm returns β for every input" in text
    assert "the sign of x" in text
    at = _open({"ge_dist": "constant", "ge_shift": "2", "ge_eps": "0"})
    assert "LayerNorm computes 0/0" in _text(at)
    assert "layernorm" in _traces(at, "ge_chart_scene")  # NaN outputs are left out, no crash


def test_one_vector_step_by_step():
    at = _open({"ge_section": "vector"})
    latex = " ".join(block.value for block in at.get("latex"))
    assert r"\mu = \frac{\langle x, \mathbf{1}\rangle}{d} = 3" in latex
    assert r"x - \mu\mathbf{1} = \left[-2, -1, 3\right]" in latex
    traces = _traces(at, "ge_chart_path")
    assert {"drop", "point_centered", "point_layernorm", "point_rmsnorm"} <= set(traces)
    centered = _points(traces["point_centered"])[0]
    np.testing.assert_allclose(centered, [-2.0, -1.0, 3.0])
    rms = _points(traces["point_rmsnorm"])[0]
    x = np.array([1.0, 2.0, 6.0])
    np.testing.assert_allclose(rms, x / np.sqrt(np.mean(x**2) + 1e-5), rtol=1e-6)


def test_the_one_vector_dyt_step_takes_the_links_alpha():
    """ge_alpha=2 was dropped on this section: its DyT step said and computed α = 0.5."""
    at = _open({"ge_section": "vector", "ge_alpha": "2"})
    assert "DyT with α = 2, for comparison" in _text(at).replace("\u00a0", " ")
    latex = " ".join(block.value for block in at.get("latex"))
    y = np.tanh(2.0 * np.array([1.0, 2.0, 6.0]))  # the typed default (1, 2, 6)
    assert rf"\lVert\tanh(\alpha x)\rVert = {np.linalg.norm(y):.4f}" in latex


@pytest.mark.parametrize(
    "typed, expected",
    [
        ("0, 0, 0", "The input is the zero vector"),  # one vector: in the singular
        (", ".join(["1"] * 5_000), "The input is a constant vector: x − μ·1 = 0"),
        ("1, 2, 3, 4, 5", "This vector has 5 numbers"),
        ("1, zz", "zz"),
        # one vector: its entry's position alone, as for NaN below, never "row 1"
        ("1e300, 2e300, 6e300", "(position 1) cannot be stored in float32"),
        ("1e-300, 2e-300, 6e-300", "(position 1). The smallest positive float32"),
        ("1, 2\n3, 4", "Give one vector here (2 rows were typed)"),
        ("1e16, 1", "Entry 1 = `1e+16` is not accepted"),  # the typed text as a literal
        # this page has no dtype and no random generator: the advice names where they are
        ("1, nan, 2", "`nan` (position 2) is not a finite number. NaN and infinity are not "),
        ("1, nan, 2", "open the Vector Lab and pick float16"),
        (", ".join(["1"] * 8_193), "at most 8,192 are accepted here. For wide random inputs, open"),
    ],
)
def test_typed_vectors_are_explained_or_refused(typed, expected):
    at = _open({"ge_section": "vector", "ge_vector": typed})
    shown = _text(at) + " ".join(e.value for e in at.error)
    assert expected in shown


def test_an_emptied_box_asks_for_what_the_picture_takes():
    """It suggested the Vector Lab's "1, 2, 3, 4", which the picture cannot draw."""
    at = _open({"ge_section": "vector"})
    at.text_input(key="ge_vector").input("").run()
    assert [e.value for e in at.error] == [
        "The input is empty. Type two or three numbers for a picture, e.g. 1, 2, 6."
    ]


def test_a_refused_vector_is_explained_in_chinese_with_this_pages_advice():
    at = _open({"ge_section": "vector", "ge_vector": "1, inf", "lang": "zh"})
    (refusal,) = [e.value for e in at.error]
    assert refusal.startswith("`inf`（第 2 个）不是有限数") and "请打开向量实验室" in refusal


def test_eps_section_draws_the_formula_with_the_measured_norms():
    at = _open({"ge_section": "eps", "ge_spread": "0.003"})
    traces = _traces(at, "ge_chart_eps_curve")
    assert {"formula", "layernorm", "rmsnorm", "sweep_layernorm", "sweep_rmsnorm"} <= set(traces)
    # independent check of the closed form: sqrt(3) s / sqrt(s^2 + 1e-5)
    s, y = _array(traces["formula"]["x"]), _array(traces["formula"]["y"])
    np.testing.assert_allclose(y, math.sqrt(3) * s / np.sqrt(s**2 + 1e-5), rtol=1e-12)
    assert "agree with the formula" in _text(at)


def test_the_sliders_label_their_stops_as_the_page_writes_numbers():
    """ε = 10⁻⁵ on the slider as in the text beside it, never Python's "1e-05"."""
    at = _open({"ge_section": "eps"})
    eps, spread = at.select_slider(key="ge_eps"), at.select_slider(key="ge_spread")
    assert "10⁻⁵" in eps.options and "10⁻⁸" in eps.options and "0.1" in eps.options
    assert "0.003" in spread.options and "100" in spread.options
    assert not [o for o in eps.options + spread.options if "e" in o]
    at = _open({"ge_section": "dyt"})
    assert at.select_slider(key="ge_alpha").options[:2] == ["0.05", "0.1"]


def test_affine_section_shows_both_parameterisations_as_one_shape():
    at = _open({"ge_section": "affine", "ge_gamma_x": "2", "ge_beta_y": "0.5"})
    table = at.table[0].value
    assert list(table["γ"]) == ["2", "1", "1"]
    assert list(table[translate("geometry.affine.gemma_column", "en")]) == ["1", "0", "0"]
    assert list(table.index) == ["x₁", "x₂", "x₃"]  # the sliders' and the scene's names
    assert "— one shape" in _text(at)
    traces = _traces(at, "ge_chart_affine")
    assert {"ellipsoid", "gemma", "layernorm_ellipse", "layernorm"} <= set(traces)


def test_dyt_section_draws_the_box_and_the_norms_against_alpha():
    at = _open({"ge_section": "dyt", "ge_alpha": "20"})
    assert "cube" in _traces(at, "ge_chart_dyt_scene")
    assert {"median", "band", "saturated"} <= set(_traces(at, "ge_chart_dyt_norms"))
    assert "of the entries are saturated" in _text(at)
    assert "ge_eps" not in {w.key for w in at.get("select_slider")}  # DyT has no ε
    at = _open({"ge_section": "dyt", "ge_eps": "0.01"})
    assert at.query_params["ge_eps"] == "0.01" and not at.warning  # kept for the other sections


def test_high_dimension_histograms_and_the_identity_check():
    at = _open({"ge_section": "high", "ge_wide_d": "64", "ge_shift": "1"})
    histograms = _traces(at, "ge_chart_histograms")
    assert {"layernorm_1", "rmsnorm_2", "dyt_3"} <= set(histograms)
    labels = [m.label for m in at.metric]
    assert "max difference, float32" in labels and "max difference, float64" in labels
    float32 = next(m.value for m in at.metric if m.label == "max difference, float32")
    assert "e-" not in float32 and f"= {float32} in float32" in _text(at)  # as its sentence
    assert "is float32 rounding" in _text(at) or "That is float32 rounding" in _text(at)
    assert "ge_chart_plane_view" in " ".join(c.proto.id for c in at.get("plotly_chart"))


def test_an_axis_beyond_d_is_said_and_the_boxes_offer_the_clouds_axes_only():
    """The boxes accepted 0 to 8,191 whatever d, and the view then refused what they took."""
    at = _open({"ge_section": "high", "ge_wide_d": "4", "ge_view": "axes", "ge_axis_b": "9"})
    warned = " ".join(w.value for w in at.warning).replace("\u00a0", " ")
    assert "`ge_axis_b` = 9 is past the end of this view, whose last value for it is 3" in warned
    assert at.number_input(key="ge_axis_b").value == 3 and not at.error
    assert "Accepted: 0 to 3." in at.number_input(key="ge_axis_a").help
    at.number_input(key="ge_axis_a").set_value(3).run()  # the same axis twice: the engine's
    refused = " ".join(e.value for e in at.error).replace("\u00a0", " ")
    assert "Both axes are 3" in refused and "two different axes from 0 to 3" in refused


def test_real_activations_from_the_shipped_dump():
    at = _open({"ge_section": "real", "ge_pair": "1"})
    text = _text(at)
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in text and "dequantized" in text
    assert "4 tokens far out" in text  # block 12: the four prompts' first tokens
    traces = _traces(at, "ge_chart_real_outputs")
    assert {"stored_1", "rmsnorm_1", "layernorm_2"} <= set(traces)


def test_a_norm_beyond_the_dump_is_said_and_the_last_is_shown():
    at = _open({"ge_section": "real", "ge_pair": "40"})
    assert "showing the last" in " ".join(w.value for w in at.warning)
    assert at.selectbox(key="ge_pair").value == 4


def test_hostile_values_in_the_link_are_refused_by_name():
    at = _open({"ge_d": "7", "ge_eps": "banana", "ge_count": "-1"})
    warnings = " ".join(w.value for w in at.warning)
    for key in ("ge_d", "ge_eps", "ge_count"):
        assert key in warnings
    assert _traces(at, "ge_chart_scene")  # the page still draws its defaults


def test_the_chinese_page_is_translated():
    at = _open({"lang": "zh", "ge_d": "2"})
    assert at.title[0].value == "几何"
    assert "ε = 0 时只送到其上的两个点" in " ".join(w.value for w in at.warning)


@pytest.mark.parametrize("lang, said", [("en", "With ε > 0 the outputs are not just two points"),
                                        ("zh", "ε > 0 时输出不止两个点")])  # fmt: skip
def test_d2_with_eps_says_near_equal_pairs_land_between_the_two_points(lang, said):
    at = _open({"lang": lang, "ge_d": "2", "ge_eps": "0.1", "ge_spread": "0.3"})
    notes = " ".join(i.value for i in at.info)
    assert said in notes
    assert "has only two outputs" not in notes and "只有两个输出" not in notes
    layer = _points(_traces(at, "ge_chart_scene")["layernorm"])
    inside = np.abs(layer[:, 0]) < 0.9  # drawn between the two points, as the note says
    assert inside.any()


def test_the_vector_lab_links_a_row_of_three_numbers_here():
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update({"lang": "en", "vl_text": "3, 1, 2"})
    at.run()
    links = at.get("page_link")
    assert len(links) == 1 and links[0].proto.page == "geometry"
    assert links[0].proto.query_string == "lang=en&ge_section=vector&ge_vector=3%2C+1%2C+2"
    assert "is not among Geometry's" not in links[0].proto.help
    at.text_area(key="vl_text").input("1, 2, 3, 4").run()
    assert not at.get("page_link")  # four numbers: no picture to open


def test_the_geometry_link_says_what_it_cannot_carry():
    """ε = 0.3 is not on Geometry's menu (it opened at 10⁻⁵ without a word), and a bfloat16
    row is recomputed there in float32."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update(
        {"lang": "en", "vl_text": "3, 1, 2", "vl_eps": "0.3", "vl_dtype": "bfloat16"}
    )
    at.run()
    (link,) = at.get("page_link")
    assert "ε = 0.3 is not among Geometry's" in link.proto.help.replace("\u00a0", " ")
    assert "the bfloat16 rounding of this page's results is not" in link.proto.help


@pytest.mark.slow  # the widest cloud
def test_the_widest_high_dimension_link_draws_without_a_click():
    """d = 8,192 and 2,000 inputs: bounded to 512 rows, about 11x the work of the section's
    default (d = 768, 500 inputs), within the 20x a page starts on its own."""
    at = _open({"ge_section": "high", "ge_wide_d": "8192", "ge_count": "2000"})
    charts = " ".join(c.proto.id for c in at.get("plotly_chart"))
    assert "ge_chart_histograms" in charts and "ge_chart_plane_view" in charts
    assert not at.button


@pytest.mark.parametrize("section", ["scene", "high"])
def test_a_cloud_of_zero_vectors_says_every_input_is_one_and_writes_no_nan(section):
    """Spread 0, the slider's first stop: "|cos(y, 1)| ≤ NaN. That is float32 rounding",
    "cos(x, RMSNorm(x)) = NaN for every input: every output keeps its input's direction" and
    "Some inputs are the zero vector", of a cloud of nothing else."""
    at = _open({"lang": "en", "ge_section": section, "ge_spread": "0"})
    shown = [m.value for m in at.markdown] + [i.value for i in at.info]
    shown += [c.value for c in at.caption]
    text = " ".join(shown)
    assert "Every input is the zero vector" in text and "Some inputs" not in text
    assert "NaN" not in text and "float32 rounding" not in text
    assert "keeps its input's direction" not in text


def test_no_cosine_is_written_above_1():
    """RMSNorm's outputs are parallel to their inputs: "from 1 − 1.1×10⁻¹⁵ to 1 + 2.2×10⁻¹⁶"
    claimed a cosine no two vectors have."""
    at = _open({"lang": "en"})
    text = " ".join(m.value for m in at.markdown)
    assert "cos(x, RMSNorm(x))" in text and "1 + " not in text
