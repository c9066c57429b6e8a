"""Engine plane: plan work items, run them through the one episode loop on a backend."""
