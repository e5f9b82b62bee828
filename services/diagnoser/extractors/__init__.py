"""Evidence extractors: one plain function per file, each over parts of ``IncidentInputs`` (paths, frames,
metrics, change records), returning Evidence that records its figures, its strength and how it was computed."""
