"""Load and validate: safe YAML with positions, the JSON Schema and its defaults, the document checks."""
