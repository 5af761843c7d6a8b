"""``python -m memory_chains`` runs the CLI."""

from memory_chains.cli import main

raise SystemExit(main())
