"""The change report's categories (diff), on tables solved from synthetic evidence."""

from __future__ import annotations

from cake_kernels.routes.table import load_table, write_table

from cake_router.policy import Policy
from cake_router.reports import diff_markdown, diff_tables
from cake_router.solver import solve_arch
from router_evidence import Evidence


def _evidence(eager_fail: bool, with_fwd: bool) -> Evidence:
    e = Evidence().program("bwd.pair").program("bwd.twosum", family="twosum_pair")
    for T in (1024, 65536):
        e.point("bwd.twosum", T, us=T / 50 + 20, worst=0.001, median=0.0001, eager_worst=0.2, eager_median=0.02)
    e.point("bwd.pair", 1024, us=10, worst=0.001, median=0.0001, eager_worst=0.2, eager_median=0.02)
    e.point("bwd.pair", 65536, us=100, worst=0.3 if eager_fail else 0.1, median=0.01, eager_worst=0.2, eager_median=0.02)
    if with_fwd:
        e.program("fwd.row", op="fwd").timing("fwd.row", 1024, 2.0, op="fwd")
    return e


def _table(tmp_path, name, e):
    sol = solve_arch("sm_90a", list(e.all().values()), Policy())
    write_table(sol.table_doc(), tmp_path / name)
    return {"sm_90a": load_table(tmp_path / name)}


def test_diff_categories_eager_and_new_coverage(tmp_path):
    old = _table(tmp_path, "old.json", _evidence(False, False))
    new_ev = _evidence(True, True)
    new = _table(tmp_path, "new.json", new_ev)
    changes = diff_tables(old, new, {"sm_90a": list(new_ev.all().values())})
    cats = {(c.key[0], c.key[4]): c.category for c in changes}
    assert cats[("bwd", "det")] == "eager-reference failure"
    assert cats[("fwd", "any")] == "new coverage"
    eager = next(c for c in changes if c.key[4] == "det")
    assert [r["T"] for r in eager.rows] == [65536] and eager.rows[0]["old_status"] == "eager-reference"
    assert eager.rows[0]["ratio"] < 1  # the new program is slower: counted in "rows slower than old"
    md = diff_markdown(changes, "old", "new", True)
    assert "### eager-reference failure (2)" in md and "### new coverage (1)" in md
    summary = md.split("### Summary")[1]
    assert "| bwd | 2 | 2 |" in summary


def test_diff_without_evidence_lists_spans(tmp_path):
    old = _table(tmp_path, "old.json", _evidence(False, False))
    new = _table(tmp_path, "new.json", _evidence(True, False))
    md = diff_markdown(diff_tables(old, new), "old", "new", False)
    assert "ratios and rows are not available" in md and "eager-reference failure" in md


def test_diff_faster_in_budget_program_past_an_accuracy_cut_is_speed(tmp_path):
    # pair is fastest but breaches at 65536; above its cut the window's reason is accuracy-cut. A new,
    # faster compensated program taking that window is a speed change (the old one is still in
    # budget there), not a budget breach.
    def ev(with_fast: bool) -> Evidence:
        e = Evidence().program("bwd.pair").program("bwd.twosum", family="twosum_pair")
        e.point("bwd.pair", 1024, us=10, worst=0.001, median=0.0001, eager_worst=0.2, eager_median=0.02)
        e.point("bwd.pair", 65536, us=100, worst=3.0, median=0.5, eager_worst=4.0, eager_median=0.6)
        for T in (1024, 65536):
            e.point("bwd.twosum", T, us=T / 50 + 20, worst=0.001, median=0.0001, eager_worst=0.2, eager_median=0.02)
        if with_fast:
            e.program("bwd.twosum_fast", family="twosum_pair")
            for T in (1024, 65536):
                e.point("bwd.twosum_fast", T, us=T / 80 + 15, worst=0.001, median=0.0001, eager_worst=0.2, eager_median=0.02)
        return e

    old = _table(tmp_path, "old.json", ev(False))
    new_ev = ev(True)
    new = _table(tmp_path, "new.json", new_ev)
    changes = [c for c in diff_tables(old, new, {"sm_90a": list(new_ev.all().values())}) if c.new == "bwd.twosum_fast"]
    assert changes and {c.reason for c in changes} == {"accuracy-cut"}
    assert {c.category for c in changes} == {"speed"}
    assert all(r["ratio"] > 1 for c in changes for r in c.rows)


def test_diff_reports_a_span_that_turns_loud_under_the_same_program(tmp_path):
    """Timing at T 1M with no accuracy there leaves no eligible program at that sampled T: the span
    keeps a program name but turns `no-eligible-program`, and the runtime then runs its fallback, so
    the report lists it (and lists it again, as qualified, once accuracy arrives)."""
    def ev(timed_1m: bool, qualified_1m: bool) -> Evidence:
        e = Evidence().program("bwd.twosum", family="twosum_pair")
        for T in (1024, 65536):
            e.point("bwd.twosum", T, us=T / 50 + 20, worst=0.001, median=0.0001, eager_worst=0.2, eager_median=0.02)
        if qualified_1m:
            e.point("bwd.twosum", 1048576, us=21000, worst=0.001, median=0.0001, eager_worst=0.2, eager_median=0.02)
        elif timed_1m:
            e.timing("bwd.twosum", 1048576, 21000)
        return e

    old = _table(tmp_path, "old.json", ev(False, False))
    loud_ev = ev(True, False)
    loud = _table(tmp_path, "loud.json", loud_ev)
    changes = diff_tables(old, loud, {"sm_90a": list(loud_ev.all().values())})
    det = [c for c in changes if c.key[4] == "det"]
    assert det and all(c.old == c.new == "bwd.twosum" and c.category == "budget breach" for c in det)
    assert {c.reason for c in det} <= {"no-eligible-program", "unverified"}
    assert "### budget breach" in diff_markdown(changes, "old", "loud", True)
    back = diff_tables(loud, _table(tmp_path, "ok.json", ev(True, True)))
    assert any(c.key[4] == "det" for c in back) and all(c.category == "qualified" for c in back if c.key[4] == "det")
    assert diff_tables(old, _table(tmp_path, "same.json", ev(False, False))) == []
