"""`python -m server`: the service's entry point (server/compose/entry.py)."""

import sys

from server.compose.entry import main

if __name__ == "__main__":
    sys.exit(main())
