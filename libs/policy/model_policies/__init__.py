"""Model policies a model's CI submits: the central policy's onboarding section, the check of a submission
against the central policy, and the pins by model (read by the detector, managed by `modelguard policy`)."""
