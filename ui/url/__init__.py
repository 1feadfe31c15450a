"""The URL contract: every page's query parameters (``pages.py``), how a link's values are
read and written (``codec.py``), and the address bar as the page's state (``address_bar.py``).

A share link is a public API: workshops are prepared days ahead from links, so
``tests/ui/test_url_params.py`` pins every parameter (``docs/architecture.md``, "The URL
contract": what a link promises, the links before it that still open, what it refuses).
"""
