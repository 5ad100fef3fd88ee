"""Checks of an inventory document beyond its schema: control characters (`text.py`), names,
addresses, identity and settings. Each is a pure function of the document and its source map;
`fabricgen/checks/registry.py` names them and runs them, with the plan's checks.
"""

from fabricgen.inventory.validation import addresses, identity, names, settings, text

__all__ = ["addresses", "identity", "names", "settings", "text"]
