"""Ingest: decoding, adaptive frame/audio sampling, boundary detection, incremental segmentation."""
