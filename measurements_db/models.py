"""SQLAlchemy 2.x models of the evidence store (one table per `cake-evidence/1` record kind).

Every record kind has a natural unique key, so importing the same evidence twice adds nothing and
two importers racing on the same file both succeed (`INSERT ... ON CONFLICT DO NOTHING`):

* runs: ``run_id``;
* programs: ``(name, fingerprint)``;
* workloads: ``(arch, H, x_dtype, w_dtype, form)``;
* timing blocks: ``(run, workload, program, op, T, session, round, position, copy, timer, l2)``;
* accuracy records: ``(run, workload, program, T, family, rec_key)`` where ``rec_key`` is
  ``seed:<seed>`` for a per-input record and ``agg:<digest of the record>`` for an aggregate (SQL
  unique constraints treat NULL as distinct, so a nullable seed cannot be part of the key).

``accuracy_summaries`` holds one row per (run, workload, program, T, family): that run's family
aggregate (inputs, worst, median, eager worst and median, verdict) exactly as
`aggregates.aggregate_records` computes it per run. It is derived data, recomputed inside the
import transaction for every group the import adds records to, so the solver's query reads a few
thousand rows instead of every per-input record.

Timing samples are stored exactly, as packed little-endian float64 (``samples``), with the block's
sample count and median precomputed at import; pooled and per-session medians are recomputed from
the samples by the query layer. Column names are lower case (``h``, ``t``) so hand-written SQL on
PostgreSQL needs no quoting; the Python attributes keep the evidence names (``H``, ``T``).

The schema is created and changed only by the Alembic migrations in ``measurements_db/migrations``;
a test checks that the migrations and these models agree.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, str: String}


class Meta(Base):
    """Store-wide facts: ``schema_version`` and, in the embedded cache, ``bundle_sha256``."""

    __tablename__ = "cake_meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Run(Base):
    """Provenance of one measuring process or one published record, plus where it was imported from."""

    __tablename__ = "runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(unique=True)
    source: Mapped[str]
    arch: Mapped[str] = mapped_column(index=True)
    gpu: Mapped[str]
    sm_count: Mapped[int] = mapped_column(Integer)
    started: Mapped[str]  # ISO 8601 UTC exactly as recorded (kept as text for a byte-exact export)
    host: Mapped[str | None]
    driver: Mapped[str | None]
    cuda: Mapped[str | None]
    torch: Mapped[str | None]
    triton: Mapped[str | None]
    package_version: Mapped[str | None]
    git_sha: Mapped[str | None]
    citation: Mapped[str | None]
    note: Mapped[str | None]
    extra: Mapped[dict[str, Any] | None]
    # Where the run entered this store (first import wins: a re-import adds nothing).
    file_name: Mapped[str]
    file_sha256: Mapped[str] = mapped_column(String(64))
    imported_at: Mapped[str]  # ISO 8601 UTC


class Program(Base):
    """What an implementation is. A changed kernel has a new fingerprint and so is a new row."""

    __tablename__ = "programs"
    __table_args__ = (UniqueConstraint("name", "fingerprint", name="uq_programs_name_fingerprint"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(index=True)
    fingerprint: Mapped[str]
    op: Mapped[str]
    deterministic: Mapped[bool] = mapped_column(Boolean)
    family: Mapped[str]
    runnable: Mapped[bool] = mapped_column(Boolean)
    description: Mapped[str | None]
    extra: Mapped[dict[str, Any] | None]


class Workload(Base):
    """(arch, H, x_dtype, w_dtype, form): the solver's unit of work (`aggregates.WorkloadKey`)."""

    __tablename__ = "workloads"
    __table_args__ = (
        UniqueConstraint("arch", "h", "x_dtype", "w_dtype", "form", name="uq_workloads_key"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    arch: Mapped[str]
    H: Mapped[int] = mapped_column("h", Integer)
    x_dtype: Mapped[str]
    w_dtype: Mapped[str]
    form: Mapped[str]


class TimingBlock(Base):
    """One (session, round, implementation, op) block of per-replay samples, or a published median."""

    __tablename__ = "timing_blocks"
    __table_args__ = (
        UniqueConstraint(
            "run_pk", "workload_id", "program", "op", "t", "session", "round", "position", "copy",
            "timer", "l2", name="uq_timing_blocks_key",
        ),
        Index("ix_timing_blocks_point", "workload_id", "program", "op", "t"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    workload_id: Mapped[int] = mapped_column(ForeignKey("workloads.id"))
    program: Mapped[str]
    op: Mapped[str]
    T: Mapped[int] = mapped_column("t", BigInteger)
    session: Mapped[str]
    round: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)
    copy: Mapped[int] = mapped_column(Integer)
    timer: Mapped[str]
    l2: Mapped[str]
    samples: Mapped[bytes | None] = mapped_column(LargeBinary)  # packed '<f8'; NULL: no samples_us
    n_samples: Mapped[int] = mapped_column(Integer)  # len(samples_us), 0 without samples
    block_median: Mapped[float | None] = mapped_column(Double)  # median of this block's samples
    median_us: Mapped[float | None] = mapped_column(Double)  # as recorded (published figures)
    n: Mapped[int | None] = mapped_column(BigInteger)  # as recorded
    extra: Mapped[dict[str, Any] | None]


class AccuracyRecord(Base):
    """One accuracy record: per input (``seed`` set, ``inputs`` 1) or an aggregate over inputs."""

    __tablename__ = "accuracy_records"
    __table_args__ = (
        UniqueConstraint("run_pk", "workload_id", "program", "t", "family", "rec_key",
                         name="uq_accuracy_records_key"),
        Index("ix_accuracy_records_point", "workload_id", "program", "t"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    workload_id: Mapped[int] = mapped_column(ForeignKey("workloads.id"))
    program: Mapped[str]
    T: Mapped[int] = mapped_column("t", BigInteger)
    family: Mapped[str]
    rec_key: Mapped[str]
    seed: Mapped[int | None] = mapped_column(BigInteger)
    inputs: Mapped[int] = mapped_column(Integer)
    dw_err_over_tol_max: Mapped[float | None] = mapped_column(Double)
    dw_err_over_tol_median: Mapped[float | None] = mapped_column(Double)
    dw_rel_l2: Mapped[float | None] = mapped_column(Double)
    eager_err_over_tol_max: Mapped[float | None] = mapped_column(Double)
    eager_err_over_tol_median: Mapped[float | None] = mapped_column(Double)
    dx_err_over_tol_max: Mapped[float | None] = mapped_column(Double)
    rstd_rel_l2: Mapped[float | None] = mapped_column(Double)
    rstd_form: Mapped[str | None]
    verdict: Mapped[str | None]
    qualified_by_source: Mapped[bool | None] = mapped_column(Boolean)
    extra: Mapped[dict[str, Any] | None]


class AccuracySummary(Base):
    """One run's aggregate of one family at one (workload, program, T); maintained at import."""

    __tablename__ = "accuracy_summaries"
    __table_args__ = (
        UniqueConstraint("run_pk", "workload_id", "program", "t", "family", name="uq_accuracy_summaries_key"),
        Index("ix_accuracy_summaries_workload", "workload_id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    workload_id: Mapped[int] = mapped_column(ForeignKey("workloads.id"))
    program: Mapped[str]
    T: Mapped[int] = mapped_column("t", BigInteger)
    family: Mapped[str]
    records: Mapped[int] = mapped_column(Integer)
    inputs: Mapped[int] = mapped_column(Integer)
    worst: Mapped[float | None] = mapped_column(Double)
    median: Mapped[float | None] = mapped_column(Double)
    eager_worst: Mapped[float | None] = mapped_column(Double)
    eager_median: Mapped[float | None] = mapped_column(Double)
    verdict: Mapped[str | None]
    qualified_by_source: Mapped[bool | None] = mapped_column(Boolean)
