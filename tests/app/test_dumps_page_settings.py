"""The Activation dumps page through AppTest, its settings: the axes and the stream
overridden, link values past the dump said and shown at its end, thresholds applied without
reading the dump again, a select box's stale label, a link at every edge of the URL contract,
and axes that do not fit refused by the engine.  Uploads go in through ``upload``
(tests/app/conftest.py)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP
from tests.app.dump_uploads import open_dumps_page, page_text, safetensors_bytes, subheaders
from tests.app.dumps_page import deep_link
from tests.dumps import dump_files as files
from ui.i18n import translate


def test_overriding_the_axes_and_the_stream_rereads_the_dump(app, upload):
    x = files.stream(layers=4, batch=1, tokens=6, d=8)[:, 0]  # one [L, T, d] array
    upload("stack.safetensors", safetensors_bytes({"resid_stack": x}))
    open_dumps_page(app)
    assert "[L, T, d] — assumed" in page_text(
        app
    ) and "L = 4 points of the stream, B = 1" in page_text(app)
    app.selectbox(key="du_axes").select("BTd").run()
    text = page_text(app)
    assert "[B, T, d] — chosen by you" in text and "L = 1 point of the stream, B = 4" in text
    assert "Too few positive, finite layers" in text  # one layer: no growth to fit
    assert app.query_params["du_axes"] == "BTd"
    upload("hooks.safetensors", safetensors_bytes(files.module_names(files.stream())), "hooks")
    app.selectbox(key="du_axes").select("auto").run()
    stream = "model.layers.{i}.input_layernorm.output"
    app.selectbox(key="dumps_stream_hooks").select(stream).run()
    assert f"`{stream}` — chosen by you" in page_text(app)
    assert "dumps_stream" not in json.dumps(dict(app.query_params))  # an entry of the file


@pytest.mark.parametrize(
    "batch, layers, sentence",
    [
        (1, 3, "**1 massive activation**, on layer 2 in channel 3; its magnitude is 2,500"),
        (2, 3, "**2 massive activations**, all on layer 2, in channel 3"),
        (2, 4, "**4 massive activations** on 2 layers, in channel 3"),
    ],
)
def test_the_massive_activations_are_counted_in_words_that_fit_the_count(
    app, upload, batch, layers, sentence
):
    """One activation, several on one layer, several layers: each said as it is (the
    stream's 2,500 sits on token 0, channel 3, from layer 2 on)."""
    x = files.stream(layers=layers, batch=batch, tokens=7)
    upload("hidden.safetensors", safetensors_bytes(files.hf_names(x)))
    open_dumps_page(app, section="massive")
    assert sentence in page_text(app)


def test_massive_activations_in_two_channels_are_said_in_the_plural(app, upload):
    x = files.stream(layers=3, batch=1, tokens=7)
    x[2:, :, 0, 5] = 2600.0  # a second channel beside channel 3
    upload("hidden.safetensors", safetensors_bytes(files.hf_names(x)))
    open_dumps_page(app, section="massive")
    assert "all on layer 2, in channels 3, 5; the largest has magnitude 2,600" in page_text(app)


def test_link_values_past_the_dump_are_said_and_thresholds_apply(app, upload):
    upload("hidden.safetensors", safetensors_bytes(files.hf_names(files.stream(tokens=7))))
    for key, value in {"du_token": "999", "du_massive_abs": "3000", "du_eps": "0"}.items():
        app.query_params[key] = value
    open_dumps_page(app)
    warning = " ".join(w.value for w in app.warning)
    assert "`du_token`" in warning and "showing 6" in warning
    assert app.number_input(key="du_token").value == 6  # the link's du_token: its section
    # typed past the dump's last token: said with the box's label, not as the link's
    app.number_input(key="du_token").set_value(50).run()
    warning = " ".join(w.value for w in app.warning).replace("\u00a0", " ")
    assert "50 is past this view's last value, 6" in warning and "`du_token`" not in warning
    app.number_input(key="du_token").set_value(7).run()  # + at the last token: set back, silently
    assert app.number_input(key="du_token").value == 6
    assert "past this view" not in " ".join(w.value for w in app.warning)
    eps = app.selectbox(key="du_eps")
    assert eps.value == 0 and "10⁻⁵" in eps.options and not [o for o in eps.options if "e" in o]
    app.segmented_control(key="du_section").set_value("massive").run()
    assert "No activation passes the threshold" in page_text(app)  # 2500 < 3000


def test_a_new_threshold_is_applied_without_reading_the_dump_again(app, upload, calls):
    reads = calls("ui.requests.dumps.report")
    upload("hidden.safetensors", safetensors_bytes(files.hf_names(files.stream(tokens=7))))
    open_dumps_page(app, section="massive")
    assert len(reads) == 1 and "6 massive activations" in page_text(app)  # 2500 > 100
    for key, value in (("du_massive_abs", 3000.0), ("du_massive_ratio", 10.0), ("du_outlier", 2.0)):
        app.number_input(key=key).set_value(value).run()
        assert not app.exception
    assert len(reads) == 1 and "No activation passes the threshold" in page_text(app)


@pytest.mark.parametrize(
    "key, section",
    [("du_pair", "norms"), ("du_token_layer", "centering"), ("du_channel_layer", "channels")],
)
def test_a_select_box_holding_the_label_of_a_gone_option_falls_back_not_a_crash(
    app, upload, key, section
):
    """Streamlit keeps a select box's label when its options change (a new prompt brings a
    new automatic norm); the page read it as a number: TypeError, in every later run."""
    upload("hooks.safetensors", safetensors_bytes(files.module_names(files.stream(tokens=7))))
    app.session_state[key] = "★ model.layers.3.input_layernorm"  # a label, not an index
    open_dumps_page(app, section=section)
    assert app.selectbox(key=key).value == -1 and "Downloads" in subheaders(app)
    app.run()  # and the run after it
    assert not app.exception and app.selectbox(key=key).value == -1


EXTREMES = {  # every value the URL contract accepts at its edge, on a 5-layer, 7-token dump
    "du_token_layer": "1048576",
    "du_channel_layer": "1048576",
    "du_batch": "1048576",
    "du_token": "16777216",
    "du_pair": "1048576",
    "du_massive_abs": "0.001",
    "du_massive_ratio": "1000000000",
    "du_outlier": "1",
    "du_eps": "0",
    "du_log": "false",
    "du_order": "file",
}


# Each section says the clamps of the values it reads (the batch: every section but channels).
CLAMPED = {
    "centering": ("du_token_layer", "du_batch", "du_token"),
    "channels": ("du_channel_layer",),
    "norms": ("du_batch", "du_pair"),
}


@pytest.mark.parametrize("section", sorted(CLAMPED))
def test_a_link_at_every_edge_opens_with_each_clamp_said(app, upload, section):
    upload("hooks.safetensors", safetensors_bytes(files.module_names(files.stream(tokens=7))))
    for key, value in EXTREMES.items():
        app.query_params[key] = value
    open_dumps_page(app, section=section)
    warning = " ".join(w.value for w in app.warning)
    for key in CLAMPED[section]:
        assert f"`{key}`" in warning, key
    assert not app.error and "Downloads" in subheaders(app)
    assert "by the layer number" not in page_text(app) and "as stored in the file" in page_text(app)


def test_axes_that_do_not_fit_the_file_are_refused_by_the_engine_not_a_traceback(app, upload):
    upload("hidden.safetensors", safetensors_bytes(files.hf_names(files.stream())))
    app.query_params["du_axes"] = "LBTd"
    open_dumps_page(app)
    assert "Axes “LBTd” do not fit entry “`hidden_states.0`”" in app.error[0].value
    app.selectbox(key="du_axes").select("auto").run()  # the override stays reachable
    assert not app.error and "Downloads" in subheaders(app)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_empty_prompt_is_refused_in_the_pages_own_words(lang):
    """Spaces alone in the live model's prompt box: the page names the box and what to do,
    not the spec's field ("prompt is empty: give a text …", an exception's wording)."""
    app = AppTest.from_file(APP, default_timeout=60)  # opened from a link in ``lang``
    app.query_params.update({"lang": lang, "du_source": "live", "du_prompt": "   "})
    open_dumps_page(app)
    errors = [e.value for e in app.error]
    assert errors == [translate("dumps.prompt_empty", lang)], errors
    assert not any(e.startswith("prompt") for e in errors)


def test_a_norm_past_a_smaller_dumps_is_said_by_the_name_shown_instead(app, upload):
    """The norm box lists a dump's norms by name; a norm chosen in a larger dump that the
    next one lacks is said with the name of the norm shown, not as an index ("Norm: 5 is
    past this view's last value, 3") the reader never saw."""
    upload("hooks.safetensors", safetensors_bytes(files.module_names(files.stream(layers=5))))
    open_dumps_page(app, section="norms")
    box = app.selectbox(key="du_pair")
    last = len(box.options) - 2  # the options: the automatic one, then each norm
    box.set_value(last).run()
    upload("small.safetensors", safetensors_bytes(files.module_names(files.stream(layers=2))))
    app.run()
    shown = app.selectbox(key="du_pair")
    said = " ".join(w.value for w in app.warning).replace("\u00a0", " ")
    assert not app.exception and shown.value == len(shown.options) - 2 < last
    assert f"the choice made before is not among this view's; `{shown.options[-1]}`" in said
    assert "past this view's last value" not in said and "`du_pair`" not in said


def test_presenting_what_was_read_is_a_closed_box_and_a_refusal_stays_outside_it(app, upload):
    """Presenting, the provenance ("What was read": a table, the prompts) took a room two
    screens before the report's sections: it is a closed box titled so.  A file the engine
    refuses is said on the page, not inside that closed box."""
    shown = deep_link({"present": "on"})
    (read,) = [box for box in shown.expander if box.label == "What was read"]
    assert any("Read as" in m.value for m in read.get("markdown"))  # the facts' table
    assert "What was read" not in subheaders(shown) and shown.get("button_group")
    app.session_state["present"] = "on"
    upload("acts.txt", b"1 2 3")
    open_dumps_page(app)
    assert len(app.error) == 1 and "is not a dump format" in app.error[0].value
    assert not [e for box in app.expander for e in box.get("error")]
