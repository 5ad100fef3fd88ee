"""Render and write: the producers' registry, templates, serialisers and the confined writer."""
