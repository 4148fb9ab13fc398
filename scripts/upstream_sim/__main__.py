"""Entry point of ``python -m scripts.upstream_sim`` (see cli.main for the flags)."""

from .cli import main

main()
