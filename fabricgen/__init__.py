"""fabricgen: infrastructure-as-code generator for AI-cluster back-end networks."""

__version__ = "0.1.0"
