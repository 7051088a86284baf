"""How a run's card is named in `explain`, the dashboard and `bench` (measurements_db.aggregates)."""

from __future__ import annotations

import pytest

from measurements_db.aggregates import card_label, is_accuracy_only


@pytest.mark.parametrize("source, timed, has_accuracy, expected", [
    ("measured", False, True, True),
    ("measured", True, True, False),     # timed: its accuracy comes with timing on the same card
    ("measured", False, False, False),   # an empty run is not an accuracy run
    ("published", False, True, False),   # published figures are copied, not measured here
    (None, False, True, False),
])
def test_is_accuracy_only(source, timed, has_accuracy, expected):
    assert is_accuracy_only(source, timed, has_accuracy) is expected


def test_card_label():
    assert card_label("NVIDIA H100 80GB HBM3", 132, True) == "NVIDIA H100 80GB HBM3, 132 SMs, accuracy only"
    assert card_label("NVIDIA H200", 132) == "NVIDIA H200, 132 SMs"
    assert card_label(None, None) == "unknown GPU"
