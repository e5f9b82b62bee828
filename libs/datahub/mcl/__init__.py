"""DataHub MetadataChangeLog (MCL) events: decoding, a metadata mirror fed by them, and downstream impact.

Decoding, cheapest step first (every step treats its input as untrusted and fails with
:class:`decode_error.MclDecodeError`):

1. :mod:`wire` (Confluent-framed Avro; writer schema by id through :mod:`schema_registry`, or the SDK's
   shipped schema from :mod:`avro_schema` when no registry is configured) or :mod:`json_mcl` turn
   bytes into an MCL record;
2. :mod:`prefilter` drops records whose entityType/aspectName/changeType the mirror does not keep,
   before the aspect JSON is parsed;
3. :mod:`decoder` checks the envelope and parses the aspect JSON strictly (:mod:`strict_json`) into a
   :class:`events.DecodedMcl`, whose typed SDK aspect (:mod:`aspect_decode`, the expensive step) is
   built only when read.

Mirror: :mod:`mirror` applies decoded MCLs; :mod:`aspect_facts` says what an aspect contributes
(lineage pairs from the SDK's Relationship annotations, column pairs, deployments, owners, removal);
:mod:`lineage_index` and :mod:`column_lineage_index` hold them; :mod:`mirror_store` persists aspects,
facts and offsets in SQLite. Impact: :mod:`impact_walk` (entity level), :mod:`field_impact_walk`
(column level), assembled by :mod:`mirror_impact` into :class:`impact.ImpactReport`.

Benchmarks: :mod:`bench` over :mod:`bench_workload`.
"""
