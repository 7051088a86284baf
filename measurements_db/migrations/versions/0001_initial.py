"""The first schema: runs, programs, workloads, timing blocks, accuracy records and summaries, cake_meta.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

SCHEMA_VERSION = 1


def upgrade() -> None:
    meta = op.create_table(
        "cake_meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )
    op.bulk_insert(meta, [{"key": "schema_version", "value": str(SCHEMA_VERSION)}])

    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("arch", sa.String(), nullable=False),
        sa.Column("gpu", sa.String(), nullable=False),
        sa.Column("sm_count", sa.Integer(), nullable=False),
        sa.Column("started", sa.String(), nullable=False),
        *[sa.Column(c, sa.String(), nullable=True) for c in (
            "host", "driver", "cuda", "torch", "triton", "package_version", "git_sha", "citation", "note")],
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("file_name", sa.String(), nullable=False),
        sa.Column("file_sha256", sa.String(64), nullable=False),
        sa.Column("imported_at", sa.String(), nullable=False),
        sa.UniqueConstraint("run_id"),
    )
    op.create_index("ix_runs_arch", "runs", ["arch"])

    op.create_table(
        "programs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("fingerprint", sa.String(), nullable=False),
        sa.Column("op", sa.String(), nullable=False),
        sa.Column("deterministic", sa.Boolean(), nullable=False),
        sa.Column("family", sa.String(), nullable=False),
        sa.Column("runnable", sa.Boolean(), nullable=False),
        sa.Column("description", sa.String(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.UniqueConstraint("name", "fingerprint", name="uq_programs_name_fingerprint"),
    )
    op.create_index("ix_programs_name", "programs", ["name"])

    op.create_table(
        "workloads",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("arch", sa.String(), nullable=False),
        sa.Column("h", sa.Integer(), nullable=False),
        sa.Column("x_dtype", sa.String(), nullable=False),
        sa.Column("w_dtype", sa.String(), nullable=False),
        sa.Column("form", sa.String(), nullable=False),
        sa.UniqueConstraint("arch", "h", "x_dtype", "w_dtype", "form", name="uq_workloads_key"),
    )

    op.create_table(
        "timing_blocks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_pk", sa.Integer(), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("workload_id", sa.Integer(), sa.ForeignKey("workloads.id"), nullable=False),
        sa.Column("program", sa.String(), nullable=False),
        sa.Column("op", sa.String(), nullable=False),
        sa.Column("t", sa.BigInteger(), nullable=False),
        sa.Column("session", sa.String(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("copy", sa.Integer(), nullable=False),
        sa.Column("timer", sa.String(), nullable=False),
        sa.Column("l2", sa.String(), nullable=False),
        sa.Column("samples", sa.LargeBinary(), nullable=True),
        sa.Column("n_samples", sa.Integer(), nullable=False),
        sa.Column("block_median", sa.Double(), nullable=True),
        sa.Column("median_us", sa.Double(), nullable=True),
        sa.Column("n", sa.BigInteger(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.UniqueConstraint("run_pk", "workload_id", "program", "op", "t", "session", "round", "position",
                            "copy", "timer", "l2", name="uq_timing_blocks_key"),
    )
    op.create_index("ix_timing_blocks_point", "timing_blocks", ["workload_id", "program", "op", "t"])
    op.create_index("ix_timing_blocks_run_pk", "timing_blocks", ["run_pk"])

    op.create_table(
        "accuracy_records",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_pk", sa.Integer(), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("workload_id", sa.Integer(), sa.ForeignKey("workloads.id"), nullable=False),
        sa.Column("program", sa.String(), nullable=False),
        sa.Column("t", sa.BigInteger(), nullable=False),
        sa.Column("family", sa.String(), nullable=False),
        sa.Column("rec_key", sa.String(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=True),
        sa.Column("inputs", sa.Integer(), nullable=False),
        *[sa.Column(c, sa.Double(), nullable=True) for c in (
            "dw_err_over_tol_max", "dw_err_over_tol_median", "dw_rel_l2", "eager_err_over_tol_max",
            "eager_err_over_tol_median", "dx_err_over_tol_max", "rstd_rel_l2")],
        sa.Column("rstd_form", sa.String(), nullable=True),
        sa.Column("verdict", sa.String(), nullable=True),
        sa.Column("qualified_by_source", sa.Boolean(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.UniqueConstraint("run_pk", "workload_id", "program", "t", "family", "rec_key",
                            name="uq_accuracy_records_key"),
    )
    op.create_index("ix_accuracy_records_point", "accuracy_records", ["workload_id", "program", "t"])
    op.create_index("ix_accuracy_records_run_pk", "accuracy_records", ["run_pk"])

    op.create_table(
        "accuracy_summaries",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_pk", sa.Integer(), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("workload_id", sa.Integer(), sa.ForeignKey("workloads.id"), nullable=False),
        sa.Column("program", sa.String(), nullable=False),
        sa.Column("t", sa.BigInteger(), nullable=False),
        sa.Column("family", sa.String(), nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("inputs", sa.Integer(), nullable=False),
        *[sa.Column(c, sa.Double(), nullable=True) for c in ("worst", "median", "eager_worst", "eager_median")],
        sa.Column("verdict", sa.String(), nullable=True),
        sa.Column("qualified_by_source", sa.Boolean(), nullable=True),
        sa.UniqueConstraint("run_pk", "workload_id", "program", "t", "family", name="uq_accuracy_summaries_key"),
    )
    op.create_index("ix_accuracy_summaries_workload", "accuracy_summaries", ["workload_id"])


def downgrade() -> None:
    for table in ("accuracy_summaries", "accuracy_records", "timing_blocks", "workloads", "programs", "runs", "cake_meta"):
        op.drop_table(table)
