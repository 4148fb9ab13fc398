"""Background jobs: the runner, its schedule, retention."""
