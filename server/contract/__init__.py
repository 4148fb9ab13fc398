"""The public contract: catalogue of endpoints and parameters, errors, options, rate limits, metrics."""
