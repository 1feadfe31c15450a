"""Real model families' normalization: a reviewed catalog and a parameter / cost calculator.

- ``catalog.toml``   the data: one row per family, every row with its sources
- ``families.py``    what a row is (``Family``, ``Stack``, ``CatalogRow``, ``Catalog``)
- ``loader.py``      reads the file (``catalog()``)
- ``config_json.py`` a pasted config.json -> ``ModelShape`` (``parse_config``)
- ``calculator.py``  norm parameters and their share (``norm_budget``), bytes and FLOPs per
                     token and what a fused add + norm saves (``norm_cost``)

Nothing here imports transformers: the tests check the catalog against it.
"""

from engine.models.calculator import NormBudget, NormCost, NormGroup, norm_budget, norm_cost
from engine.models.config_json import FIELD_ALIASES, parse_config
from engine.models.families import Catalog, CatalogRow, Family
from engine.models.loader import catalog

__all__ = [
    "FIELD_ALIASES",
    "Catalog",
    "CatalogRow",
    "Family",
    "NormBudget",
    "NormCost",
    "NormGroup",
    "catalog",
    "norm_budget",
    "norm_cost",
    "parse_config",
]
