"""Composition root: configuration, the ingest pipeline wiring, the CLI."""
