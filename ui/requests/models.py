"""The Model catalog's requests: the config.json the calculator counts, read into a shape
(a pasted one is the user's: kept in its browser session only, ``private=True``), and the
catalog families it is read as.  ``inputs`` is the ``CalculatorInputs`` drawn
(ui/widgets/models.py)."""

from __future__ import annotations

from engine.config import ModelShape
from engine.errors import EngineError
from engine.models.config_json import parse_config
from engine.models.families import Catalog, Family
from ui.compute import compute
from ui.errors import error_text


def read_config(
    inputs, families: Catalog
) -> tuple[ModelShape | None, Family | None, tuple[Family, ...], tuple[str, ...]]:
    """The config of ``inputs`` as a ModelShape, the catalog family it was read as and the
    other families whose configs carry the same model_type; or no shape and the translated
    reason it cannot be read (no shape and no reason while the box is empty)."""
    if not inputs.text.strip():
        return None, None, (), ()
    try:
        shape = compute(parse_config, inputs.text, inputs.family_id, private=inputs.pasted)
    except EngineError as error:
        return None, None, (), (error_text(error),)
    family = families.family(shape.family)
    shared = {f.id: f for m in family.model_types for f in families.sharing_model_type(m)}
    others = tuple(f for f in shared.values() if f.id != family.id) if inputs.pasted else ()
    return shape, family, others, ()
