"""Diffs for change review: plan against plan (`inventory.py`) and running against rendered
configs (`running.py`, remediation and rollback with hier_config)."""
