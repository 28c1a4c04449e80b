"""Runs: datasets in, the batch runner, the SQLite store, exports out."""
