"""``python -m explorer.cli``: the ``explorer`` command (child processes start it this way)."""

from explorer.cli import main

if __name__ == "__main__":  # importing it (documentation tools do) runs nothing
    raise SystemExit(main())
