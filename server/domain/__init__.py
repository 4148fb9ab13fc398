"""Pure maths and views: ratings, period figures, profiles and snapshots, UTC days (no I/O)."""
