"""The shelf: built-in benchmarks and policies, usable by name (each simulator an optional extra)."""
