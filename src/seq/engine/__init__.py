"""Engine plane: plan work items, schedule them on a backend (local processes, Ray actors, this
process) with the one dispatcher, and run each through the one episode loop."""
