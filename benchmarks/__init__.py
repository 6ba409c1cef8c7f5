"""Performance goals, each measured side by side in one run and printed as ratios."""


def verdict(met: bool) -> str:
    """PASS or FAIL: the word a whole run is searched for."""
    return "PASS" if met else "FAIL"
