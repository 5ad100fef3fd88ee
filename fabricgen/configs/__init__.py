"""The switches' startup configs (`devices.py`) and the Ansible inventory that pushes them
(`ansible.py`): producers `(plan, context) -> {path: text}` that only read the plan.
"""
