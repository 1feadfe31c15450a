"""Page text as a test compares it: ``ui/i18n.py`` binds an expression in running text with
no-break spaces ("σ = 1.1180" stays on one line) and a number in e-notation with a
non-breaking hyphen ("1.1e‑15" stays whole), which a test's literal writes as spaces and "-"."""


def plain(text: str) -> str:
    return text.replace("\u00a0", " ").replace("\u2011", "-")
