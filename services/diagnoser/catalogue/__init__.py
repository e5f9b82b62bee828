"""The hypothesis catalogue: facts read off the evidence, the hypotheses scored from supporting and
counter facts, and the decision to name one or abstain."""
