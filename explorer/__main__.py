"""``python -m explorer``: the ``explorer`` command, for an environment whose scripts folder is
not on ``PATH`` (``python -m explorer lab`` works wherever ``import explorer`` does)."""

from explorer.cli import main

if __name__ == "__main__":  # importing it (documentation tools do) runs nothing
    raise SystemExit(main())
