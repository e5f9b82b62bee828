"""Scenario bundles: one model incident as plain files (see docs/scenarios.md)."""
