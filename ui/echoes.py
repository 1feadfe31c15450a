"""Whether a widget's reported change is the user's or the browser's stale echo."""

from __future__ import annotations

from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx


def echoed() -> bool:
    """Whether the change a callback of a widget outside every section handles may be the
    browser's echo rather than the user's.

    The browser reports every widget's value with each request, and a fragment's timer
    (``run_every``), or a click in a page's section, can send one while the page's previous
    run is still being drawn: it carries the value the browser showed before that run set
    the widget (a class learner's lesson picker just after "everyone to lesson N").  A
    click or pick on a widget outside every fragment reruns the whole page, so its change
    arriving with a fragment's rerun is such an echo.  A text box is the exception: the
    browser sends its change when it loses focus, in one request with a click in a section
    when both fall in one task (a phone), so its callback also compares the value.  Only
    for widgets outside every section and fragment.
    """
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)
