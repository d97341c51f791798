"""Memory formation: records, perceptual encoding, consolidation, semantic replay, stores."""
