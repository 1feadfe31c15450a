"""Widget groups, one module per page: each reads its widgets and returns a frozen config.

Every widget has a page-prefixed key and is bound to the URL query (``bind="query-params"``),
so the address bar is a share link for the page's whole state.
"""
