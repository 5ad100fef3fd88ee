"""Types and facts every layer reads: the plan's frozen dataclasses, diagnostics, units, the hardware catalog and media rules."""
