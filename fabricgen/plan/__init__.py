"""Plan level: the typed inputs, the frozen plan, and the passes that build one from the other.

Below the producers (render, artifacts, OpenSM files) and the commands; above `core` only.
"""
