"""Real model families' normalization: a reviewed catalog and a parameter / cost calculator.

- ``catalog.toml``   the data: one row per family, every row with its sources
- ``families.py``    what a row is (``Family``, ``Stack``, ``Catalog``)
- ``loader.py``      reads the file (``catalog()``)
- ``config_json.py`` a pasted config.json -> ``ModelShape`` (``parse_config``)
- ``calculator.py``  norm parameters and their share (``norm_budget``), bytes and FLOPs per
                     token and what a fused add + norm saves (``norm_cost``)

Nothing here imports transformers: the tests check the catalog against it.  The package
re-exports nothing: import the module that defines a name.
"""
