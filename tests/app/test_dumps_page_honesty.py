"""The Activation dumps page through AppTest, where its sentences once claimed more than its
numbers hold (the audit in notes/dumps_catalog_audit.md): massive activations past the 256
listed per layer, a token holding a NaN, a token of equal entries, a stream of two points, a
median read on bfloat16's grid, and words left in English or in the plural.  Uploads go in
through ``upload`` (tests/app/conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.app.dump_uploads import npy_bytes, npz_bytes, open_dumps_page, page_text, shown_cells
from tests.plain_text import plain


def _chan() -> np.ndarray:
    """Layer 1: channel 5 is 5,000 on all 300 tokens (the 256 listed are all of it), and one
    entry of channel 9 is 3,000, past the threshold (about 700) but not listed."""
    a = np.random.default_rng(0).standard_normal((2, 300, 16)).astype(np.float32)
    a[1, :, 5] = 5000
    a[1, 7, 9] = 3000
    return a


def _open(app, upload, name, data, section, lang="en", **query):
    upload(name, data)
    app.query_params.update({"lang": lang, **{k: str(v) for k, v in query.items()}})
    app.session_state["language"] = lang  # the fixture's first run chose English
    open_dumps_page(app, section=section)
    return plain(page_text(app) + "\n" + "\n".join(w.value for w in app.warning))


@pytest.mark.parametrize(
    ("lang", "channels", "carriers", "one_layer"),
    [
        ("en", "in channels 5, 9", "**300 tokens carry them:**", "(1 layer, up to 5,000)"),
        ("zh", "位于通道 5、9", "**有 300 个 token 带有巨量激活**", "（1 层，最大 5,000）"),
    ],
)
def test_massive_channels_and_tokens_past_the_listed_entries_are_named(
    app, upload, lang, channels, carriers, one_layer
):
    text = _open(app, upload, "chan.npy", npy_bytes(_chan()), "massive", lang)
    assert channels in text and carriers in text and one_layer in text
    assert "in channel 5;" not in text and "256 tokens" not in text and "1 layers" not in text
    if lang == "en":  # 301 pass on layer 1; the table holds that layer's 256 largest
        assert "lists up to the 256 largest of each layer, 256 in all; 301 pass" in text


def test_a_second_token_of_massive_activations_is_not_said_to_be_alone(app, upload):
    a = 0.5 * np.random.default_rng(0).standard_normal((2, 8, 512))
    a[:, 0, :300] = 5000  # 300 per layer: the 256 listed are all token 0's
    a[:, 3, 400:405] = 3000
    text = _open(app, upload, "many.npy", npy_bytes(a), "massive")
    assert "One token carries them all" not in text
    assert "**2 tokens carry them:**" in text and "token 3 in sequence 0 (2 layers" in text


def _d1() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    layers = {f"layer_{i}": rng.standard_normal((2, 7, 16)).astype(np.float32) for i in range(6)}
    layers["layer_2"][0, 2, 1] = np.nan
    layers["layer_2"][1, 4, :] = 3.0  # equal entries: LayerNorm(x) is the zero vector
    return layers


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "it holds 1 non-finite value (NaN or ±inf), so its LayerNorm and RMSNorm outputs"),
        ("zh", "它含有 1 个非有限值（NaN 或 ±inf），所以它的 LayerNorm 和 RMSNorm 输出没有定义"),
    ],
)
def test_a_token_holding_a_nan_is_worked_over_its_finite_values(app, upload, lang, said):
    layers = _d1()
    text = _open(
        app, upload, "d1.npz", npz_bytes(layers), "centering", lang, du_token_layer=2, du_token=2
    )
    finite = np.delete(layers["layer_2"][0, 2].astype(np.float64), 1)
    assert said in text and "μ = NaN" not in text
    assert f"μ = {finite.mean():.4f}" in text  # as the every-token table gives it
    assert ("left out of every mean and maximum" in text) is False


@pytest.mark.parametrize(("lang", "said"), [("en", "is undefined"), ("zh", "余弦没有定义")])
def test_the_cosine_of_a_token_of_equal_entries_is_undefined(app, upload, lang, said):
    query = dict(du_token_layer=2, du_batch=1, du_token=4)
    text = _open(app, upload, "d1.npz", npz_bytes(_d1()), "centering", lang, **query)
    assert "is the zero vector" in text or "是零向量" in text
    assert said in text and "cosine between the two outputs 0" not in text


def test_two_points_are_not_said_to_start_after_the_first_block(app, upload):
    a = np.random.default_rng(0).standard_normal((2, 6, 16)).astype(np.float32)
    a[1] *= 3
    text = _open(app, upload, "l2.npy", npy_bytes(a), "stream")
    assert "at layer 0 to" in text and "after the first block" not in text


def test_a_float32_dumps_median_is_said_approximate_and_shown_to_3_digits(app, upload):
    a = np.full((2, 125, 8), 1.0039, np.float32)  # median 1.0039, read as 1.0 in bfloat16
    a[0, 0, 0] = a[1, 0, 0] = 1001.5
    text = _open(app, upload, "medflip.npy", npy_bytes(a), "massive")
    assert "known to within 0.4 %" in text and "bfloat16's grid" in text
    ratios = shown_cells(app.dataframe[0])["|a| / median"].tolist()
    assert ratios == ["≈1,000", "≈1,000"]  # not "1,001.50": 1001.5 / 1.0039 = 997.6


def test_a_float16_dumps_median_is_exact_and_said_so_by_nothing(app, upload):
    a = np.full((2, 125, 8), 1.0039, np.float16)
    a[0, 0, 0] = a[1, 0, 0] = 1500
    text = _open(app, upload, "h.npy", npy_bytes(a), "massive")
    assert "0.4 %" not in text
    assert not any(c.startswith("≈") for c in shown_cells(app.dataframe[0])["|a| / median"])


@pytest.mark.parametrize(("lang", "yes"), [("en", "yes"), ("zh", "是")])
def test_the_first_token_column_says_yes_or_no_in_the_readers_language(app, upload, lang, yes):
    a = np.random.default_rng(0).standard_normal((3, 6, 16)).astype(np.float32)
    a[1:, 0] *= 50  # token 0 an outlier
    _open(app, upload, "o.npy", npy_bytes(a), "stream", lang)
    cells = [str(c) for table in app.dataframe for c in shown_cells(table).to_numpy().ravel()]
    assert yes in cells and "True" not in cells and "False" not in cells
