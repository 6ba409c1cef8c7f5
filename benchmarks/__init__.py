"""Performance goals, each measured side by side in one run and printed as ratios."""
