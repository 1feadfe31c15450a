"""ui.text.geometry and geometry_high: the sentences carry the engine's numbers, checked against
float64 hand computations, in both languages; every degeneracy flag has a translation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from engine.config import GeometrySpec
from engine.geometry.cloud import normalized_cloud
from engine.geometry.degenerate import FLAGS
from engine.geometry.eps_curve import eps_curve
from engine.geometry.high_dimension import high_dimension_report
from engine.geometry.meshes import ellipsoids
from engine.geometry.path import vector_path
from engine.geometry.real_activations import real_activations
from engine.geometry.scene import build_scene
from tests.plain_text import plain
from ui.formatting import format_number, format_reading, literal
from ui.i18n import LANGUAGES, catalog, translate
from ui.text import geometry as text
from ui.text import geometry_high as text_high


def test_path_steps_write_the_mean_the_drop_and_the_cosines():
    x = np.array([1.0, 2.0, 6.0])
    steps = text.path_steps(vector_path(tuple(x), GeometrySpec(eps=0.0)), 0.0, 0.5, "en")
    latex = " ".join(step.latex for step in steps)
    assert r"\mu = \frac{\langle x, \mathbf{1}\rangle}{d} = 3" in latex
    assert r"x - \mu\mathbf{1} = \left[-2, -1, 3\right]" in latex
    sigma, rms = x.std(), math.sqrt(np.mean(x**2))  # float64 by hand
    assert rf"\sigma/\mathrm{{rms}} = {format_number(sigma / rms)}" in latex
    assert rf"\cos(x, \mathrm{{LN}}(x)) = {format_number(sigma / rms)}" in latex
    assert r"\cos(x, \mathrm{RMSNorm}(x)) = 1" in latex
    assert plain(steps[0].caption).startswith("The input, d = 3")
    assert all(step.latex.startswith(r"\begin{gathered}") for step in steps)


def test_a_zero_vector_writes_nan_instead_of_failing():
    steps = text.path_steps(vector_path((0.0, 0.0), GeometrySpec(eps=0.0)), 0.0, 0.5, "zh")
    assert r"\text{NaN}" in " ".join(step.latex for step in steps)


def test_cloud_summary_reports_lengths_and_layernorms_rounding():
    cloud = normalized_cloud(GeometrySpec(d=3, count=200, shift=1.0))
    lines = text.cloud_summary(cloud, ("layernorm", "rmsnorm", "dyt"), "en")
    joined = plain(" ".join(lines))
    assert f"√d = {format_number(math.sqrt(3))}" in joined
    largest = np.abs(cloud.layernorm.ones).max()
    assert f"the largest measured is {format_reading(largest)}" in joined
    assert "DyT at α = 0.5" in joined


def test_a_cloud_of_one_vector_repeated_is_no_spread_for_dyt():
    """Spread 0: every input is shift·1, so DyT's outputs are one vector repeated; the page
    said "lengths spread out" of them."""
    cloud = normalized_cloud(GeometrySpec(d=3, count=50, spread=0.0, shift=1.0))
    assert np.all(cloud.inputs == cloud.inputs[0])
    lines = plain(" ".join(text.cloud_summary(cloud, ("dyt",), "en")))
    assert "every output has the same length" in lines and "spread out" not in lines


def test_a_range_whose_ends_read_the_same_is_said_as_one_value():
    """With ε = 0 every output of a 3-D cloud has ‖y‖ = √3 to four places: said once, "for
    every input", not "from 1.7321 to 1.7321"; with ε = 10⁻⁵ the lengths do vary."""
    for eps, said in ((0.0, "‖y‖ = 1.7321 for every input"), (1e-5, "‖y‖ from 1.7")):
        cloud = normalized_cloud(GeometrySpec(d=3, count=200, eps=eps))
        lines = plain(" ".join(text.cloud_summary(cloud, ("layernorm", "rmsnorm"), "en")))
        assert f"LayerNorm: {said}" in lines and f"RMSNorm: {said}" in lines


def test_ones_rounding_is_the_cosine_with_ones_and_the_magnification():
    ones = np.array([1e-6, -3e-6])
    norm = np.array([2.0, 2.0])
    cos_input = np.array([0.5, 0.25])
    found = text.ones_rounding(ones, norm, cos_input, d=4)
    assert found["ones"] == "3×10⁻⁶"  # as a cosine's gap is written, never "3e-06"
    assert found["cos_ones"] == "7.5×10⁻⁷"  # 3e-6 / (2 · √4)
    assert found["ratio"] == "4"  # 1 / cos(x, y): rms / sigma


@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_two_dimensions_counts_add_up(eps):
    two = build_scene(GeometrySpec(d=2, count=400, eps=eps)).two_d
    sentence = text.two_dimensions_summary(two, "en")
    t = np.asarray(two.coefficient)
    plus, minus = int(np.sum(t >= 1 - 1e-3)), int(np.sum(t <= -(1 - 1e-3)))
    assert f"{plus} landed on [1, −1] and {minus} on [−1, 1]" in sentence
    inside = 400 - plus - minus
    assert f"; {inside} were pulled in" in sentence
    if eps == 0:
        assert inside == 0  # no eps, no pull: only the two points


def test_eps_summary_names_the_knee_at_sqrt_d_over_2():
    curve = eps_curve(GeometrySpec(d=3, count=100, eps=1e-4))
    sentence = plain(text.eps_summary(curve, "en"))
    assert f"√(d/2) = {format_number(math.sqrt(3 / 2))}" in sentence
    assert f"√ε = {format_number(0.01)}" in sentence
    x = (1.0, 2.0, 6.0)
    steps = text.path_steps(vector_path(x, GeometrySpec(eps=1e-5)), 1e-5, 0.5, "en")
    assert "with ε = 10⁻⁵." in plain(" ".join(step.caption for step in steps))  # not 1e-05
    zero = plain(text.eps_summary(eps_curve(GeometrySpec(d=3, count=100, eps=0.0)), "zh"))
    assert "ε = 0" in zero


def test_affine_table_and_summary_write_gamma_as_gemma_stores_it():
    e = ellipsoids(GeometrySpec(d=3, gamma_x=2.0, gamma_y=0.5, beta_z=1.0))
    table = text.affine_table(e, "en")
    gemma = translate("geometry.affine.gemma_column", "en")
    assert table["γ"] == ["2", "0.5", "1"] and table[gemma] == ["1", "−0.5", "0"]
    assert text.affine_table(e, "zh")[gemma] == ["1", "−0.5", "0"]
    summary = text.affine_summary(e, 3, "en")
    axes = [2 * math.sqrt(3), 0.5 * math.sqrt(3), math.sqrt(3)]
    assert "[" + ", ".join(format_number(a) for a in axes) + "]" in summary
    assert "one shape" in summary


def test_dyt_summary_counts_saturated_entries():
    cloud = normalized_cloud(GeometrySpec(d=3, count=200, dyt_alpha=20.0))
    share = np.mean(np.abs(np.tanh(20.0 * cloud.inputs)) > 0.99)  # float64 by hand
    assert f"{100 * share:.0f}\u00a0% of the entries" in text.dyt_summary(cloud, "en")


@pytest.mark.parametrize("inputs", [1, 500])
@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_every_degeneracy_flag_is_translated(lang, inputs):
    notes = text.degenerate_notes(FLAGS, lang, inputs)
    assert len(notes) == len(FLAGS)
    assert not any(note.startswith("geometry.") for note in notes)
    assert all(f"geometry.degenerate.{key}" in catalog(lang) for key in FLAGS)


@pytest.mark.parametrize("vector", [(1.0,) * 5_000, (0.0,) * 3])
def test_a_degenerate_vector_typed_alone_is_spoken_of_in_the_singular(vector):
    for eps in (0.0, 1e-5):
        flags = vector_path(vector, GeometrySpec(eps=eps), threads=1).flags
        english = " ".join(text.degenerate_notes(flags, "en", 1))
        assert english.startswith("The input is") and "Some inputs" not in english
        assert "for them" not in english
        chinese = " ".join(text.degenerate_notes(flags, "zh", 1))
        assert chinese.startswith("输入是") and "有些" not in chinese and "它们" not in chinese
    many = text.degenerate_notes(("layernorm_constant_is_beta",), "en", 500)
    assert many[0].startswith("Some inputs are constant vectors")


def test_high_dimension_lines_and_the_identity_in_both_languages():
    report = high_dimension_report(GeometrySpec(d=256, count=100, shift=1.0), threads=1)
    for lang in LANGUAGES:
        lines = text_high.measure_lines(report, lang)
        assert len(lines) == 4 and all("{" not in line for line in lines)
    english = plain(" ".join(text_high.identity_lines(report.identity, "en")))
    assert format_reading(report.identity.max_abs_difference) in english
    # "a few units in the last place" is counted: the difference over float32's spacing there
    ulp = np.spacing(np.float32(report.identity.max_abs_output))
    ulps = report.identity.max_abs_difference / float(ulp)
    assert f"is {format_number(ulps, 1)} units in the last place of the largest output" in english
    note = plain(text_high.sample_note(report, 100, "en"))
    assert note == "100 random inputs of width d = 256."


@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_a_cloud_of_constant_vectors_in_high_dimension_measures_no_direction(eps):
    """Spread 0, d = 64: every input is a constant vector.  The lines said "cos(x, y)
    undefined for every input: below 1 when the inputs have a mean" and, at ε = 0,
    "|⟨y, 1⟩| at most NaN"; the identity check said every output was 0 where each is 0/0
    (F.layer_norm's own NaN)."""
    import torch

    report = high_dimension_report(GeometrySpec(d=64, count=50, spread=0.0, eps=eps), threads=1)
    for lang in LANGUAGES:
        lines = text_high.measure_lines(report, lang)
        assert len(lines) == 3 and all("NaN" not in line and "{" not in line for line in lines)
    english = plain(" ".join(text_high.measure_lines(report, "en")))
    assert english.count("are not measured") == 3 and "below 1 when" not in english
    identity = plain(" ".join(text_high.identity_lines(report.identity, "en")))
    outputs = torch.nn.functional.layer_norm(torch.full((1, 64), 0.37), (64,), eps=eps)
    if eps == 0:  # the metrics above the sentence say nothing was compared, as it does
        assert outputs.isnan().all() and "every output is NaN" in identity
        found = report.identity
        assert math.isnan(found.max_abs_difference) and math.isnan(found.max_abs_difference_float64)
    else:
        assert (outputs == 0).all() and "where every output is 0" in identity
        assert "agree exactly" in identity and "so they round differently" not in identity


def test_a_bounded_sample_says_how_many_were_drawn():
    report = high_dimension_report(GeometrySpec(d=8192, count=2000), (0.0,), threads=1)
    note = text_high.sample_note(report, 2000, "en")
    assert "512 random inputs" in note and "2,000 were asked for" in note


def test_real_activation_lines_say_far_out_only_where_a_token_is():
    real = real_activations()
    block0, block12 = real.pairs[0], real.pairs[1]
    assert block12.label == "model.layers.12.input_layernorm"
    assert "massive activations" in text_high.pair_lines(block12, "en")[0]
    # the first token of each of the four prompts ("one token far out" was said of them)
    norms = block12.inputs.norm
    far = int((norms >= 10 * np.median(norms)).sum())
    assert far == 4 and f"{far} tokens far out" in text_high.pair_lines(block12, "en")[0]
    assert "massive activations" not in text_high.pair_lines(block0, "en")[0]
    intro = text_high.real_intro(real, "zh")
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in intro and "反量化" in intro


def test_real_activation_lines_never_understate_or_repeat_a_range():
    real = real_activations()
    block0, final = real.pairs[0], real.pairs[-1]
    stored, recomputed = (
        line.replace("\xa0", " ") for line in text_high.pair_lines(final, "en")[1:3]
    )
    # every recomputed ‖y‖ of the final norm reads 24.0000: said once, not "from 24.0000 to 24.0000"
    assert "= 24.0000 for every input" in recomputed and "24.0000 to 24.0000" not in recomputed
    # its γ has two negative entries: they reverse their axes (cos(x, y) down to 0.2105)
    assert int((final.weight < 0).sum()) == 2 and "negative on 2 of the 576 axes" in stored
    assert "negative" not in text_high.pair_lines(real.pairs[1], "en")[1]  # γ > 0 throughout
    # "stays below" a bound rounded up: the largest |⟨LayerNorm(x), 1⟩| is under it
    for pair in real.pairs:
        said = text_high.pair_lines(pair, "en")[2].rsplit("stays below ", 1)[1].rstrip(".")
        mantissa, power = said.split("×10")
        bound = float(mantissa) * 10 ** -int(
            power.translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789 "))
        )
        assert bound >= text_high.largest_abs(pair.recomputed["layernorm"].ones), said
    assert "γ 有 271 个为负" in text_high.pair_lines(block0, "zh")[1]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_real_intro_shows_a_dumps_model_and_dtype_literally_never_as_markdown(lang):
    """The model and storage dtype are the file's metadata: a link or markup in them is shown
    as typed (a code span), as on the dumps page; a dtype a capture writes stays a word."""
    hostile = dataclasses.replace(
        real_activations(), model="[x](javascript:alert(1)) <b>", storage_dtype="**bf16**"
    )
    intro = text_high.real_intro(hostile, lang)
    assert literal("[x](javascript:alert(1)) <b>") in intro and literal("**bf16**") in intro
    assert "](javascript" not in intro.replace(literal("[x](javascript:alert(1)) <b>"), "")
    plain = text_high.real_intro(dataclasses.replace(hostile, storage_dtype="float16"), lang)
    assert "float16" in plain and "`float16`" not in plain


def test_the_intro_puts_layernorms_outputs_on_a_sphere_of_radius_sqrt_d_not_a_smaller_one():
    """The plane <y, 1> = 0 passes through the centre: it cuts the √d sphere in a great
    (d − 2)-sphere, as large as the sphere itself, one dimension lower."""
    cloud = normalized_cloud(GeometrySpec(d=3, count=400, eps=0.0))
    layer, rms = cloud.layernorm, cloud.rmsnorm
    np.testing.assert_allclose(layer.norm, cloud.sqrt_d, rtol=1e-5)  # the same radius ...
    np.testing.assert_allclose(rms.norm, cloud.sqrt_d, rtol=1e-5)
    np.testing.assert_allclose(layer.ones, 0.0, atol=1e-4)  # ... on the plane through 0
    assert np.linalg.matrix_rank(layer.y, tol=1e-3) == 2  # one dimension lower: a circle
    for lang in LANGUAGES:
        intro = catalog(lang)["geometry.intro"]
        assert "√d" in intro, lang
        assert "smaller sphere" not in intro and "更小的球面" not in intro, lang


GEMMA_WEIGHT = (r"\gamma_{\mathrm{Gemma}}", "γ<sub>Gemma</sub>")  # in $math$, in a chart


@pytest.mark.parametrize("lang", LANGUAGES)
def test_gemma_weight_is_gamma_with_a_gemma_subscript_wherever_the_affine_section_names_it(lang):
    """The γ and β section shows the standard γ and Gemma's stored weight side by side, so
    Gemma's is always γ_Gemma (still γ, as in the Gemma lesson's 1 + γ and Hugging Face's
    ``weight``), never a bare γ: "Gemma's γ = γ − 1" read as one letter for two weights."""
    texts = [
        translate(key, lang)
        for key in (
            "geometry.lead_affine",
            "geometry.affine.intro",
            "geometry.affine.gemma_column",
            "geometry.trace.gemma",
        )
    ]
    assert all(any(name in line for name in GEMMA_WEIGHT) for line in texts)
    for line in texts:
        bare = line
        for name in GEMMA_WEIGHT:
            bare = bare.replace(name, "W")
        assert not any(
            clash in bare for clash in ("1 + γ", "1 + \\gamma", "的 γ", "'s γ", "weight γ")
        )
    relation = r"\gamma_{\mathrm{Gemma}} = \gamma - 1"
    assert all(relation in line for line in texts[:3])  # lead, intro and the table's column
    assert "1 + γ" in translate("lessons.gemma_offset.title", lang)


def test_the_high_dimension_lengths_at_the_default_eps_are_said_once_not_as_a_range():
    """At d = 768 every LayerNorm and RMSNorm output has ‖y‖ = 27.7127 to four places: "from
    27.7127 to 27.7127 (median 27.7127)" said nothing a single value does not."""
    report = high_dimension_report(GeometrySpec(d=768, count=300), threads=1)
    lines = [plain(line) for line in text_high.measure_lines(report, "en")]
    for name in ("LayerNorm", "RMSNorm"):
        line = next(line for line in lines if line.startswith(f"**{name}**"))
        assert f"**{name}**: ‖y‖ = 27.7127 for every input, √d = 27.7128" in line
    dyt = next(line for line in lines if line.startswith("**DyT**"))
    assert "‖y‖ from" in dyt and "(median" in dyt  # DyT's lengths do spread


def test_two_dimensions_counts_only_constant_inputs_as_sitting_at_beta():
    """Spread 0.001 around 5: entries that differ by ~10⁻⁶ land within 10⁻³ of β, pulled in by
    ε, but only an input whose two entries are equal is constant."""
    spec = GeometrySpec(d=2, spread=0.001, shift=5.0)
    inputs = normalized_cloud(spec).inputs
    constant = int(np.sum(inputs[:, 0] == inputs[:, 1]))
    two = build_scene(spec).two_d
    assert np.sum(np.abs(two.coefficient) <= 1e-3) > constant  # near β, yet not constant
    sentence = text.two_dimensions_summary(two, "en")
    assert f"{constant} sat at β (constant inputs)" in sentence
    constant_cloud = build_scene(GeometrySpec(d=2, spread=0.0, shift=5.0)).two_d
    assert f"{len(constant_cloud.coefficient)} sat at β" in text.two_dimensions_summary(
        constant_cloud, "en"
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_centred_cloud_is_not_said_to_magnify_the_rounding(lang):
    """Shift 0 at d = 768: rms/σ = 1/cos(x, y) reads 1.0, so no "magnifies it by rms/σ (up to
    1.0)"; shifted by 30, the magnification is real and named."""
    centred = high_dimension_report(GeometrySpec(d=768, count=100, shift=0.0), threads=1)
    lines = plain(" ".join(text_high.measure_lines(centred, lang)))
    ratio = float(np.nanmax(1 / np.abs(centred.histograms.layernorm.cos_input)))
    assert round(ratio, 1) == 1.0
    magnifies = {"en": "magnifies it by rms/σ", "zh": "又把它放大 rms/σ 倍"}[lang]
    assert magnifies not in lines and "rms/σ" in lines
    shifted = high_dimension_report(GeometrySpec(d=768, count=100, shift=30.0), threads=1)
    assert magnifies in plain(" ".join(text_high.measure_lines(shifted, lang)))


@pytest.mark.parametrize(("eps", "said"), [(1e-5, "divides by √ε, near enough"), (0.0, "±∞")])
def test_a_statistic_float32_could_not_square_is_said_in_its_step(eps, said):
    path = vector_path((1e-30, 2e-30, 3e-30), GeometrySpec(eps=eps))
    steps = [plain(step.caption) for step in text.path_steps(path, eps, 0.5, "en")]
    assert "In float32, σ² comes out 0 here" in steps[2] and said in steps[2]
    assert "In float32, rms² comes out 0 here" in steps[4] and said in steps[4]
    zh = " ".join(step.caption for step in text.path_steps(path, eps, 0.5, "zh"))
    assert "平方小于 float32" in zh
    healthy = vector_path((1.0, 2.0, 6.0), GeometrySpec(eps=eps))
    assert "float32" not in " ".join(s.caption for s in text.path_steps(healthy, eps, 0.5, "en"))


def test_squares_a_few_subnormal_steps_from_exact_are_said_too():
    """1e-23, 4e-23, -3e-23: σ² = 8.2×10⁻⁴⁶ exactly, 1.4×10⁻⁴⁵ in float32 (one subnormal
    step): not 0, but no digit of it is right."""
    path = vector_path((1e-23, 4e-23, -3e-23), GeometrySpec(eps=1e-5))
    assert 0 < path.op_variance and abs(path.op_variance - path.sigma**2) > 0.5 * path.sigma**2
    step = plain(text.path_steps(path, 1e-5, 0.5, "en")[2].caption)
    assert f"σ² comes out {format_reading(path.op_variance)} here, against " in step


def test_the_rmsnorm_step_gives_the_length_eps_leaves_not_only_the_sphere():
    """x = (1, 2, 3, 4, 5) at ε = 0.1: F.rms_norm's output has length 2.2260, not √5 = 2.2361;
    the step says √d·rms/√(rms² + ε) and writes that value beside √d."""
    import torch
    import torch.nn.functional as F

    x = (1.0, 2.0, 3.0, 4.0, 5.0)
    length = float(F.rms_norm(torch.tensor(x, dtype=torch.float64), (5,), eps=0.1).norm())
    assert f"{length:.4f}" == "2.2260"  # √5·√11/√11.1, by hand
    steps = text.path_steps(vector_path(x, GeometrySpec(eps=0.1)), 0.1, 0.5, "en")
    (rms,) = [s for s in steps if s.caption.startswith("RMSNorm skips the drop")]
    assert "√d·rms/√(rms² + ε)" in rms.caption
    assert r"\sqrt{\mathrm{rms}^2+\varepsilon}} = 2.2260" in rms.latex and "2.2361" in rms.latex


def test_layernorm_cosines_rounded_away_from_sigma_over_rms_say_both():
    """Shift 5, spread 0.001, ε = 0: σ/rms runs from 5.2×10⁻⁶ to 4.0×10⁻⁴ (float64, never
    negative), while the float32 outputs' measured cosines run from −0.006 to 0.003: the
    sentence said "from −0.006057 to 0.003463: it is σ/rms"."""
    cloud = normalized_cloud(GeometrySpec(eps=0.0, shift=5.0, spread=0.001))
    x = cloud.inputs.astype(np.float64)
    exact = x.std(axis=-1) / np.sqrt((x**2).mean(axis=-1))  # σ/rms, numpy's own std
    assert exact.min() > 0 and cloud.layernorm.cos_input.min() < 0
    np.testing.assert_allclose(cloud.sigma_over_rms, exact, rtol=1e-12)
    (said,) = [s for s in text.cloud_summary(cloud, ("layernorm",), "en") if "LayerNorm(x))" in s]
    assert "as measured on the float32 outputs, while exactly it is σ/rms" in said
    assert format_reading(float(exact.max())) in said and "e-0" not in said
    default = normalized_cloud(GeometrySpec())  # the measured cosines read σ/rms: one sentence
    (said,) = [s for s in text.cloud_summary(default, ("layernorm",), "en") if "LayerNorm(x))" in s]
    assert said.replace("\xa0", " ").endswith("it is σ/rms, 1 only when μ = 0.")
