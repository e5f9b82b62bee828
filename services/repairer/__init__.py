"""Repairer domain logic: named, bounded repair strategies inside a patch guard."""
