"""The Wargaming API client, its request budget, the Protocol services see, and the expected-values source."""
