"""Captures on disk: recorders and their worker processes, where files live, reading a
capture back, what it covers and replaying it."""
