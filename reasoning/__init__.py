"""Language models, prompts, answer synthesis, calibration, article writing."""
