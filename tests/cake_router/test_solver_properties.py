"""Property tests on random evidence: cover, eligibility, determinism, loadable tables."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cake_kernels.routes.table import Window, load_table, write_table
from measurements_db.aggregates import aggregate_records

from cake_router.policy import Policy
from cake_router.solver import LOUD_REASONS, solve_arch
from router_evidence import Evidence

T_CHOICES = [1, 7, 256, 1024, 4096, 30000, 65536, 131072, 200000, 262144, 400000, 524288, 1048576]


@st.composite
def evidence(draw):
    n_prog = draw(st.integers(1, 4))
    Ts = sorted(draw(st.sets(st.sampled_from(T_CHOICES), min_size=1, max_size=8)))
    e = Evidence(w_dtype=draw(st.sampled_from(["bf16", "fp32"])))
    e.run("r2")
    close = draw(st.booleans())  # latencies within a few percent: exercises neutral, merge, noise
    for j in range(n_prog):
        name = f"bwd.p{j}"
        e.program(name, det=draw(st.booleans()), family=draw(st.sampled_from(["pair", "atomic", "twosum_pair"])))
        for T in Ts:
            if draw(st.integers(0, 5)) == 0:
                continue  # not timed here
            base = (T / 100 + 5) * draw(st.floats(0.97, 1.03)) if close else draw(st.floats(1.0, 1000.0))
            e.timing(name, T, base, spread=draw(st.sampled_from([0.0, 0.01, 0.08])))
            if draw(st.booleans()):
                e.timing(name, T, base * draw(st.floats(0.97, 1.03)), copy=1)
            if draw(st.integers(0, 4)) > 0:
                e.acc(name, T, draw(st.floats(0.0, 1.2)), inputs=draw(st.sampled_from([60, 120, 240, 240])),
                      median=draw(st.floats(0.0, 0.1)), eager_worst=draw(st.floats(0.3, 5.0)),
                      eager_median=draw(st.floats(0.0, 0.3)))
                if draw(st.integers(0, 3)) == 0:
                    e.acc(name, T, draw(st.floats(0.0, 1.6)), run="r2", eager_worst=5.0)
    e.program("peer.x", family="peer", runnable=False)
    e.timing("peer.x", Ts[0], 1.0)
    e.program("fwd.row", op="fwd")
    for T in Ts:
        e.timing("fwd.row", T, T / 100 + 1, op="fwd")
    return e


class _Inc:
    """A random incumbent table (windows per key) for the neutral rule."""

    def __init__(self, windows):
        self._w = windows

    def windows(self, *key):
        return self._w


def check_table(sol):
    for ks in sol.keys:
        ws = ks.windows
        assert ws[0].lo == 1 and ws[-1].hi is None
        for a, b in zip(ws, ws[1:]):
            assert a.hi is not None and a.hi >= a.lo and b.lo == a.hi + 1
        by_T = {p.T: p for p in ks.points}
        progs = ks.workload.programs
        for w in ws:
            assert w.program in progs and progs[w.program].family != "peer"
            if ks.key.mode == "det":
                assert progs[w.program].deterministic
            if w.reason in LOUD_REASONS:
                continue
            inside = [T for T in by_T if T >= w.lo and (w.hi is None or T <= w.hi)]
            assert inside == w.points
            for T in inside:
                assert w.program in by_T[T].eligible, (ks.key, w, T)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(e=evidence(), rnd=st.randoms(use_true_random=False))
def test_random_evidence_gives_a_valid_table(tmp_path_factory, e, rnd):
    evs = list(e.all().values())
    sol = solve_arch("sm_90a", evs, Policy())
    check_table(sol)
    # with a random incumbent
    names = sorted(e.evidence().programs)
    cuts = sorted(rnd.sample(T_CHOICES[1:], 2))
    inc = _Inc([Window(1, cuts[0], rnd.choice(names), "fastest"), Window(cuts[0] + 1, cuts[1], rnd.choice(names), "fastest"),
                Window(cuts[1] + 1, None, rnd.choice(names), "fastest")])
    check_table(solve_arch("sm_90a", evs, Policy(), inc))
    # determinism: same evidence (records in another order) -> byte-identical table
    shuffled = list(e.records)
    random.Random(7).shuffle(shuffled)
    d = tmp_path_factory.mktemp("t")
    b1 = write_table(sol.table_doc(), d / "a.json")
    b2 = write_table(solve_arch("sm_90a", list(aggregate_records(shuffled).values()), Policy()).table_doc(), d / "b.json")
    assert b1 == b2
    t = load_table(d / "a.json")
    assert t.arch == "sm_90a" and len(list(t.keys())) == len(sol.keys)
    assert json.loads(b1)["policy"] == Policy().as_dict()
