"""Protocol buffers for the gRPC API and the Kafka media-chunk schema (issues 3 and 4)."""
