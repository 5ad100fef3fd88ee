"""Checks of a built plan (and growth headroom): they read the plan only."""
