"""${message}

Revision ID: ${up_revision}
Revises: ${down_revision | comma,n}
Create Date: ${create_date}
"""

from alembic import op
import sqlalchemy as sa
${imports if imports else ""}

revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}
branch_labels = ${repr(branch_labels)}
depends_on = ${repr(depends_on)}

# Bump with every revision; engine.SCHEMA_VERSION must equal the head's value.
SCHEMA_VERSION = None


def upgrade() -> None:
    ${upgrades if upgrades else "pass"}
    op.execute(sa.text("UPDATE cake_meta SET value = :v WHERE key = 'schema_version'").bindparams(v=str(SCHEMA_VERSION)))


def downgrade() -> None:
    ${downgrades if downgrades else "pass"}
