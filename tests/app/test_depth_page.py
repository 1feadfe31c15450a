"""The Depth page through AppTest: simulate, check theory captions, limits, training lab."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP
from ui.figures.depth_wiring import STREAM_IN, STREAM_OUT


def _open(app, section: str | None = None):
    if section is not None:
        app.session_state["dp_section"] = section  # as ui.url.address_bar.seed puts ?dp_section=...
    app.switch_page("app_pages/depth.py").run()
    assert not app.exception
    return app


def _chart_names(app, key: str) -> list[str]:
    for chart in app.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        names = [trace.get("name") for trace in spec["data"]]
        if chart.proto.id and key in chart.proto.id:
            return names
    raise AssertionError(f"no chart with key {key}")


def test_default_compares_post_and_pre_with_the_lemma2_band(app):
    _open(app)
    assert app.title[0].value == "Depth"
    names = _chart_names(app, "dp_residual")
    assert "Post-Norm" in names and "Pre-Norm" in names
    assert any("Lemma 2" in (name or "") for name in names)
    assert any(
        "Weight left on x₀" in json.loads(c.proto.spec)["layout"]["title"]["text"]
        for c in app.get("plotly_chart")
    )


def test_the_width_menu_writes_its_widths_as_sentences_do(app):
    """A width of four digits or more is grouped in the menu ("1,024"), and picking it still
    simulates that width."""
    widths = _open(app).selectbox(key="dp_d")
    assert "1,024" in widths.options and "1024" not in widths.options
    widths.select(1024).run()
    assert not app.exception and app.selectbox(key="dp_d").value == 1024


@pytest.mark.slow  # several whole-app runs
def test_assumptions_caption_follows_the_configuration(app):
    _open(app)
    assert any("is outside Lemma 2's assumptions" in c.value for c in app.caption)
    app.selectbox(key="dp_sublayer").select("transformer").run()
    app.selectbox(key="dp_activation").select("relu").run()
    assert any("Lemma 2's assumptions hold" in c.value for c in app.caption)


def test_deepnorm_constants_are_shown(app):
    _open(app)
    app.multiselect(key="dp_placements").set_value(["deepnorm"]).run()
    assert not app.exception
    info = " ".join(i.value for i in app.info)
    # 48 single-branch layers: alpha = 48^(1/4) = 2.6321, beta = (4 * 48)^(-1/4) = 0.2686
    assert "has 48 in all, so N = 24" in info
    assert "= 2.6321 (identity path)" in info and "= 0.2686 (init" in info


@pytest.mark.slow  # 5.1 s measured (4 page runs, one simulating T = 1024)
def test_limits_are_refused_with_the_reason(app):
    _open(app)
    app.number_input(key="dp_tokens").set_value(1024).run()
    app.selectbox(key="dp_d").select(4096).run()  # 49 * 1024 * 4096 stream values: refused
    assert not app.exception
    assert "over the limit of 268,435,456" in app.error[0].value
    app.number_input(key="dp_tokens").set_value(8).run()  # stream fits; 48 * 4096^2 weights do not
    assert "weights (L layers of 1·d² each), over the limit" in app.error[0].value


def test_no_placement_asks_for_one(app):
    _open(app)
    app.multiselect(key="dp_placements").set_value([]).run()
    assert "Pick at least one placement" in app.error[0].value


def test_one_placement_is_one_simulation_and_its_cosines_take_the_first_column(app):
    _open(app)
    app.multiselect(key="dp_placements").set_value(["none"]).run()
    assert not app.exception
    captions = [c.value for c in app.caption]
    assert any(c.startswith("One simulation, ") for c in captions), captions
    assert not any("1 simulations" in c for c in captions)
    held = [[c.proto.id for c in column.get("plotly_chart")] for column in app.columns]
    where = [i for i, ids in enumerate(held) if any("dp_cos" in i_d for i_d in ids)]
    assert len(where) == 1 and not any("dp_x0" in i_d for ids in held for i_d in ids)
    # the column before it is the previous row's second: the update chart's
    assert any("dp_update" in i_d for i_d in held[where[0] - 1])


@pytest.mark.slow  # trains two runs
def test_training_lab_trains_two_runs_and_reports_outcomes(app):
    _open(app, "training")
    app.number_input(key="dp_steps").set_value(50).run()
    app.button(key="dp_train").click().run(timeout=120)
    assert not app.exception
    lines = " ".join(m.value for m in app.markdown)
    assert "Run A (Pre-Norm):" in lines and "Run B (Post-Norm):" in lines  # one colon each
    assert "over its last 30 steps a mean loss of" in lines  # not one noisy last step
    names = _chart_names(app, "dp_loss")
    assert names[:2] == ["Run A (Pre-Norm)", "Run B (Post-Norm)"]
    # kept for the next visitor, said so, and trained again on a click
    assert "Runs are kept on this server" in " ".join(c.value for c in app.caption)
    again = AppTest.from_file(APP, default_timeout=120)  # another visitor, the same server
    again.query_params["lang"] = "en"
    _open(again.run(), "training")
    again.number_input(key="dp_steps").set_value(50).run()
    assert "Run A (Pre-Norm):" in " ".join(m.value for m in again.markdown)  # at once
    again.button(key="dp_train_again").click().run(timeout=120)
    assert not again.exception
    assert "Run A (Pre-Norm):" in " ".join(m.value for m in again.markdown)


def test_depth_page_in_chinese(app):
    app.selectbox(key="language_select").select("zh").run()
    _open(app)
    assert app.title[0].value == "深度"


def test_wide_stacks_clip_the_sweep_instead_of_crashing(app):
    _open(app, "sweep")
    app.selectbox(key="dp_d").select(2048).run()
    assert not app.exception and not app.error
    captions = " ".join(c.value for c in app.caption)
    assert "the sweep uses L = 6, 12, 24, 48" in captions
    # the intro names the range the chart draws, not the depths the limits cut away
    assert any("against depth L (6 to 48)" in m.value for m in app.markdown)
    assert any("Run the sweep" in b.label for b in app.button)


@pytest.mark.slow  # simulates the stack
def test_post_norm_level_is_measured_next_to_the_theory(app):
    _open(app)
    notes = " ".join(c.value for c in app.caption)
    # defaults (linear sublayer, GELU, std 0.0625) leave Lemma 2: the level is not near 3/2
    assert "measures 2.00 here, averaged over 48 layers" in notes and "Lemma 2 gives 3/2" in notes
    assert "here it is a reference, not a prediction" in notes
    app.selectbox(key="dp_sublayer").select("transformer").run()
    app.selectbox(key="dp_activation").select("relu").run()
    notes = " ".join(c.value for c in app.caption)
    assert "measures 1.50 here" in notes and "Its assumptions hold for this stack" in notes


def test_dyt_in_the_norms_place_is_not_said_to_renormalise(app):
    """DyT holds no mean square: Post-Norm's stream shrinks, and neither the level of 1 nor a
    norm's √(1 + g) per layer is claimed for it."""
    _open(app)
    for key, value in (("dp_sublayer", "mlp"), ("dp_norm", "dyt"), ("dp_init", "fan_in")):
        app.selectbox(key=key).select(value).run()
    assert not app.exception
    notes = " ".join(c.value for c in app.caption)
    assert "DyT in the norms' place does not renormalize" in notes and "×10⁻" in notes
    assert (
        "renormalizes after every add" not in notes and "divides x + F(x) by its RMS" not in notes
    )
    assert not any("(1 + g)" in (name or "") for name in _chart_names(app, "dp_x0"))


def test_lemma2_overlays_only_with_the_placements_they_describe(app):
    _open(app)
    app.multiselect(key="dp_placements").set_value(["deepnorm", "peri", "olmo2"]).run()
    assert not app.exception
    names = _chart_names(app, "dp_residual")
    assert not any("Lemma 2" in (name or "") for name in names) and "3/2" not in names
    notes = " ".join(c.value for c in app.caption)
    assert "Lemma 2" not in notes
    app.multiselect(key="dp_placements").set_value(["post"]).run()
    names = _chart_names(app, "dp_residual")
    assert "3/2" in names and not any("Lemma 2" in (name or "") for name in names)  # no band
    notes = " ".join(c.value for c in app.caption)  # the caption names what is drawn
    assert "the 3/2 level is a reference" in notes and "band" not in notes
    app.multiselect(key="dp_placements").set_value(["pre", "none"]).run()
    notes = " ".join(c.value for c in app.caption)
    assert "so the shaded band is a reference" in notes and "3/2" not in notes


def test_only_the_chosen_section_is_drawn(app):
    _open(app)
    assert app.session_state["dp_section"] == "stack"
    assert {"dp_layers", "dp_d"} <= {n.key for n in app.number_input} | {
        s.key for s in app.selectbox
    }
    assert not [b for b in app.button if b.key == "dp_train"]  # the training lab is not drawn
    assert not any("Run the sweep" in b.label for b in app.button)


def test_training_lab_shows_its_own_settings_not_the_stacks(app):
    _open(app)
    app.number_input(key="dp_layers").set_value(12).run()
    _open(app, "training")
    keys = {w.key for w in (*app.number_input, *app.selectbox, *app.multiselect)}
    assert {"dp_steps", "dp_train_layers", "dp_task"} <= keys
    assert not keys & {"dp_layers", "dp_d", "dp_sublayer", "dp_norm", "dp_placements"}
    assert [b for b in app.button if b.key == "dp_train"]
    app.session_state["dp_section"] = "stack"
    app.run()
    assert app.number_input(key="dp_layers").value == 12  # kept while hidden


def test_wiring_labels_the_stream_with_subscripts_and_the_output(app):
    _open(app, "wiring")
    texts = []
    for chart in app.get("plotly_chart"):
        layout = json.loads(chart.proto.spec)["layout"]
        texts += [a.get("text", "") for a in layout.get("annotations", [])]
    # Post-Norm's diagram ends on the next layer
    assert STREAM_IN in texts and STREAM_OUT in texts
    assert not any("{" in text or "x_" in text for text in texts)
    assert "output" in texts  # Pre-Norm's ends on its final norm: the model's output


@pytest.mark.parametrize(
    "lang, said",
    [("en", "One line here is several runs"), ("zh", "这里的一条线其实是几次运行")],
)
def test_traces_that_coincide_are_named_with_the_reason(app, lang, said):
    """The Peri-Norm / OLMo 2 lesson's state: three runs, two visible lines."""
    if lang == "zh":
        app.selectbox(key="language_select").select("zh").run()
    app.session_state["dp_placements"] = ["pre", "peri", "olmo2"]  # as the lesson's link does
    app.session_state["dp_init"] = "fixed"
    _open(app)
    notes = [i.value for i in app.info if said in i.value]
    assert len(notes) == 1, [i.value for i in app.info]
    names = notes[0].split("runs: ")[-1].split("运行：")[-1].split("。")[0].split(". ")[0]
    assert "Peri-Norm" in names and "OLMo 2" in names and "Pre-Norm" not in names
    assert ("norm on the branch output" in notes[0]) or ("分支输出上做归一化" in notes[0])
    assert ("curves below coincide too" in notes[0]) or ("也同样重合" in notes[0])
    if lang == "zh":
        assert "、OLMo 2" in names  # an enumeration comma, not ", "


def test_wiring_shows_only_what_its_diagrams_draw_and_keeps_the_rest(app):
    """The diagrams draw the placements and the final norm: the stack's other settings are
    not offered there (changing them changed nothing), and they stay as the link set them."""
    app.session_state["dp_layers"] = 1000  # past the engine's limit, but not drawn here
    app.session_state["dp_d"] = 4096
    _open(app, "wiring")
    keys = {w.key for kind in ("number_input", "selectbox", "toggle") for w in app.get(kind)}
    assert "dp_final" in keys and not keys & {"dp_layers", "dp_d", "dp_tokens", "dp_norm"}
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in app.get("plotly_chart")]
    # Post-Norm and Pre-Norm, each in the layouts a narrower column takes (one row, two, three)
    assert not app.error and [t.split(" — ")[0] for t in dict.fromkeys(titles)] == [
        "Post-Norm",
        "Pre-Norm",
    ]
    assert titles.count(titles[0]) == 2 and len(titles) == 5  # Post-Norm draws no final norm
    assert app.session_state["dp_layers"] == 1000 and app.query_params["dp_layers"] == "1000"


def test_a_stack_past_the_engines_limit_is_refused_before_any_work(app):
    """1,000 layers of width 4,096 draw 16.8 billion weights: the engine's limit is said,
    and nothing is simulated or drawn."""
    app.session_state["dp_layers"] = 1000
    app.session_state["dp_d"] = 4096
    _open(app, "stack")
    assert any("16,777,216,000 weights" in e.value for e in app.error)
    assert not app.get("plotly_chart")


def test_a_sweep_with_no_depth_left_names_the_limit_its_shallowest_depth_is_over(app):
    _open(app, "sweep")
    app.selectbox(key="dp_sublayer").select("mlp").run()
    app.selectbox(key="dp_d").select(2048).run()
    app.number_input(key="dp_tokens").set_value(1024).run()
    assert not app.exception
    assert any(
        "within the simulator's limits, so there is no sweep" in w.value for w in app.warning
    )
    # L = 6, the sweep's shallowest depth, is over the memory budget (1.55 GiB at its peak);
    # the advice leaves out L, which the sweep sets itself
    refusal = " ".join(e.value for e in app.error)
    assert "At the sweep's L = 6" in refusal and "over the budget of 1.50 GiB" in refusal
    assert "lower d or T." in refusal and "Lower L" not in refusal
    assert not any("Run the sweep" in b.label for b in app.button)


def test_the_sweep_sets_l_itself_so_it_has_no_l_box_and_a_links_l_refuses_nothing(app):
    """The sweep runs its own depths: an L box there changed nothing, and a link's L past the
    engine's limit refused the whole sweep.  The L is kept for the other sections."""
    app.session_state["dp_layers"] = 1000
    app.session_state["dp_d"] = 4096
    _open(app, "sweep")
    assert "dp_layers" not in {n.key for n in app.number_input}
    assert not app.error and not app.exception
    assert any("the sweep uses L = " in c.value for c in app.caption)
    assert any("Run the sweep" in b.label for b in app.button)
    app.session_state["dp_section"] = "stack"
    app.run()
    assert app.number_input(key="dp_layers").value == 1000


def test_one_token_through_wide_layers_waits_for_a_click(app):
    """The draws do not shrink with the tokens: L = 16, d = 4096, T = 1 makes 171 times
    the default's draws (18 s here) and 1.8 times its multiply-adds, so it waits."""
    _open(app)
    app.number_input(key="dp_layers").set_value(16).run()
    app.number_input(key="dp_tokens").set_value(1).run()
    app.selectbox(key="dp_d").select(4096).run()
    assert not app.exception
    assert [b for b in app.button if b.key == "dp_simulate"]
    assert any("× the work of the default settings" in c.value for c in app.caption)


def test_pre_norms_update_note_needs_a_pre_norm_line(app):
    """The note on Pre-Norm's 1/√l sat under a relative-update chart with no Pre-Norm line."""
    note = "Deep Pre-Norm layers barely change the stream"
    _open(app)
    assert any(note in c.value for c in app.caption)  # Post-Norm and Pre-Norm
    app.multiselect(key="dp_placements").set_value(["post", "deepnorm", "none"]).run()
    assert not app.exception and app.get("plotly_chart")
    assert not any(note in c.value for c in app.caption)


@pytest.mark.parametrize("lang, offered", [("en", True), ("zh", False)])
def test_placements_offer_select_all_only_where_streamlit_says_it_in_the_pages_language(
    app, lang, offered
):
    """Streamlit 1.67 writes the multiselect's "Select all" in English whatever the page's
    language, and no parameter names it: a Chinese page does without it."""
    if lang == "zh":
        app.selectbox(key="language_select").select("zh").run()
    _open(app, "wiring")  # no simulation needed
    assert bool(app.multiselect(key="dp_placements").proto.select_all) is offered


def test_a_sweep_without_the_final_norm_says_why_it_draws_no_theorem_1_slopes(app):
    app.session_state["dp_final"] = False
    _open(app, "sweep")
    run = [b for b in app.button if "Run the sweep" in b.label]
    if run:
        run[0].click().run()
    captions = " ".join(c.value for c in app.caption)
    assert "Without the final norm the stack is not Theorem 1's Pre-Norm (Pre-LN)" in captions
    assert "its slopes are a reference here" not in captions  # none drawn to refer to
