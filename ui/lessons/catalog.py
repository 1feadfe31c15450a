"""The lessons, in teaching order: their maths, their "predict, then look" question, and the
numbers their texts quote.

Words live in ``locales/<lang>/lessons.toml`` under the lesson's id (title, idea, question,
options, reveal, explain, next, link); maths (LaTeX, the same in every language) and numbers
live here.
Every number a lesson's text states is a ``Fact``: the value the engine computes and the text
the page shows, filled into both languages' sentences through ``{placeholders}``.
``tests/ui/test_lessons_engine.py`` computes each fact and each question's answer with the
engine, so a lesson cannot claim what the engine does not show.

A lesson is staged: the idea and ``maths`` set up the question and never state its answer;
the answer, the explanation (``reveal``, ``explain``) and ``answer_maths`` come after the
learner commits (``tests/ui/test_lessons.py`` checks that no answer shows before).  Which
page state a lesson opens is in ``ui/lessons/targets.py``.

The sources are the seed texts (seed 000 throughout; seed 001's claims only where a lesson
tests one, as the BatchNorm lesson does) and the papers:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167
- Santurkar et al. 2018, "How Does Batch Normalization Help Optimization?", arXiv:1805.11604
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture", arXiv:2002.04745
- Wang et al. 2022, "DeepNet: Scaling Transformers to 1,000 Layers", arXiv:2203.00555
- Gemma Team 2024, "Gemma 2: Improving Open Language Models at a Practical Size",
  arXiv:2408.00118 (norms before and after each sublayer)
- OLMo Team 2024, "2 OLMo 2 Furious", arXiv:2501.00656 (norms on the sublayer outputs only)
- Sun et al. 2024, "Massive Activations in Large Language Models", arXiv:2402.17762
"""

from __future__ import annotations

from dataclasses import dataclass, field

OPTIONS = ("a", "b", "c", "d")  # every question has four options, in this order


@dataclass(frozen=True)
class Fact:
    """A number a lesson states: the engine's value, and how the page writes it."""

    value: float
    text: str


@dataclass(frozen=True)
class Lesson:
    """One lesson: an id (its URL value and its table in lessons.toml), maths, a question."""

    id: str
    maths: tuple[str, ...]  # LaTeX blocks shown under the idea: they set up the question
    answer: str  # the right option, one of OPTIONS
    answer_maths: tuple[str, ...] = ()  # LaTeX shown with the explanation, after the commit
    facts: dict[str, Fact] = field(default_factory=dict, hash=False, compare=False)

    def texts(self) -> dict[str, str]:
        """The placeholders of this lesson's sentences: fact name -> shown text."""
        return {name: fact.text for name, fact in self.facts.items()}


def _facts(**facts: tuple[float, str]) -> dict[str, Fact]:
    return {name: Fact(float(value), text) for name, (value, text) in facts.items()}


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "why_normalize",
        (r"x_{l+1} = x_l + F_l(x_l)",),
        answer_maths=(
            r"\begin{aligned} \mathbb{E}\,\|x_{l+1}\|^2"
            r" &= \mathbb{E}\,\|x_l\|^2 + \mathbb{E}\,\|F_l(x_l)\|^2 \\"
            r" &\approx 2\,\mathbb{E}\,\|x_l\|^2 \end{aligned}",
        ),
        answer="b",
        facts=_facts(
            layers=(48, "48"),
            none_final=(2.5e14, "2.5×10¹⁴"),  # measured: the Depth page's seeded stack
            doubling=(2.0**48, "2.8×10¹⁴"),  # the law: exactly 2x at each of the 48 layers
        ),
    ),
    Lesson(
        "which_axis",
        (
            r"\text{LayerNorm: } \mu_{b,t} = \frac{1}{d}\sum_{c=1}^{d} x_{b,t,c}",
            r"\text{BatchNorm: } \mu_{c} = \frac{1}{B\,T}\sum_{b=1}^{B}\sum_{t=1}^{T} x_{b,t,c}",
        ),
        answer="a",
        facts=_facts(
            batch=(4, "4"),
            tokens=(16, "16"),
            d=(32, "32"),
            ln_pairs=(64, "64"),
            bn_pairs=(32, "32"),
            cells=(2048, "2,048"),
        ),
    ),
    Lesson(
        "worked_example",
        (
            r"\begin{aligned} \mu &= \tfrac{1}{4}(1 + 2 + 3 + 4) = 2.5 \\"
            r" \sigma^2 &= \tfrac{1}{4}\left[(-1.5)^2 + (-0.5)^2 + 0.5^2 + 1.5^2\right] \\"
            r" &= 1.25 \end{aligned}",
            r"y_i = \gamma_i\,\frac{x_i - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta_i",
        ),
        answer="b",
        facts=_facts(
            mean=(2.5, "2.5"),
            var=(1.25, "1.25"),
            std=(1.1180, "1.1180"),
            first=(-1.3416, "−1.3416"),
            wrong_centered=(-1.5, "−1.5"),
            wrong_unbiased=(-1.1619, "−1.1619"),
            rms_first=(0.3651, "0.3651"),
        ),
    ),
    Lesson(
        "rmsnorm",
        (
            r"\mathrm{RMSNorm}(x)_i = \frac{x_i}{\sqrt{\frac{1}{d}\sum_j x_j^2 + \varepsilon}}"
            r"\,\gamma_i",
        ),
        answer_maths=(r"\mathrm{RMS}(x)^2 = \frac{1}{d}\sum_i x_i^2 = \sigma^2 + \mu^2",),
        answer="c",
        facts=_facts(
            var=(1.25, "1.25"),
            mean=(2.5, "2.5"),
            mu2=(6.25, "6.25"),
            ms=(7.5, "7.5"),
            sumsq=(30, "30"),
            rms=(2.7386, "2.7386"),
            ratio=(2.449, "2.45"),
            rms_out=(0.3651, "0.3651, 0.7303, 1.0954, 1.4606"),  # value: the first entry
        ),
    ),
    Lesson(
        "geometry",
        (r"\|\mathrm{RMSNorm}(x)\| = \sqrt{d} \quad (\gamma = 1,\ \varepsilon = 0)",),
        answer_maths=(
            r"\mathrm{LayerNorm}(x) = \mathrm{RMSNorm}(x - \mu\mathbf{1}), \qquad"
            r"\langle \mathrm{LayerNorm}(x), \mathbf{1} \rangle = 0",
            r"\|y\| = \sqrt{d}\,\frac{\sigma}{\sqrt{\sigma^2 + \varepsilon}}",
        ),
        answer="b",
        facts=_facts(sqrt3=(1.7321, "1.7321")),
    ),
    Lesson(
        "batchnorm_sequences",
        (
            r"\mu_c = \frac{1}{B\,T}\sum_{b,t} x_{b,t,c}",
            r"y_{b,t,c} = \gamma_c\,\frac{x_{b,t,c} - \mu_c}"
            r"{\sqrt{\sigma_c^2 + \varepsilon}} + \beta_c",
        ),
        answer_maths=(
            r"B = T = 1:\quad \mu_c = x_c,\ \ \sigma_c^2 = 0 \;\Rightarrow\;"
            r"y_c = \gamma_c \frac{0}{\sqrt{0 + \varepsilon}} + \beta_c = \beta_c",
        ),
        answer="c",
    ),
    Lesson(
        "pre_post",
        (
            r"\text{Post-Norm: } x_{l+1} = \mathrm{LN}\big(x_l + F_l(x_l)\big)",
            r"\text{Pre-Norm: } x_{l+1} = x_l + F_l\big(\mathrm{LN}(x_l)\big)",
        ),
        answer_maths=(
            r"\|\partial \mathcal{L} / \partial W^{(L)}\|: \quad"
            r"\begin{aligned} &\text{Post-Norm: } O\big(d\sqrt{\ln d}\big) \\"
            r" &\text{Pre-Norm: } O\big(d\sqrt{\ln d / L}\big) \end{aligned}",
        ),
        answer="b",
        facts=_facts(
            layers=(48, "48"),
            post_final=(1.0, "1.0"),
            pre_final=(48, "48"),
            pre_update=(0.15, "0.15"),
        ),
    ),
    Lesson(
        "peri_olmo2",
        (
            r"\begin{gathered} \text{Peri-Norm (Gemma 2)} \\"
            r" x_{l+1} = x_l + \mathrm{LN}\Big(F_l\big(\mathrm{LN}(x_l)\big)\Big) \end{gathered}",
            r"\begin{gathered} \text{OLMo 2} \\"
            r" x_{l+1} = x_l + \mathrm{LN}\big(F_l(x_l)\big) \end{gathered}",
        ),
        answer="b",
        facts=_facts(
            layers=(48, "48"), pre_final=(5.7, "5.7"), peri_final=(48, "48"), gain=(0.1024, "0.1")
        ),
    ),
    Lesson(
        "deepnorm",
        (
            r"x_{l+1} = \mathrm{LN}\big(\alpha\, x_l + G_l(x_l)\big)",
            r"\alpha = (2N)^{1/4}, \qquad \beta = (8N)^{-1/4}",
            r"W_{\text{init}} \leftarrow \beta\, W_{\text{init}},"
            r"\ \ W \in \{W_{\text{FFN}},\ W_V,\ W_O\}",  # W_Q, W_K as they are (the idea)
        ),
        answer="b",
        facts=_facts(
            layers=(48, "48"),
            blocks=(24, "24"),  # N: 48 single-branch layers are 24 blocks of two branches
            post_update=(0.998, "1.0"),
            deep_update=(0.102, "0.10"),
            mlp_update=(0.0145, "0.015"),  # the same stack with sublayer "mlp"
            transformer_update=(0.0065, "0.007"),  # and "transformer"
            alpha=(2.6321, "2.6321"),
            beta=(0.2686, "0.2686"),
            alpha_layers=(3.1302, "3.1302"),  # the "transformer" sublayer's N = 48
            beta_layers=(0.2259, "0.2259"),
        ),
    ),
    Lesson(
        "precision",
        (r"\sigma^2 = \frac{1}{d}\sum_i (x_i - \mu)^2",),
        answer_maths=(
            r"(-300 - 0)^2 = 90{,}000 > 65{,}504 = \max_{\text{float16}}",
            r"\sigma^2 = \infty \;\Rightarrow\; \frac{1}{\sqrt{\sigma^2 + \varepsilon}} = 0"
            r"\;\Rightarrow\; y = 0",
        ),
        answer="c",
        facts=_facts(f16_max=(65504, "65,504"), square=(90000, "90,000")),
    ),
    Lesson(
        "gemma_offset",
        (
            r"y_i = \frac{x_i}{\mathrm{RMS}(x)}\,(1 + \gamma_i), \qquad"
            r" \gamma_i\big|_{\text{init}} = 0",
        ),
        answer="b",
        facts=_facts(rms_out=(0.3651, "0.3651, 0.7303, 1.0954, 1.4606")),  # value: the first
    ),
    Lesson(
        "cost",
        (
            r"\frac{\text{FLOPs}}{\text{bytes}} = "
            r"\frac{7\,M d}{(1 + 1) \cdot 2\,M d} = 1.75",
        ),
        answer_maths=(
            r"\underbrace{(2 + 1)}_{h = x + F(x)} + \underbrace{(1 + 1)}_{y = \mathrm{norm}(h)} = 5"
            r" \;\longrightarrow\; 2 + 2 = 4",
        ),
        answer="b",
        facts=_facts(
            ln_flops=(7, "7"),
            rms_flops=(4, "4"),
            ln_intensity=(1.75, "1.75"),
            ln_intensity_float32=(0.875, "0.875"),
            ridge=(13.96, "14"),
            unfused=(5, "5"),
            fused=(4, "4"),
            fusion=(1.25, "1.25"),
        ),
    ),
    Lesson(
        "real_models",
        (r"\mathrm{RMS}_l(t) = \sqrt{\frac{1}{d}\sum_{i=1}^{d} x_{l,t,i}^2} \quad (d = 576)",),
        answer="c",
        facts=_facts(
            blocks=(30, "30"),
            massive_count=(69, "69"),  # every massive activation of the dump (Sun et al.)
            massive_channels=(1, "1"),  # the channels they sit in
            width=(576, "576"),
            channel=(507, "507"),
            next_channel=(2532, "2,532"),  # the largest |a| of any other channel
            before_jump=(5.48, "5.5"),
            twice=(11, "11"),
            after_jump=(946.7, "947"),
            typical_embed=(0.113, "0.11"),  # the embeddings: block 0's input
            typical_first=(1.67, "1.7"),  # block 1's input
            typical_last=(30.3, "30"),  # the last block's output
            max_entry=(26464, "26,464"),
            f16_max=(65504, "65,504"),
        ),
    ),
)

LESSON_IDS = tuple(lesson.id for lesson in LESSONS)
ANSWER_IDS = tuple(f"{lesson.id}.{option}" for lesson in LESSONS for option in OPTIONS)


def lesson(lesson_id: str) -> Lesson:
    """The lesson called ``lesson_id``; KeyError for an unknown id."""
    for candidate in LESSONS:
        if candidate.id == lesson_id:
            return candidate
    raise KeyError(lesson_id)


def answers_by_lesson(answer_ids) -> dict[str, str]:
    """``["worked_example.b", ...]`` -> ``{"worked_example": "b"}`` (the last one wins)."""
    chosen: dict[str, str] = {}
    for answer_id in answer_ids:
        lesson_id, _, option = str(answer_id).rpartition(".")
        if lesson_id in LESSON_IDS and option in OPTIONS:
            chosen[lesson_id] = option
    return chosen


def score(answers: dict[str, str]) -> tuple[int, int]:
    """(answered, right) of a learner's answers ``{lesson id: option}``."""
    right = sum(1 for lesson_id, option in answers.items() if lesson(lesson_id).answer == option)
    return len(answers), right


def unanswered(answers: dict[str, str]) -> tuple[str, ...]:
    """The lessons without a committed answer in ``answers``, in teaching order."""
    return tuple(lesson_id for lesson_id in LESSON_IDS if lesson_id not in answers)
