"""The URL contract: every page's query parameters, how a link is read, and the address bar
as the page's state.

A share link is a public API: workshops are prepared days ahead from links, so each page's
parameters are listed in ``pages.py`` with their meaning, and ``tests/ui/test_url_params.py``
pins them.  Values are stable ids (``rmsnorm``, ``attention``), never display names, so a link
made in one language opens the same view in the other.  Links written before this contract (which
carried display names such as ``vl_norm=RMSNorm`` or ``dp_sublayer=类注意力混合器``, and the
Depth page's ``tl_*`` keys) still open their view.

``codec.py`` reads and writes one value; ``address_bar.py`` holds the page's state in the
address bar.  ``app.py`` calls, around every page run: ``seed`` (URL -> widget state,
before the widgets exist; each widget's ``key`` is its parameter's ``key``),
``show_notices`` (what the URL asked for that was refused), the page, then ``publish``
(widget state -> URL, stable ids, defaults omitted) and ``share_box``.  The URL is untrusted
input: a value out of range, unknown or malformed is refused with a message naming the
parameter and what is accepted; a list keeps its known items; nothing is clamped or dropped
silently.
"""
