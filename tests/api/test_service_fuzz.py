"""Schemathesis: every operation of the generated OpenAPI schema, fed generated (valid and invalid)
parameters and bodies, never answers 5xx and always answers as its schema says (status codes,
content types, response bodies). Ingest is fuzzed with the right token, so bodies reach the parser.

The quick pass runs in the normal suite; `slow` runs many more examples per operation.
"""

from __future__ import annotations

import shutil

import pytest
from service_support import TOKEN, make_app
from hypothesis import HealthCheck, settings

schemathesis = pytest.importorskip("schemathesis")


@pytest.fixture(scope="module")
def fuzz_app(seeded_db, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "store.sqlite"
    shutil.copyfile(seeded_db, path)
    return make_app(f"sqlite:///{path}")


@pytest.fixture(scope="module")
def fuzz_schema(fuzz_app):
    return schemathesis.openapi.from_asgi("/openapi.json", fuzz_app)


schema = schemathesis.pytest.from_fixture("fuzz_schema")


def _call(case):
    if case.path == "/api/evidence":
        # Whether a body is acceptable depends on its JSON Lines content and on the store (a timing
        # record must name a known run), which no schema can state: a schema-valid string answered
        # 422 is correct here, so only the positive-acceptance check is left out, for this route.
        case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"},
                               excluded_checks=[schemathesis.checks.positive_data_acceptance])
    else:
        case.call_and_validate()


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case):
    _call(case)


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema_long(case):
    _call(case)
