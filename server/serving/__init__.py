"""What every request passes through in a process: the answer cache, the rate limiter and the metrics."""
