"""A residual stack at initialisation: where the norm sits, and what depth does to it.

The package re-exports nothing (``engine.config`` reads ``placements`` while the simulator
needs ``engine.config``): import the module that defines a name.
"""
