"""Number boxes, whatever the page (``ui/widgets/bound.py``): a value typed past either end
of a box's range is said in the page's language, with the digits that tell it from the end,
and replaced by that end, in the box too; one step past the end the box showed (its − or +
button there) is set back without a word."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP
from ui.url.pages import KERNELS as P


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_number_typed_past_either_end_is_said_and_the_box_shows_the_end_used(lang):
    """Tokens B·T = 99999999999 turned the field red and kept showing it while the page
    computed with the last value, its only word Streamlit's English tooltip: each field's help
    names both ends of its range, and a value past one is said in the page's language and
    replaced by that end, in the box too."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["lang"] = lang
    app.switch_page("app_pages/kernels.py").run()
    assert not app.exception
    fields = {box.key: box for box in app.number_input}
    assert {"kn_tokens", "kn_d"} <= set(fields)
    for key, box in fields.items():
        low, high = int(P[key].low), int(P[key].high)
        accepted = (
            f"Accepted: {low:,} to {high:,}." if lang == "en" else f"可接受：{low:,} 到 {high:,}。"
        )
        assert accepted in box.help, (box.key, box.help)
    for key, typed, used in (("kn_tokens", 99999999999, P["kn_tokens"].high), ("kn_d", -5, 1)):
        app.number_input(key=key).set_value(typed).run()
        assert not app.exception
        said = " ".join(w.value for w in app.warning).replace("\u00a0", " ")
        assert f"{typed:,}".replace("-", "\u2212") in said and f"{int(used):,}" in said, said
        assert ("outside the accepted range" if lang == "en" else "超出了可接受的范围") in said
        assert app.number_input(key=key).value == used
        app.run()  # the next run: the box keeps the end, and the message has gone
        assert app.number_input(key=key).value == used and not app.warning
    # one past the top typed from the bottom end is said (it was set back silently) ...
    top = int(P["kn_d"].high)
    app.number_input(key="kn_d").set_value(top + 1).run()
    assert app.number_input(key="kn_d").value == top and app.warning
    # ... while the box shows the top, the + button there is set back without a word
    app.run()
    app.number_input(key="kn_d").set_value(top + 1).run()
    assert app.number_input(key="kn_d").value == top and not app.warning


def test_a_float_typed_past_its_end_is_said_with_the_digits_that_differ(app):
    """Four significant digits wrote both 1,000,001 and its end as "1e+06"."""
    app.segmented_control(key="vl_source").set_value("random").run()
    app.number_input(key="vl_scale").set_value(1000001.0).run()
    assert not app.exception
    said = " ".join(w.value for w in app.warning)
    assert "1,000,001 is outside the accepted range, 0 to 1,000,000: 1,000,000 is used" in said
    assert "e+06" not in said and app.number_input(key="vl_scale").value == 1e6


def test_a_value_past_a_views_end_is_said_as_the_links_or_the_boxs():
    """A link's cell past the tensor it shows is said with the link's key; a value typed
    into that box past the same end, or left there by another box's change, is said with the
    box's own label (it read "ax_cell_c = 500 is past the end of this view")."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update({"lang": "en", "ax_d": "16", "ax_cell_c": "20"})
    app.switch_page("app_pages/axes.py").run()
    said = " ".join(w.value for w in app.warning).replace("\u00a0", " ")
    assert "ax_cell_c` = 20 is past the end of this view" in said, said
    assert app.number_input(key="ax_cell_c").value == 15
    app.number_input(key="ax_cell_c").set_value(500).run()
    said = " ".join(w.value for w in app.warning).replace("\u00a0", " ")
    assert "channel c: 500 is past this view's last value, 15: 15 is used instead." in said
    assert "ax_cell_c" not in said and app.number_input(key="ax_cell_c").value == 15
    app.number_input(key="ax_d").set_value(8).run()  # another box narrows the view
    said = " ".join(w.value for w in app.warning).replace("\u00a0", " ")
    assert "channel c: 15 is past this view's last value, 7: 7 is used instead." in said
    assert app.number_input(key="ax_cell_c").value == 7
    app.number_input(key="ax_cell_c").set_value(8).run()  # + where the box shows the view's end
    assert app.number_input(key="ax_cell_c").value == 7 and not app.warning
    app.number_input(key="ax_batch").set_value(64).run()
    app.segmented_control(key="ax_source").set_value("example").run()  # holds 4 prompts
    said = " ".join(w.value for w in app.warning).replace("\u00a0", " ")
    assert "B (sequences): 64 is past this view's last value, 4: 4 is used instead." in said


@pytest.mark.parametrize(
    ("lang", "said"), [("en", "Accepted: above 0, up to 1."), ("zh", "可接受：大于 0，最大 1。")]
)
def test_a_box_that_refuses_its_low_end_says_above_it(lang, said):
    """BatchNorm's momentum: 0 is refused (a running average that never moves), so its help
    said "Accepted: 0 to 1." of a value the page then refused."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update({"lang": lang, "ax_section": "batchnorm"})
    app.switch_page("app_pages/axes.py").run()
    assert not app.exception
    assert said in app.number_input(key="ax_momentum").help


def test_a_box_whose_low_end_is_refused_keeps_its_value_rather_than_clamp_to_that_end():
    """Momentum accepts (0, 1]: a typed −0.05 was set to 0 with a warning, which the engine
    then refused ("Momentum 0 is not accepted").  It keeps the value the box held, and says
    the range as the box's help does."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update({"lang": "en", "ax_section": "batchnorm"})
    app.switch_page("app_pages/axes.py").run()
    box = app.number_input(key="ax_momentum")
    assert box.value == 0.1 and "Accepted: above 0, up to 1." in box.help
    for typed in (-0.05, 0.0):
        app.number_input(key="ax_momentum").set_value(typed).run()
        assert not app.exception and not app.error, [e.value for e in app.error]
        said = " ".join(w.value for w in app.warning).replace("\u00a0", " ")
        assert "outside the accepted range, above 0 and up to 1: 0.1 is used" in said, said
        assert app.number_input(key="ax_momentum").value == 0.1
    app.number_input(key="ax_momentum").set_value(0.05).run()
    app.number_input(key="ax_momentum").set_value(0.0).run()  # its − button at 0.05
    assert app.number_input(key="ax_momentum").value == 0.05 and not app.warning
    assert not app.error
