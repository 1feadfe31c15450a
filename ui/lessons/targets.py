"""Which page, in which state, each lesson opens: one table, checked against the URL contract.

A target names a page of ``ui.url.pages.PAGES``, the values of its parameters (stable ids, as
a share link writes them) and the place on the page the lesson is about (``at``: the link
opens scrolled there, ``ui/landing.py``).  ``tests/ui/test_lessons.py`` checks that the page
exists, that every parameter exists and accepts its value and that the page marks the place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ui.lessons.catalog import LESSON_IDS
from ui.url.codec import AT_PARAM, PRESENT, PageParams, encode_pairs, query_pairs, serialize


@dataclass(frozen=True)
class Target:
    """A page and the parameter values that show a lesson's fact there."""

    page: str  # a key of ui.url.pages.PAGES (the page's url_path)
    values: tuple[tuple[str, Any], ...] = ()  # (parameter key, value); lists as tuples
    at: str = ""  # the place on the page the link lands on (ui.url.codec.LANDINGS); "": its top

    def as_dict(self) -> dict[str, Any]:
        """The values as a page's state: tuples become the lists "choices" parameters hold."""
        return {key: list(v) if isinstance(v, tuple) else v for key, v in self.values}


TARGETS: dict[str, Target] = {
    # the no-norm stack alone: beside it, Pre-Norm's line would give away lesson 7's answer
    "why_normalize": Target("depth", (("dp_placements", ("none",)),), at="results"),
    "which_axis": Target("axes", (("ax_norm", "batchnorm"),)),
    "worked_example": Target(
        "vector_lab",
        (("vl_text", "1, 2, 3, 4"), ("vl_norm", "layernorm"), ("vl_eps", "0")),
    ),
    "rmsnorm": Target(
        "vector_lab", (("vl_text", "1, 2, 3, 4"), ("vl_norm", "rmsnorm"), ("vl_eps", "0"))
    ),
    "batchnorm_sequences": Target("axes", (("ax_section", "batchnorm"),), at="batch_of_one"),
    "pre_post": Target("depth", (("dp_placements", ("post", "pre")),), at="results"),
    "peri_olmo2": Target(
        "depth", (("dp_placements", ("pre", "peri", "olmo2")), ("dp_init", "fixed")), at="results"
    ),
    "deepnorm": Target("depth", (("dp_placements", ("post", "deepnorm")),), at="results"),
    "precision": Target(
        "vector_lab",
        (
            ("vl_text", "-300, 300, -300, 300"),
            ("vl_norm", "layernorm"),
            ("vl_dtype", "float16"),
            ("vl_compute", "float16"),
        ),
    ),
    "gemma_offset": Target(
        "vector_lab",
        (
            ("vl_text", "1, 2, 3, 4"),
            ("vl_norm", "rmsnorm"),
            ("vl_eps", "0"),
            ("vl_offset", 1.0),
            ("vl_gamma", "0"),
        ),
    ),
    "cost": Target(
        "kernels", (("kn_tokens", 4096), ("kn_d", 4096), ("kn_rdtype", "bfloat16")), at="memory"
    ),
    "geometry": Target("geometry", (("ge_d", 3), ("ge_eps", 0.0))),  # the lesson's ε = 0
    "real_models": Target("dumps", (("du_source", "example"),), at="residual"),
}
assert set(TARGETS) == set(LESSON_IDS), "every lesson opens a page, and only lessons do"


def target_query(
    target: Target, page: PageParams, lang: str, present: str = PRESENT.default
) -> dict[str, list[str]]:
    """The link's query: language, presentation mode, every value of the target, and the
    place it lands on.

    Unlike a share link, a lesson link writes defaults too, so the page opens in the
    lesson's state even if this session had moved one of its settings.
    """
    query = query_pairs(None, {}, lang, present)
    for key, value in target.as_dict().items():
        query[key] = serialize(page[key], value)
    if target.at:
        query[AT_PARAM] = [target.at]
    return query


query_text = encode_pairs  # ``target_query`` as the text after "?" in an address
