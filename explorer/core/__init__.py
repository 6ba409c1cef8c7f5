"""The toolkit's shared core: settings, durations, the private event loop, typed columns,
closing, process supervision and deprecations; it imports nothing of the toolkit above it."""
