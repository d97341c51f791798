"""The answer-confidence calibrator (issue 12): the fitting code and the fitted mapping."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from episodic.reasoning import confidence
from episodic.reasoning.confidence import FEATURES, calibrate, features

_spec = importlib.util.spec_from_file_location(
    "fit_calibration", Path(__file__).resolve().parents[3] / "benchmarks" / "fit_calibration.py"
)
fit_calibration = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fit_calibration)


def test_features_by_hand():
    x = features(0.5, {"options": 3, "margin": 0.4, "key_terms": 1.0, "source": "choice"})
    assert x == [0.0, 1.0, 0.4, 1.0, 0.0]
    x = features(0.99, {"source": "order"})
    assert x[0] == pytest.approx(math.log(0.98 / 0.02)) and x[1:] == [0.0, 0.0, 1.0, 1.0]
    assert len(features(0.3, None)) == len(FEATURES)


def test_logistic_fit_recovers_a_known_mapping():
    """Answers right with probability σ(2·x − 1): the fit finds w ≈ 2, b ≈ −1."""
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1.5, (4000, 1))
    y = (rng.random(4000) < 1 / (1 + np.exp(-(2 * x[:, 0] - 1)))).astype(float)
    w = fit_calibration.fit(x, y, l2=0.0)
    assert w[0] == pytest.approx(2.0, abs=0.15) and w[1] == pytest.approx(-1.0, abs=0.15)
    p = fit_calibration.predict(w, np.array([[0.5]]))
    assert p[0] == pytest.approx(0.5, abs=0.05)


def test_calibrate_applies_coefficients_and_keeps_refusals_at_zero(monkeypatch):
    assert calibrate(float("nan"), {}) == 0.0 and calibrate(-1, None) == 0.0
    coefficients = dict.fromkeys(FEATURES, 0.0) | {"logit_raw": 1.0, "bias": 0.0}
    monkeypatch.setattr(confidence, "COEFFICIENTS", coefficients)
    assert calibrate(0.7, {}) == pytest.approx(0.7, abs=1e-4)  # logit then σ: the identity
    monkeypatch.setattr(confidence, "COEFFICIENTS", coefficients | {"bias": -2.0})
    assert calibrate(0.7, {}) < 0.3
    assert calibrate(0.0, {}) == 0.0  # "found nothing" claims nothing
