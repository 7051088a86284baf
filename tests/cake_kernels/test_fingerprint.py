"""Program fingerprints (cake_kernels/fingerprint.py): the kernels a program launches and what they
reach, not whole modules, so a kernel added beside a program leaves its fingerprint alone."""

from __future__ import annotations

from cake_kernels import fingerprint, registry


def _closure(name: str) -> set[str]:
    return {q.rsplit(".", 1)[-1] for q, _ in fingerprint.device_closure(fingerprint.launched_kernels(registry.get(name)))}


def test_every_program_has_its_own_fingerprint():
    fps = [p.fingerprint for p in registry.all_programs()]
    assert all(f.startswith("sha256:") and len(f) == 39 for f in fps)
    assert len(set(fps)) == len(fps)
    assert [p.fingerprint for p in registry.all_programs()] == fps  # stable


def test_closure_follows_the_runner_and_nothing_else():
    wide = _closure("bwd.twosum_pair.p2x.w8.fw.pf.wr")
    assert {"rmsnorm_bwd_rows_kernel", "reduce_partials_wide_kernel", "row_grad", "_dw_step", "to_bf16"} <= wide
    assert not wide & {"rmsnorm_bwd_tma_kernel", "reduce_partials_kernel", "rmsnorm_fwd_kernel", "rmsnorm_bwd_column_task_kernel"}
    serial = _closure("bwd.pair.p2x.w8.pf")
    assert "reduce_partials_kernel" in serial and "reduce_partials_wide_kernel" not in serial
    single = _closure("bwd.twosum.p2x.w8.fw.pf")  # single launch: its reduce runs inside the rows kernel
    assert "reduce_partials_block" in single and not single & {"reduce_partials_kernel", "reduce_partials_wide_kernel"}
    assert _closure("bwd.twosum_pair.p2x.w4.s4.wr.tma") >= {"rmsnorm_bwd_tma_kernel", "reduce_partials_wide_kernel"}
    tmc = _closure("bwd.twosum_pair.p1x.r4.w8.s4.wr.tmc")  # one kernel for both products: both steps
    assert tmc >= {"rmsnorm_bwd_tma_chunks_kernel", "_dw_step", "_dw_step_split_rstd", "reduce_partials_wide_kernel"}
    assert not tmc & {"rmsnorm_bwd_tma_kernel", "rmsnorm_bwd_tma_split_rstd_kernel"}
    one_pass = _closure("bwd.pair.p2x.w8.pf.op")  # the wide reduce's kernel with a taller tile
    assert "reduce_partials_wide_kernel" in one_pass and "reduce_partials_kernel" not in one_pass
    # `.gs`: the rows kernels it calls (both: the products constexpr picks one), its barrier and reduce
    gs = _closure("bwd.twosum.p4x.r4.w2.fw.pf.gs.xs")
    assert {"rmsnorm_bwd_grid_sync_kernel", "rmsnorm_bwd_rows_split_rstd_kernel", "rmsnorm_bwd_rows_kernel",
            "grid_barrier", "reduce_columns_strided"} <= gs
    assert not gs & {"reduce_partials_kernel", "reduce_partials_wide_kernel", "reduce_partials_split_kernel"}
    # `.l2p4`: its own rows kernel and the prefetch; the shipped `.xs` kernel is not reached
    l2 = _closure("bwd.twosum_pair.p1x.r4.w8.fw.pf.wr.xs.wc.l2p4")
    assert {"rmsnorm_bwd_rows_l2_prefetch_kernel", "prefetch_rows_l2", "_dw_step_split_rstd", "reduce_partials_wide_kernel"} <= l2
    assert "rmsnorm_bwd_rows_split_rstd_kernel" not in l2
    assert "prefetch_rows_l2" not in _closure("bwd.twosum_pair.p1x.r4.w8.fw.pf.wr.xs.wc")
    # `.rl`: its own rows kernel and its loads; the shipped `.xs` kernel is not reached, nor it by them
    rl = _closure("bwd.twosum_pair.p2x.w8.fw.wr.sp.xs.rl.mr128")
    assert {"rmsnorm_bwd_rows_reload_kernel", "_load_gx", "_dw_step_split_rstd", "_store_dx", "reduce_partials_wide_kernel"} <= rl
    assert "rmsnorm_bwd_rows_split_rstd_kernel" not in rl
    assert not _closure("bwd.twosum_pair.p2x.w8.fw.pf.wr.sp.xs") & {"rmsnorm_bwd_rows_reload_kernel", "_load_gx"}
    rl_pf = _closure("bwd.twosum_pair.p4x.w8.fw.pf.wr.sp.xs.rl")  # with the prefetch: its own kernel
    assert {"rmsnorm_bwd_rows_reload_prefetch_kernel", "_load_gx", "load_tile"} <= rl_pf
    assert "rmsnorm_bwd_rows_reload_kernel" not in rl_pf and "rmsnorm_bwd_rows_reload_prefetch_kernel" not in rl
    assert _closure("fwd.persist.p4x.r1.w4.pf") >= {"rmsnorm_fwd_prefetch_kernel"}
    assert "rmsnorm_fwd_kernel" not in _closure("fwd.persist.p4x.r1.w4.pf")
    assert fingerprint.launched_kernels(registry.get("bwd.reference")) == []


def test_a_changed_helper_changes_exactly_the_programs_that_reach_it(monkeypatch):
    before = {p.name: p.fingerprint for p in registry.all_programs()}
    real = fingerprint.device_closure

    def edited(kernels):  # as if programs/backward.py's reduce_partials_wide_kernel had been edited
        return [(q, s + "# edited" if q.endswith(".reduce_partials_wide_kernel") else s) for q, s in real(kernels)]

    monkeypatch.setattr(fingerprint, "device_closure", edited)
    registry._fingerprint.cache_clear()
    try:
        after = {p.name: p.fingerprint for p in registry.all_programs()}
    finally:
        monkeypatch.undo()
        registry._fingerprint.cache_clear()
    changed = {n for n in before if before[n] != after[n]}
    # the `.sr` programs' second pass is the wide reduce too, and the `.op` programs launch it in one step
    assert changed == {p.name for p in registry.all_programs() if p.launch.reduce in ("wide", "split", "one_pass")}
    assert {p.name: p.fingerprint for p in registry.all_programs()} == before


def test_plain_constants_a_kernel_reads_are_part_of_it(tmp_path, monkeypatch):
    src = ("import triton\nimport triton.language as tl\nK = 7\n\n\n@triton.jit\ndef helper(X):\n"
           "    tl.store(X, K)\n\n\n@triton.jit\ndef kern(X):\n    helper(X)\n")
    (tmp_path / "fp_probe_mod.py").write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    mod = importlib.import_module("fp_probe_mod")
    got = dict(fingerprint.device_closure([mod.kern]))
    assert set(got) == {"fp_probe_mod.kern", "fp_probe_mod.helper", "fp_probe_mod.K"}
    assert got["fp_probe_mod.K"] == "7"
