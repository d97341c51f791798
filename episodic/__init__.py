"""episodic: streaming episodic memory for audiovisual streams.

This folder is the composition root (configuration loading, the ingest pipeline's wiring, the
CLI, the gRPC server, the Kafka worker); the layers it wires install beside it as
``episodic.core``, ``episodic.stream``, ``episodic.memory``, ``episodic.retrieval``,
``episodic.reasoning`` and ``episodic.services``. Importing any of them changes nothing in the
process: process-wide settings are applied by the console entry point (:mod:`episodic.process`).
"""
