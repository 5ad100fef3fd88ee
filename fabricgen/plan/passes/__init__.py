"""The planner's passes, one module each, in the order `build_plan` runs them (docs/architecture.md)."""
