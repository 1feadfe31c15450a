"""Widget groups, one module per page: each reads its widgets and returns a frozen config,
asking the engine nothing (what it names, the page asks ``ui/requests`` for)."""
