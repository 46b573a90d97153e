"""Precision and recall at tau on a hand-computed case."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.metrics.discrimination import precision_recall_at


def test_precision_recall_at_tau_hand_computed() -> None:
    s = np.array([0.9, 0.8, 0.6, 0.4, 0.2])
    y = np.array([True, False, True, True, False])
    assert precision_recall_at(s, y, 0.5) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
