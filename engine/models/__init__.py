"""Real model families' normalization: a reviewed catalog and a parameter / cost calculator.

Nothing here imports transformers: the tests check the catalog against it.  The package
re-exports nothing: import the module that defines a name.
"""
