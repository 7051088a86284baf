"""Route tables at runtime: the shipped tables load and verify, lookup bisects windows, tampered,
truncated or foreign tables are refused with the file named, and untrusted windows fall back."""

from __future__ import annotations

import json
import warnings

import pytest

from cake_kernels import registry
from cake_kernels.routes import dispatch
from cake_kernels.routes.table import RouteTableError, load_table, routes_dir, write_table

KNOWN = set(registry.names())


def shipped():
    return sorted(routes_dir().glob("*.json"))


def test_shipped_tables_verify_and_name_registered_programs():
    assert shipped(), "the runtime ships at least the sm_90a table"
    for path in shipped():
        t = load_table(path, known_programs=KNOWN)
        for key in t.keys():
            ws = t.windows(*key)
            assert ws[0].lo == 1 and ws[-1].hi is None
            assert all(a.hi + 1 == b.lo for a, b in zip(ws, ws[1:]))


def _table(tmp_path, windows, name="sm_90a.json"):
    doc = {"schema": "cake-routes/1", "arch": "sm_90a", "policy": {}, "evidence_fingerprint": "sha256:x",
           "routes": [{"op": "bwd", "H": 64, "w_dtype": "fp32", "form": "plain", "mode": "det", "windows": windows}]}
    path = tmp_path / name
    write_table(doc, path)
    return path


def test_lookup_bisects_windows(tmp_path):
    path = _table(tmp_path, [
        {"lo": 1, "hi": 256, "program": "bwd.column_task.c64.w4", "reason": "fastest"},
        {"lo": 257, "hi": 65536, "program": "bwd.pair.p2x.w8", "reason": "fastest"},
        {"lo": 65537, "hi": None, "program": "bwd.twosum_pair.p2x.w8", "reason": "accuracy-cut"},
    ])
    t = load_table(path, known_programs=KNOWN)
    for T, want in ((1, "column_task"), (256, "column_task"), (257, "pair"), (65536, "pair"), (65537, "twosum"), (10**9, "twosum")):
        assert want in dispatch.route(t, "sm_90a", "bwd", 64, "fp32", "plain", "det", T)


def test_tampered_table_refused_naming_file_and_checksum(tmp_path):
    path = _table(tmp_path, [{"lo": 1, "hi": None, "program": "bwd.pair.p2x.w8", "reason": "fastest"}])
    doc = json.loads(path.read_text())
    doc["routes"][0]["windows"][0]["program"] = "bwd.atomic.p2x.w8"
    path.write_text(json.dumps(doc))
    with pytest.raises(RouteTableError, match=rf"{path.name}.*checksum mismatch"):
        load_table(path, known_programs=KNOWN)


def test_truncated_table_refused(tmp_path):
    path = _table(tmp_path, [{"lo": 1, "hi": None, "program": "bwd.pair.p2x.w8", "reason": "fastest"}])
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(RouteTableError, match=rf"{path.name}.*(not valid JSON|truncated)"):
        load_table(path, known_programs=KNOWN)


def test_unknown_program_refused(tmp_path):
    path = _table(tmp_path, [{"lo": 1, "hi": None, "program": "bwd.from_elsewhere", "reason": "fastest"}])
    with pytest.raises(RouteTableError, match="unknown program 'bwd.from_elsewhere'"):
        load_table(path, known_programs=KNOWN)


def test_gap_in_cover_refused(tmp_path):
    path = _table(tmp_path, [{"lo": 1, "hi": 10, "program": "bwd.pair.p2x.w8", "reason": "fastest"},
                             {"lo": 12, "hi": None, "program": "bwd.pair.p2x.w8", "reason": "fastest"}])
    with pytest.raises(RouteTableError, match="sorted, disjoint cover"):
        load_table(path, known_programs=KNOWN)


def test_boolean_window_bound_refused(tmp_path):
    # JSON true is not a T: Python would take it for 1.
    path = _table(tmp_path, [{"lo": 1, "hi": True, "program": "bwd.pair.p2x.w8", "reason": "fastest"},
                             {"lo": 2, "hi": None, "program": "bwd.pair.p2x.w8", "reason": "fastest"}])
    with pytest.raises(RouteTableError, match="sorted, disjoint cover"):
        load_table(path, known_programs=KNOWN)


@pytest.mark.parametrize("reason", ["no-eligible-program", "unverified"])
def test_untrusted_windows_run_the_in_budget_fallback(tmp_path, reason):
    path = _table(tmp_path, [{"lo": 1, "hi": None, "program": "bwd.pair.p2x.w8", "reason": reason}], name=f"{reason}.json")
    t = load_table(path, known_programs=KNOWN)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        # A tool asking what would run (warn=False) neither warns nor uses up the process's warning.
        quiet = dispatch.route(t, "sm_test_" + reason, "bwd", 64, "fp32", "plain", "det", 5, warn=False)
        assert not rec
        got = dispatch.route(t, "sm_test_" + reason, "bwd", 64, "fp32", "plain", "det", 5)
        again = dispatch.route(t, "sm_test_" + reason, "bwd", 64, "fp32", "plain", "det", 5)
    assert quiet == got == again == dispatch.FALLBACK["bwd"]
    assert len([w for w in rec if issubclass(w.category, dispatch.FallbackWarning)]) == 1  # once


def test_missing_key_falls_back_once():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for _ in range(3):
            assert dispatch.route(None, "sm_unknown", "fwd", 64, "fp32", "plain", "det", 1) == dispatch.FALLBACK["fwd"]
    assert len(rec) == 1
