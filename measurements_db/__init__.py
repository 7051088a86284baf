"""The evidence store: SQLAlchemy models, engine and sessions, `cake-evidence/1` import/export, queries.

Public entry points: `measurements_db.engine.open_store` / `resolve_url`,
`measurements_db.evidence_io.parse_evidence` / `import_evidence` / `export_evidence`,
`measurements_db.queries.workload_evidence` (and `arches`, `runs`, `run_detail`, `stats`),
`measurements_db.bundle.write_bundle`, `measurements_db.synthetic.generate_evidence`. The plain-data
interface to the solver is `measurements_db.aggregates` (no SQLAlchemy there). See docs/store.md.
"""
