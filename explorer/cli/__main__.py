"""``python -m explorer.cli``: the ``explorer`` command (child processes start it this way)."""

from explorer.cli import main

raise SystemExit(main())
