"""Rerun the attacks of issue 12 against the real service and measure what other clients see."""
