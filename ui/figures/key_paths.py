"""Plotly's parsing of property paths, kept once per path instead of redone on every update.

Every ``update_layout``, ``update_xaxes`` or ``add_annotation`` on a figure goes through
plotly's batch machinery, which writes each value changed as a dotted path ("margin.l",
"xaxis.title.text") and parses that string back with plotly's
``basedatatypes._str_to_dict_path_full`` (a split at ".[]" and at "_", not cached by plotly).
Under a class's load that parsing was a large share of the server's interpreter lock
(profiled in ``benchmarks/RESULTS.md``, "Server CPU per interaction"). Our figures use a few
hundred distinct paths, so the parse of each is kept (``functools.lru_cache``): it is a pure
function of its string (and of plotly's constant table of property names that contain "_"),
and its callers only read what it returns.

``install`` replaces the function where plotly looks it up (its module's globals); if a later
plotly has no such function there, nothing is replaced and figures are built as plotly builds
them (``tests/ui/test_figure_key_paths.py`` then fails, so an upgrade is noticed).
"""

from __future__ import annotations

import functools

from plotly import basedatatypes

PARSER = "_str_to_dict_path_full"
CACHED_PATHS = 4096  # distinct path strings kept; our figures use a few hundred


def install() -> bool:
    """Keep plotly's parse of each path string; whether plotly's parser was found."""
    parse = getattr(basedatatypes, PARSER, None)
    if parse is None:
        return False
    if not hasattr(parse, "cache_info"):  # once per process
        setattr(basedatatypes, PARSER, functools.lru_cache(maxsize=CACHED_PATHS)(parse))
    return True


install()
