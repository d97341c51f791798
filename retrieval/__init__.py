"""Query side: query analysis, fast retrieval, detailed recall, cross-modal association (issue 3)."""
