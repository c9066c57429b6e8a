"""Built-in policies, usable by name."""
