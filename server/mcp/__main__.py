"""`python -m server.mcp`: the same as the `statsapi-mcp` command."""

import sys

from server.mcp.main import main

sys.exit(main())
