"""Analytic FLOP and byte counts of ops and of transformer inference (pure functions)."""
