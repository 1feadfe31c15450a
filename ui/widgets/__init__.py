"""Widget groups, one module per page: each reads its widgets and returns a frozen config.

Every widget has its URL parameter's key (``ui/url/``), so the address bar is a share link
for the page's whole state.
"""
