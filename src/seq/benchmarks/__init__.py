"""Built-in benchmarks, usable by name (each simulator is an optional extra)."""
