"""Peer wiring of the harness that the CPU can check: QuACK's module lookup (its package exports a
function with the submodule's name) and the recorded reasons of peers that cannot run."""

from __future__ import annotations

import sys
import types

import pytest

from cake_router.measure import impls


def test_quack_rmsnorm_module_is_the_submodule_not_the_package_function(monkeypatch):
    pkg = types.ModuleType("quack")
    pkg.__path__ = []  # a package
    sub = types.ModuleType("quack.rmsnorm")
    sub.rmsnorm_fwd = lambda *a, **k: "fwd"

    def rmsnorm(*a, **k):  # what quack/__init__.py exports under the submodule's name
        return None

    pkg.rmsnorm = rmsnorm
    monkeypatch.setitem(sys.modules, "quack", pkg)
    monkeypatch.setitem(sys.modules, "quack.rmsnorm", sub)
    import quack.rmsnorm as shadowed  # noqa: the form that broke on the H200

    assert shadowed is rmsnorm
    assert impls._quack_rmsnorm_module() is sub
    assert impls._quack_rmsnorm_module().rmsnorm_fwd() == "fwd"


def test_missing_peer_is_unavailable_with_the_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "quack", None)  # import fails as if not installed
    with pytest.raises(impls.PeerUnavailable, match="quack is not importable"):
        impls._check_version("peer.quack.heuristic")
