"""The routing policy's numbers (ROUTING-POLICY.md), in one dataclass a TOML file can override.

Every default below is the number the policy text states. A policy file is a flat TOML table
whose keys are the field names of `Policy`; an unknown key or a value of the wrong type is an
error naming the file and the key, so a typo never silently leaves a default in force.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_GRID: tuple[int, ...] = (131072, 196608, 262144, 393216, 524288, 786432, 1048576)


class PolicyError(ValueError):
    """A policy file or value that cannot be used: names the file, key and what is accepted."""


@dataclass(frozen=True)
class Policy:
    """All numbers of ROUTING-POLICY.md. Field names are the keys of the table's "policy" object."""

    # Section 2: dw tolerance (recorded: the evidence's err/tol was computed with these).
    dw_atol: float = 1e-4
    dw_rtol: float = 1e-4
    # Section 2: both sides of the eager-reference comparison are floored at this err/tol.
    eager_floor: float = 0.01
    # Section 3: qualification and the rerun rule.
    min_inputs_per_family: int = 120
    rerun_above: float = 0.95
    rerun_inputs_per_family: int = 240
    trust_published: bool = True
    # Section 4: a point whose session spread exceeds this is noisy ("~").
    spread_limit: float = 0.05
    # Section 6: neutral / merge threshold (the A/A floor wins when larger).
    neutral: float = 0.02
    # Section 6: the last window extends to infinity only when worst err/tol at the largest T <= this.
    extend_headroom: float = 0.5
    # Section 6: accuracy cuts above grid[0] snap down to these T.
    grid: tuple[int, ...] = DEFAULT_GRID
    # Next measurements: a sampled-T gap (t1, t2) around a cut is worth filling when t2 / t1 > 1 + this.
    next_resolution: float = 0.25

    def neutral_threshold(self, aa_floor: float | None) -> float:
        """The neutral rule's threshold at a point: 2 % or the A/A floor, whichever is larger."""
        return max(self.neutral, aa_floor or 0.0)

    def as_dict(self) -> dict[str, Any]:
        """The table's "policy" object (JSON types: the grid as a list)."""
        out = dataclasses.asdict(self)
        out["grid"] = list(self.grid)
        return out


_FLOAT_FIELDS = {"dw_atol", "dw_rtol", "eager_floor", "rerun_above", "spread_limit", "neutral",
                 "extend_headroom", "next_resolution"}
_INT_FIELDS = {"min_inputs_per_family", "rerun_inputs_per_family"}
_MEASURED_WITH = {"dw_atol": Policy.dw_atol, "dw_rtol": Policy.dw_rtol}


def _check(name: str, value: Any, where: str) -> Any:
    def bad(what: str) -> PolicyError:
        return PolicyError(f"{where}: key {name!r} = {value!r}: {what}")

    if name in _FLOAT_FIELDS:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise bad("expected a finite number >= 0")
        if name in _MEASURED_WITH and float(value) != _MEASURED_WITH[name]:
            # The evidence holds err/tol already divided by this tolerance, maximised over elements:
            # it cannot be rescaled to another one, so accepting a new value would change nothing but
            # the number the table records.
            raise bad(f"the evidence's err/tol was measured with {name} = {_MEASURED_WITH[name]:g} and cannot be "
                      f"rescaled; accepted: {_MEASURED_WITH[name]:g} (another tolerance needs evidence measured with it)")
        return float(value)
    if name in _INT_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad("expected an integer >= 1")
        return value
    if name == "trust_published":
        if not isinstance(value, bool):
            raise bad("expected true or false")
        return value
    if name == "grid":
        if (not isinstance(value, (list, tuple)) or not value
                or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value)
                or list(value) != sorted(set(value))):
            raise bad("expected a non-empty, strictly increasing list of positive integers")
        return tuple(value)
    raise AssertionError(name)  # pragma: no cover - every field is listed above


def policy_from_mapping(data: dict[str, Any], where: str = "policy") -> Policy:
    """Build a Policy from defaults overridden by `data`; unknown keys are rejected by name."""
    names = {f.name for f in dataclasses.fields(Policy)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise PolicyError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; accepted keys: {', '.join(sorted(names))}")
    return Policy(**{k: _check(k, v, where) for k, v in data.items()})


def load_policy(path: str | Path | None) -> Policy:
    """The default policy, or the defaults overridden by the TOML file at `path`."""
    if path is None:
        return Policy()
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(f"policy file {path}: cannot read: {exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PolicyError(f"policy file {path}: not valid TOML: {exc}") from None
    return policy_from_mapping(data, where=f"policy file {path}")
