"""``EngineError``: every refusal of the engine, in a form a page can translate.

``key`` names the message (``errors.<key>`` in ``locales/<lang>/errors.toml``) and
``params`` fill it in; ``str(error)`` is a plain English sentence for Python and CLI users.
It is a ``ValueError``, so callers that only know "bad value" can catch it as one.
"""

from __future__ import annotations


class EngineError(ValueError):
    """A value the engine refuses: what was wrong and what is accepted."""

    def __init__(self, key: str, params: dict | None = None, message: str | None = None):
        self.key = key
        self.params = dict(params or {})
        super().__init__(message or f"{key}: {self.params}")

    def __reduce__(self):
        # Rebuilt with key and params when pickled (a Dask worker's refusal reaches the
        # client whole); the default would pass only the message back as the key.
        return (type(self), (self.key, self.params, str(self)))
