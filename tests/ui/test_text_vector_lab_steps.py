import math
import re

import pytest
import torch

from engine import NormSpec
from engine.norms.worked import explain_vectors
from tests.plain_text import plain
from ui.i18n import translate
from ui.text.latex import LINE_WIDTH, latex_width, wrapped_sum, wrapped_vector
from ui.text.vector_lab_steps import worked_steps


def _latex(kind: str, eps: float = 0.0, row=(1.0, 2.0, 3.0, 4.0), **spec) -> str:
    explanation = explain_vectors((row,), NormSpec(kind, eps=eps, **spec))
    return "\n".join(step.latex for step in worked_steps(explanation, "en"))


def test_layernorm_textbook_steps():
    latex = _latex("layernorm")
    # a chain of equalities: one side per line ("\\ &="), the result on a line of its own
    assert r"\frac{1 + 2 + 3 + 4}{4} \\ &= 2.5\end{aligned}" in latex
    assert r"\frac{(-1.5)^2 + (-0.5)^2 + 0.5^2 + 1.5^2}{4} \\ &= 1.25\end{aligned}" in latex
    assert r"\sqrt{1.25} = 1.1180" in latex
    assert r"\sqrt{7.5} \\ &= 2.7386\end{aligned}" in latex
    assert "7.5 &= 1.25 + 2.5^2" in latex  # under "RMS^2 &= sigma^2 + mu^2"
    assert r"&= 0.8944\end{aligned}" in latex
    assert r"\left[-1.3416, -0.4472, 0.4472, 1.3416\right]" in latex


def test_rmsnorm_textbook_steps():
    latex = _latex("rmsnorm")
    assert r"\frac{1^2 + 2^2 + 3^2 + 4^2}{4}" in latex
    assert "= 0.3651" in latex  # rstd = 1/sqrt(7.5)
    assert r"\left[0.3651, 0.7303, 1.0954, 1.4606\right]" in latex


def test_only_norms_with_a_beta_add_one_in_their_output_formula():
    assert r"+ \beta_i" not in _latex("rmsnorm")  # RMSNorm has no β (Zhang & Sennrich)
    assert r"+ \beta_i" not in _latex("rmsnorm", offset=1.0)
    assert r"+ \beta_i" in _latex("layernorm") and r"+ \beta_i" in _latex("dyt")
    explanation = explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("rmsnorm", eps=0.0))
    captions = [step.caption for step in worked_steps(explanation, "en")]
    assert "Normalize, then scale" in captions and "Normalize, then scale and shift" not in captions


def test_eps_is_written_as_a_power_of_ten():
    assert r"1.25 + 10^{-5}" in _latex("layernorm", eps=1e-5)


@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm", "batchnorm"])
def test_eps_is_the_letter_every_page_writes(kind):
    latex = _latex(kind, eps=1e-5)  # ε (\varepsilon), as in the ε box and every other page
    assert r"\varepsilon" in latex and not re.search(r"\\epsilon(?![a-z])", latex)


def test_gemma_offset_appears_in_the_output_formula():
    assert r"(1 + \gamma_i)" in _latex("rmsnorm", offset=1.0)


def test_pooled_kinds_show_their_shared_statistics_formula():
    assert r"\mu_{c}" in _latex("batchnorm", eps=1e-5)
    assert r"\mu_{b,g}" in _latex("groupnorm", eps=1e-5, groups=2)


def test_captions_follow_the_language():
    explanation = explain_vectors(((1.0, 2.0),), NormSpec("layernorm"))
    english = [step.caption for step in worked_steps(explanation, "en")]
    chinese = [step.caption for step in worked_steps(explanation, "zh")]
    assert "Mean" in english and "均值" in chinese


@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
def test_numbers_in_scientific_notation_are_squared_in_parentheses(kind):
    latex = _latex(kind, row=(1e6, 2.0, 3.0, 4.0))
    assert not re.search(r"\^\{[^}]*\}\^", latex)  # KaTeX: "Double superscript"
    assert r"(10^{6})^2" in latex
    assert r"\left[10^{6}, 2, 3, 4\right]" in latex  # the input, not 1e+06
    assert "e+" not in latex and "e-0" not in latex
    small = _latex(kind, row=(2.5e-6, 1.0, 2.0, 3.0))
    assert r"(2.5\times 10^{-6})^2" in small and not re.search(r"\^\{[^}]*\}\^", small)


def test_a_power_of_ten_is_written_without_a_mantissa_of_one():
    """−1000000 is −10⁶ in every step, not −1×10⁶ (the Vector Lab's `-1000000, 2, 3, 4`)."""
    latex = _latex("layernorm", row=(-1e6, 2.0, 3.0, 4.0))
    assert r"x = \left[-10^{6}, 2, 3, 4\right]" in latex
    assert r"(-10^{6})^2" in latex and r"1\times" not in latex


# Rows whose worked sums are wide: large or tiny numbers written with their powers of ten.
_WIDE_ROWS = [
    (-1e6, 2.0, 3.0, 4.0),
    (1.5e6, -2.9e5, -2.2e6, 5.7e5, -1.1e6, -1.4e6, 4.0e5, 8.4e5),
    (-1.2345e-5, 2.5e-5, 3.1e-5, 4e-5, -1.2345e-5, 2.5e-5, 3.1e-5, 4e-5, 7e-5),
    tuple(float(v) * 1e6 + 0.123 for v in range(-8, 8)),
]


@pytest.mark.parametrize("row", _WIDE_ROWS, ids=lambda row: f"d={len(row)}")
@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
def test_no_line_of_a_worked_step_is_wider_than_a_column(kind, row):
    """A long sum or vector breaks over lines instead of running past the steps column."""
    explanation = explain_vectors((row,), NormSpec(kind, eps=1e-5))
    for step in worked_steps(explanation, "en"):
        for line in step.latex.split(r"\\"):
            # the line's own left-hand side ("&= \frac{\begin{aligned}&") comes on top
            assert latex_width(line) <= LINE_WIDTH + 8, line


def test_a_broken_sum_keeps_every_term_and_starts_each_line_with_its_operator():
    explanation = explain_vectors((_WIDE_ROWS[1],), NormSpec("layernorm", eps=1e-5))
    variance = worked_steps(explanation, "en")[2].latex
    numerator = variance.split(r"\frac{\begin{aligned}")[1].split(r"\end{aligned}}{8}")[0]
    assert numerator.count("^2") == 8  # all eight squared deviations are still written
    assert r"\\ &{}+ (" in variance  # a continued line starts with its "+"


def test_a_long_vector_breaks_with_its_width_after_the_last_entry():
    explanation = explain_vectors((_WIDE_ROWS[1],), NormSpec("layernorm", eps=1e-5))
    x = worked_steps(explanation, "en")[0].latex
    assert x.count(r"\\") >= 1 and x.endswith(r"\big],\quad d = 8\end{aligned}")
    assert x.count(r"\times 10^{") == 8  # no entry lost


def test_a_line_that_starts_with_a_negative_number_keeps_its_minus_a_sign():
    """After "&" KaTeX spaces a bare "-" as a binary minus ("− 0.7469"); braced it is a sign."""
    y = wrapped_vector([1.4715, -0.0785, -1.6714, 0.6497, -0.7469, -1.0122, 0.5103, 0.8775])
    assert r"\\ &{-0.7469}," in y
    total = wrapped_sum(["-123456.78"] + ["- 123456.78"] * 7)
    assert total.startswith(r"\begin{aligned}&{-123456.78}") and r"\\ &{}- " in total


def test_short_sums_and_vectors_stay_on_one_line():
    assert wrapped_sum(["1", "- 2", "+ 3"]) == "1 - 2 + 3"
    assert wrapped_vector([1.0, 2.0], after="!") == r"\left[1, 2\right]!"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_rms_identity_is_approximate_where_its_three_values_were_rounded_apart(lang):
    """0, 1, …, 299 in float32: RMS² = 29850.166 and σ² + μ² = 7499.9165 + 149.5² =
    29850.1665, each rounded on its own, so the line reads "≈" and its heading says why;
    1, 2, 3, 4 is exact (7.5 = 1.25 + 2.5²)."""
    row = tuple(float(i) for i in range(300))
    explanation = explain_vectors((row,), NormSpec("rmsnorm", eps=0.0))
    step = next(s for s in worked_steps(explanation, lang) if r"\mathrm{RMS}^2" in s.latex)
    assert r"&\approx 7{,}499.9165 + 149.5^2" in step.latex
    assert "float32" in step.caption and step.caption != translate(
        "vector_lab.steps.identity", lang
    )
    exact = explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("rmsnorm", eps=0.0))
    step = next(s for s in worked_steps(exact, lang) if r"\mathrm{RMS}^2" in s.latex)
    assert "7.5 &= 1.25 + 2.5^2" in step.latex
    assert step.caption == translate("vector_lab.steps.identity", lang)


def test_a_typed_six_digit_entry_is_worked_with_all_its_digits():
    """`100000, 200000, 300001, 12`: the input, the mean and each deviation keep their digits
    (before: x = [10⁵, 2×10⁵, 3×10⁵, 12], μ = 1.5×10⁵ beside x₁ − μ = −50,003.25)."""
    latex = _latex("layernorm", row=(1e5, 2e5, 300001.0, 12.0))
    assert r"x = \left[10^{5}, 2\times 10^{5}, 300001, 12\right]" in latex
    assert "&= 150{,}003.25" in latex and "(-149{,}991.25)^2" in latex
    assert r"3\times 10^{5}" not in latex


def test_the_steps_write_what_the_compute_dtype_holds_and_say_where_mu_rounded():
    """float16 [60000, −60000, 30000, 1]: μ is 7,500 (exactly 7,500.25) and the deviations
    52,512, −∞, 22,496, −7,500 — what x − x.mean() holds in float16, the −∞ the NaN comes
    from — not float64's 52,500, −67,500, 22,500, −7,499.75; float32 [10⁸, 1, −10⁸]: μ = 0
    (the 1 is absorbed), while the exact mean is 1/3."""
    h = torch.tensor([60000.0, -60000.0, 30000.0, 1.0], dtype=torch.float16)
    assert (h - h.mean()).tolist() == [52512.0, -math.inf, 22496.0, -7500.0]
    ex = explain_vectors(
        (tuple(h.tolist()),), NormSpec("layernorm", compute_dtype="float16"), "float16"
    )
    mean, variance = worked_steps(ex, "en")[1:3]
    assert "7{,}500.25 \\xrightarrow{\\text{float16}} 7{,}500" in mean.latex
    assert "7,500.25 exactly, but float16" in plain(mean.caption)
    assert "52{,}512^2 + (-\\infty)^2 + 22{,}496^2 + (-7{,}500)^2" in variance.latex
    x = torch.tensor([1e8, 1.0, -1e8])
    assert float(x.mean()) == 0.0  # float32's own
    mean = worked_steps(explain_vectors((tuple(x.tolist()),), NormSpec("layernorm")), "zh")[1]
    assert (
        "0.3333 \\xrightarrow{\\text{float32}} 0" in mean.latex
        and "精确值是 0.3333" in mean.caption
    )
    plain_row = worked_steps(explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("layernorm")), "en")
    assert plain_row[1].caption == "Mean" and "xrightarrow" not in plain_row[1].latex


def test_the_rstd_step_adds_eps_as_the_compute_dtype_holds_it():
    """ε = 10⁻⁸ is 0 in float16 (its smallest subnormal is 6×10⁻⁸): the step adds 0, as the
    formula on float16 tensors does; in float32 it stays 10⁻⁸."""
    assert float(torch.tensor(1e-8, dtype=torch.float16)) == 0.0
    half = NormSpec("layernorm", eps=1e-8, compute_dtype="float16")
    rstd = next(
        s
        for s in worked_steps(explain_vectors(((1.0, 2.0, 3.0, 4.0),), half, "float16"), "en")
        if "rstd" in s.latex and "sqrt" in s.latex
    )
    assert r"\sqrt{1.25 + 0}" in rstd.latex and "10^{-8}" not in rstd.latex
    full = explain_vectors(((1.0, 2.0, 3.0, 4.0),), NormSpec("layernorm", eps=1e-8))
    assert any(r"\sqrt{1.25 + 10^{-8}}" in s.latex for s in worked_steps(full, "en"))


def test_dyt_is_worked_without_statistics_it_never_computes():
    """DyT(x) = γ·tanh(αx) + β: the steps showed μ, σ², σ and RMS (in float16 "σ² = ∞" beside
    DyT's correct outputs) before "Normalize, then scale and shift"."""
    x = torch.tensor([60000.0, -60000.0, 30000.0, 1.0], dtype=torch.float16)
    ex = explain_vectors((tuple(x.tolist()),), NormSpec("dyt", compute_dtype="float16"), "float16")
    steps = worked_steps(ex, "en")
    assert [s.caption for s in steps][1:] == [
        "DyT: no statistic; each entry is squashed on its own, then scaled and shifted",
        "Output",
    ]
    assert not any(r"\sigma" in s.latex or r"\mu" in s.latex for s in steps)
    y = torch.tanh(0.5 * x.float())
    assert [round(v, 4) for v in ex.outputs[0]] == [round(float(v), 4) for v in y.half()]
