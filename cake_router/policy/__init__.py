"""The routing policy (ROUTING-POLICY.md): its numbers (`Policy`) and its rules (pure functions)."""

from cake_router.policy.config import DEFAULT_GRID, Policy, PolicyError, load_policy, policy_from_mapping  # noqa: F401
from cake_router.policy.rules import (  # noqa: F401
    AccuracyVerdict,
    accuracy_rank,
    clear_of_spread,
    crossover_hi,
    eager_failures,
    eligible,
    extends_to_infinity,
    is_noisy,
    judge_accuracy,
    merge_allowed,
    mode_allows,
    order_by_latency,
    point_qualified,
    point_worst,
    significantly_faster,
    snap_down,
    within_neutral,
)
