"""Widget groups, one module per page: each reads its widgets and returns a frozen config."""
