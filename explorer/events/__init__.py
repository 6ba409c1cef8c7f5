"""The event log: chat packets as typed rows, kept compactly, read as DataFrames, fed to
consumers, written as Arrow tables."""
