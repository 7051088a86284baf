"""The cake routing service (FastAPI): dashboard pages, JSON API, authenticated evidence ingest."""
