"""The URL contract: every page's query parameters, how a link is read, and the address bar
as the page's state.

A share link is a public API: workshops are prepared days ahead from links, so each page's
parameters are listed in ``pages.py`` and ``tests/ui/test_url_params.py`` pins them.  Values
are stable ids, never display names, so a link made in one language opens the same view in
the other; links written before this contract (display names such as ``vl_norm=RMSNorm``, the
Depth page's ``tl_*`` keys) still open their view.  ``codec.py`` reads and writes one value,
``address_bar.py`` holds the page's state in the address bar (``docs/architecture.md``, "The
URL contract": the untrusted link's refusals).
"""
