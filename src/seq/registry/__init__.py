"""Registry plane: benchmarks and policies registered as versions, where the version is the content."""
