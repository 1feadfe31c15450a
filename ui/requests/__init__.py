"""What a page asks the engine for, through ``ui/compute.py``: light ``compute`` calls and
heavy ``run_heavy`` requests with their button, labels and progress; one module per page."""
