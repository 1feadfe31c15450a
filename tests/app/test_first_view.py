"""The first view sends no code block for a closed box; opening the box shows its code.

A code block makes the browser fetch and run the syntax highlighter (1.5 MB of JavaScript),
which slowed every fresh page's first render (benchmarks/RESULTS.md, "First render"); the
share box and the Vector Lab's formula box are therefore filled only once opened.
"""


def test_closed_boxes_send_no_code_block(app):
    assert not app.exception
    assert not app.code  # neither the share link nor the formula's source
    labels = [box.label for box in app.expander]
    assert "Share this view" in labels
    assert "The formula in code (engine/norms/reference.py)" in labels


def test_opening_the_share_box_shows_the_link(app):
    app.session_state["share_open"] = True
    app.run()
    assert not app.exception
    assert any("lang=en" in block.value for block in app.code)
    # what the link does not carry is said where the link is (a pasted config, an upload)
    help_text = " ".join(c.value for c in app.sidebar.caption)
    assert "anyone who opens it sees the same configuration" in help_text
    assert "a config you paste stay in this browser session: they are not in the link" in help_text


def test_opening_the_formula_box_shows_the_kinds_formula(app):
    app.selectbox(key="vl_norm").select("rmsnorm").run()
    app.session_state["formula_open"] = True
    app.run()
    assert not app.exception
    source = " ".join(block.value for block in app.code)
    assert "def rms_norm(" in source
    assert "def layer_norm(" not in source
