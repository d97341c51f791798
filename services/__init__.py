"""Services: where retrieval and reasoning meet.

Question answering (:mod:`.qa`, the confidence-gated MemoryQA) and article writing
(:mod:`.articles`, MARQUIS) use both lower stages and sit above them; the composition root
(CLI, gRPC server, worker) builds them.
"""
