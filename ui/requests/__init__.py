"""What a page asks the engine for, through ``ui/compute.py``: light ``compute`` calls and
heavy ``run_heavy`` requests with their button, labels and progress; one module per page,
and ``linked.py``, the refusal of a linked id the server does not list (two pages')."""
