"""DataHub MetadataChangeLog (MCL) events: decoding, a metadata mirror fed by them, and downstream impact.

Decoding, cheapest step first (every step treats its input as untrusted and fails with
:class:`decode_error.MclDecodeError`):

1. :mod:`wire` (Confluent-framed Avro; writer schema by id through :mod:`schema_registry`, or the SDK's
   shipped schema from :mod:`avro_schema` when no registry is configured) or :mod:`json_mcl` turn
   bytes into an MCL record;
2. :mod:`decoder` validates every record: the envelope (change type, the URN with :mod:`urn_check`, the
   entity type and aspect with :mod:`entity_registry`), each aspect value's size (:mod:`intake_limits`,
   the central policy), content type, UTF-8 and strict JSON (:mod:`strict_json`);
3. :mod:`prefilter` then drops records whose entityType/aspectName/changeType the mirror does not keep,
   without converting them to SDK classes;
4. a kept record's aspect is checked against its SDK class's schema (:mod:`aspect_shape`), and only when that
   check is not certain converted to its SDK class and validated (:mod:`aspect_decode`, the expensive step),
   into a :class:`events.DecodedMcl`.

Mirror: :mod:`mirror` applies decoded MCLs; :mod:`aspect_facts` (from SDK objects) and :mod:`aspect_facts_json`
(from JSON, what the mirror uses) say what an aspect contributes (lineage pairs from the SDK's Relationship
annotations, column pairs, deployments, owners, removal);
:mod:`lineage_index` and :mod:`column_lineage_index` hold them; :mod:`mirror_store` is where it persists
(:mod:`mirror_store_sqlite`, :mod:`mirror_store_postgres`, chosen by :mod:`mirror_store_choice`);
:mod:`mirror_bootstrap` fills an empty mirror from MCP files. Impact: :mod:`impact_walk` (entity level),
:mod:`field_impact_walk` (column level), assembled by :mod:`mirror_impact` into :class:`impact.ImpactReport`.

Benchmarks: ``benchmarks/mcl.py`` (``make bench``), outside the production packages.
"""
