"""Lessons page text: option labels, and the instructor sheet's addresses.

Pure functions: words arrive translated; no Streamlit import.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def option_label(option: str, text: str) -> str:
    """ "b", "−1.3416" -> "(b) −1.3416": how an answer is named in a verdict."""
    return f"({option}) {text}"


def app_root(page_url: str, url_path: str) -> str:
    """The app's address from the current page's address and that page's ``url_path``.

    ``http://host:8501/lessons`` -> ``http://host:8501``; a server under a base path
    (``http://host/normscope/lessons``) keeps it; the default page (``http://host:8501/``)
    is the root itself.  The query and fragment are dropped.
    """
    parts = urlsplit(page_url or "")
    path = parts.path.rstrip("/")
    if url_path and path.endswith("/" + url_path):
        path = path[: -len(url_path) - 1]
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")).rstrip("/")


def page_address(root: str, url_path: str, query: str) -> str:
    """The full address of a page with a query: ``root/url_path?query``; ``url_path`` ""
    for the app's default page, which is served at the root itself."""
    address = f"{root}/{url_path}"
    return f"{address}?{query}" if query else address
