"""Authoring plane: what users write (benchmarks, policies, conditions, declarations)."""
