"""Diagnoser domain logic: evidence from code, data and metadata; ranked hypotheses; a decision or abstention."""
