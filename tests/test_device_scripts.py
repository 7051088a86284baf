"""The device scripts' host-side logic, on the CPU (their GPU runs are the device tool's)."""
from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    # The scripts run as `python scripts/device/NAME.py`, with their folder on the path (probe_common).
    if str(ROOT / "scripts" / "device") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts" / "device"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "device" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sanitize_routed_takes_the_table_and_its_fallbacks():
    from cake_kernels import registry

    sanitize = _script("sanitize")
    names = sanitize.routed_programs("sm_90a")
    table = json.loads((ROOT / "cake_kernels" / "routes" / "sm_90a.json").read_text())
    routed = {w["program"] for r in table["routes"] for w in r["windows"]}
    fallbacks = {registry.get(n).fallback for n in routed} - {None}
    expected = {n for n in routed | fallbacks if registry.get(n).launch.grid != "reference"}
    assert names == sorted(expected)
    gs = [n for n in names if registry.get(n).launch.reduce == "grid_sync"]
    assert gs and all(registry.get(n).fallback in names for n in gs)  # the refused-grid twins are checked too


@pytest.mark.interpreter
def test_sanitize_runs_programs_at_the_shapes_they_support(capsys):
    sanitize = _script("sanitize")
    n = sanitize.run(["fwd.row.r1.w4.hs", "bwd.column_task.c64x2.w4"], sanitize.SMALL, torch.device("cpu"))
    assert n == 6
    out = capsys.readouterr().out
    assert "ran bwd.column_task.c64x2.w4 H=4095 T=17 residual bf16" in out


def test_sanitize_rejects_two_selections(capsys):
    sanitize = _script("sanitize")
    import sys

    argv = sys.argv
    sys.argv = ["sanitize.py", "--routed", "sm_90a", "--programs", ".gs"]
    try:
        with pytest.raises(SystemExit):
            sanitize.main()
    finally:
        sys.argv = argv
    assert "--routed and --programs" in capsys.readouterr().err


def test_sanitize_shapes_are_named_sets_or_explicit_items():
    sanitize = _script("sanitize")
    assert sanitize.parse_shapes("odd") == sanitize.ODD and sanitize.parse_shapes("small") == sanitize.SMALL
    assert sanitize.parse_shapes("512:1:plain:fp32,256:64:heads_strided:fp32") == [
        (512, 1, "plain", "fp32"), (256, 64, "heads_strided", "fp32")]
    for bad in ("512:1:plain", "512:0:plain:fp32", "x:1:plain:fp32", "512:1:rows:fp32", "512:1:plain:fp16", ","):
        with pytest.raises(ValueError, match="--shapes"):
            sanitize.parse_shapes(bad)


def test_sanitize_names_a_bad_shape_argument(capsys):
    sanitize = _script("sanitize")
    import sys

    argv = sys.argv
    sys.argv = ["sanitize.py", "--shapes", "512:1:plain:fp16"]
    try:
        with pytest.raises(SystemExit):
            sanitize.main()
    finally:
        sys.argv = argv
    err = capsys.readouterr().err
    assert "--shapes" in err and "'512:1:plain:fp16'" in err


def test_l2_prefetch_probe_keys_and_variants():
    from cake_kernels import registry

    probe = _script("l2_prefetch_probe")
    for form, H, w, T, base_name in probe.DEFAULT_KEYS:
        base = registry.get(base_name)
        assert base.supports(H, form, w), (base_name, form, H, w)
        for kind in ("lines", "bulk"):
            for ahead in (1, 2, 4, 8):
                v = probe.variant(base, kind, ahead)
                assert v.launch == registry.LaunchPolicy(**{**base.launch.__dict__, "l2_prefetch": kind, "l2_ahead": ahead})
                assert v.supports(H, form, w)
                # the registered twins are the ones the probe times, not look-alikes built here
                assert (v.name == f"{base_name}.l2{'p' if kind == 'lines' else 'b'}4") == (ahead == 4) or "@" in v.name
        assert probe.routed(form, H, w, T) in {n for n in registry.names("bwd")}


def test_l2_prefetch_probe_refuses_bad_arguments(monkeypatch, capsys):
    probe = _script("l2_prefetch_probe")
    for argv, msg in ((["--ahead", "0,4"], "--ahead"), (["--keys", "plain:1536:bf16"], "--keys")):
        monkeypatch.setattr("sys.argv", ["l2_prefetch_probe.py", *argv])
        with pytest.raises(SystemExit, match=msg):
            probe.main()



def test_variant_probe_picks_supported_programs_and_refuses_bad_arguments(monkeypatch):
    from cake_kernels import registry

    probe = _script("variant_probe")
    assert probe.parse_keys("plain:1536:bf16:65536,heads_contiguous:256:fp32:1") == [
        ("plain", 1536, "bf16", 65536), ("heads_contiguous", 256, "fp32", 1)]
    for bad in ("plain:1536:bf16", "rows:1536:bf16:1", "plain:1536:fp16:1", "plain:x:bf16:1"):
        with pytest.raises(SystemExit, match="--keys"):
            probe.parse_keys(bad)
    # a prefix ending in * takes every backward it names that supports the key; a name the key
    # does not take is left out (the `.wc` twins at an FP32 weight, the H <= 2048 `.tma` rows at 4096)
    got = [p.name for p in probe.pick(["bwd.twosum_pair.p2x.r2.w8.s4.wr.tma*"], 1536, "plain", "bf16")]
    assert got == ["bwd.twosum_pair.p2x.r2.w8.s4.wr.tma", "bwd.twosum_pair.p2x.r2.w8.s4.wr.tma.wc"]
    assert [p.name for p in probe.pick(["bwd.twosum_pair.p2x.r2.w8.s4.wr.tma*"], 1536, "plain", "fp32")] == got[:1]
    assert probe.pick(["bwd.twosum_pair.p2x.r2.w8.s4.wr.tma"], 4096, "plain", "bf16") == []
    # `routed` (measure's word) is accepted and adds nothing: every key times the routed program
    assert [p.name for p in probe.pick(["routed", "bwd.twosum_pair.p2x.r2.w8.s4.wr.tma*"], 1536, "plain", "bf16")] == got
    with pytest.raises(registry.UnknownProgramError):
        probe.pick(["bwd.no.such.program"], 1536, "plain", "bf16")
    monkeypatch.setattr("sys.argv", ["variant_probe.py", "--keys", "plain:1536:bf16:1", "--programs", "bwd.nope"])
    with pytest.raises(registry.UnknownProgramError, match="bwd.nope"):
        probe.main()


def test_probe_keys_records_each_key_and_goes_on_past_a_failure(monkeypatch, tmp_path, capsys):
    _script("variant_probe")  # puts the scripts' folder on the path
    import probe_common

    import cake_router.measure.protocol as protocol

    monkeypatch.setattr(protocol, "copy_bandwidth_TBps", lambda dev: 4.5)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "a GPU")
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *a: type("P", (), {"multi_processor_count": 132}))
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    shown = []

    def probe(form, H, w, T, base, copy):
        if H == 512:
            raise RuntimeError("out of memory")
        return [dict(form=form, H=H, w_dtype=w, T=T, program=base, copy=copy)]

    keys = [("plain", 1536, "bf16", 64, "a"), ("plain", 512, "bf16", 64, "b"), ("plain", 2048, "fp32", 1, "c")]
    path = tmp_path / "probe.json"
    out = probe_common.probe_keys(keys, ("form", "H", "w_dtype", "T", "base"), probe, shown.append, str(path), 0)
    assert out == json.loads(path.read_text())
    assert out["gpu"] == "a GPU" and out["sms"] == 132 and out["copy_TBps"] == 4.5
    assert out["rows"] == [
        dict(form="plain", H=1536, w_dtype="bf16", T=64, program="a", copy=4.5),
        dict(form="plain", H=512, w_dtype="bf16", T=64, base="b", error="RuntimeError: out of memory"),
        dict(form="plain", H=2048, w_dtype="fp32", T=1, program="c", copy=4.5)]
    assert [r[0]["program"] for r in shown] == ["a", "c"]
    # past the budget no key is started
    out = probe_common.probe_keys(keys, ("form", "H", "w_dtype", "T", "base"), probe, shown.append, str(path), 1e-9)
    assert out["rows"] == [] and "budget spent" in capsys.readouterr().out


def _queued_scripts(start: str) -> list[Path]:
    """`start` and every device shell script it runs (`bash scripts/device/X.sh`, `exec bash ...`), transitively."""
    todo, seen = [ROOT / "scripts" / "device" / start], []
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.append(path)
        todo += [ROOT / "scripts" / "device" / m for m in re.findall(r"bash scripts/device/([\w.]+\.sh)", path.read_text())]
    return seen


def _program_arguments(text: str) -> list[str]:
    """The `--programs` arguments of a device script, its own `NAME=value` variables expanded (arguments
    computed at run time, still holding a `$`, are left out)."""
    env = dict(re.findall(r"(?:^|[\s;])([A-Za-z_][A-Za-z0-9_]*)=([^\s;()`\"']+)", text))
    def expand(s: str) -> str:
        for _ in range(5):
            s = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: env.get(m.group(1), m.group(0)), s)
        return s
    args = [expand(a.strip("'\"")) for a in re.findall(r"--programs\s+(\"[^\"]*\"|'[^']*'|\S+)", text)]
    # probe NAME SECONDS KEYS PROGRAMS (session36.sh's helper around variant_probe.py)
    args += [expand(a.strip("'\"")) for a in re.findall(r"^probe \S+ \S+ \S+ \\?\s*(\"[^\"]*\")", text, re.M)]
    return [a for a in args if "$" not in a]


def test_the_queued_device_scripts_name_registered_programs():
    """Every program the next device calls name (session37.sh, session37b.sh and what they run) is registered: an exact
    name, a prefix of one (measure's and variant_probe's `*` prefixes) or `routed`. A typo would
    cost a device call; the registry is checked here, without one."""
    from cake_kernels import registry

    names = registry.names()
    scripts = _queued_scripts("session37.sh") + _queued_scripts("session37b.sh")
    assert {"campaign_r35a.sh", "campaign_r23a.sh", "session36.sh", "campaign_r36a.sh", "campaign_h37a.sh"} <= {p.name for p in scripts}
    checked = 0
    for path in scripts:
        for arg in _program_arguments(path.read_text()):
            for item in filter(None, arg.split(",")):
                checked += 1
                ok = item == "routed" or item in names or any(n.startswith(item.rstrip("*")) for n in names)
                assert ok, f"{path.name}: {item!r} names no registered program"
    assert checked >= 40
