"""Profiles of tabular data (the windows' CSVs and feature matrices) and the distances between them."""
