"""Page text as a test compares it: ``ui/i18n.py`` binds an expression in running text with
no-break spaces ("σ = 1.1180" stays on one line), which a test's literal writes as spaces."""


def plain(text: str) -> str:
    return text.replace("\u00a0", " ")
