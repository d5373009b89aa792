"""Bayesian prediction: what the models with a conjugate prior share.

A model with a conjugate prior has its posterior over the parameters, P(h | D), in closed form,
computed from the same statistics as its plug-in estimate. Three things follow, each model
supplying its mathematics through hooks, the mechanism written once here:

``predictive`` (a constructor parameter, ``hyper["predictive"]``)
    The model scores with the posterior predictive P(x | c, D) = integral of P(x | c, h)
    P(h | D) dh instead of the plug-in P(x | c, h_hat); the model's ``_derive`` reads it.
``log_evidence_`` (``_log_evidence(fitted)``)
    The log marginal likelihood log P(X | y, prior) of the training features given their labels.
``sample_posterior`` (``_draw(fitted, rng)``)
    Plug-in models whose parameters are drawn from P(h | D): ``_draw`` returns the statistics
    of one such model and the constructor parameters that make its plug-in estimate the drawn
    parameters (for example no smoothing); the model is then made as a load makes one, from
    validated statistics.

The class prior P(c) is the plug-in's in all three (``fit_prior``/``priors``/``class_prior``):
what is averaged over, or drawn, is the class-conditional parameters. So averaging P(x | c, h)
over many draws converges to the predictive P(x | c, D), class by class, for the classes with
training rows (a plug-in model of GaussianNB, LDA or QDA has no parameters for a class without
data to draw: its draws keep the plug-in's fallback there, not the prior's predictive).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from ._core import _tables
from ._state import Fitted, float64_parameter, mark_shown
from ._validation import check_is_fitted, int_in

MAX_DRAWS = 10**6


def _physical_memory():
    """This machine's memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _check_memory(stats, n_draws):
    """A ValueError when n_draws models of one draw's statistics ``stats`` (and as much again for
    their parameters) would not fit in this machine's memory: they would fill it, to a
    MemoryError at best and the system's out-of-memory killer at worst."""
    per_draw = 2 * sum(value.nbytes for value in stats.values() if isinstance(value, np.ndarray))
    total = _physical_memory()
    if total is not None and per_draw * n_draws > total:
        raise ValueError(f"n_draws={n_draws:,} models would take about "
                         f"{per_draw * n_draws / 2**30:.3g} GiB ({per_draw / 2**20:.3g} MiB a "
                         f"draw, with its parameters), more than this machine's "
                         f"{total / 2**30:.3g} GiB of memory: draw fewer at a time.")


def maximise(objective, bounds):
    """The argument in ``bounds`` (positive numbers) maximising ``objective``: a bounded Brent
    search over the logarithm (the evidence of a prior's scale is smooth and unimodal in it
    for the conjugate models here), to a relative precision of about 1e-6."""
    low, high = np.log(bounds)
    found = minimize_scalar(lambda log_a: -objective(float(np.exp(log_a))), bounds=(low, high),
                            method="bounded", options={"xatol": 1e-6})
    return float(np.exp(found.x))


def log_rising(a, x):
    """lgamma(a + x) - lgamma(a), elementwise (a > 0, x >= 0; broadcast), to about 1e-12 of the
    larger of the result and 1 however large a is (the difference of the two lgammas loses
    log10(a) digits, every digit beyond a ~ 1e16, where a strong prior's pseudo-counts are), and
    finite wherever the result is: the scoring kernels' series (fastgen/_core/_rising.pxd),
    Stirling's differenced term by term from a = 30, in which no term of size a log a cancels."""
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.empty(a.shape)
    _tables.log_rising(np.ravel(a), np.ravel(x), out.reshape(-1))
    return out


def log_evidence(model, fitted):
    return model._log_evidence(fitted)


class Conjugate:
    """The fitted attribute ``log_evidence_`` and the method ``sample_posterior`` of a model
    with a conjugate prior (mixed into its class); the model supplies ``_log_evidence(fitted)``
    and ``_draw(fitted, rng)`` (see the module docstring)."""

    log_evidence_ = float64_parameter(log_evidence, "float: the log marginal likelihood of "
                                      "the training features given their labels under the "
                                      "prior.")

    def sample_posterior(self, n_draws: int = 1, random_state: Any = None) -> list:
        """Draw models from the posterior over the parameters.

        Each returned model is a fitted plug-in model of this class (``predictive=False``)
        whose class-conditional parameters are one draw from their posterior given the
        training data; the class prior is this model's. Uses: Thompson sampling, ensembles,
        and the Monte-Carlo Bayes optimal classifier, which averages ``predict_proba`` over
        draws. That average is not the ``predictive=True`` posterior: averaging each draw's
        *joint* P(x | c, h) converges to the predictive P(x | c, D), while averaging the
        normalised posteriors P(c | x, h) converges to E_h[P(c | x, h)], which differs (it
        weights each draw by nothing, not by how well it explains x).

        Parameters
        ----------
        n_draws : int, default=1
            Number of models to draw: at most 10**6, and at most as many as the machine's
            memory holds, judged from the first draw's size (a ValueError beyond; the
            machine's memory, not a container's limit).
        random_state : int, numpy Generator or RandomState, default=None
            Seed of the draws.

        Returns
        -------
        models : list of fitted models
            ``n_draws`` models of this class, independent of this one (they may be saved,
            merged with each other, or refitted).
        """
        from ._base import _generator

        check_is_fitted(self)
        count = int_in(n_draws, 1, MAX_DRAWS)
        if count is None:
            raise ValueError(f"n_draws must be an integer in [1, {MAX_DRAWS}], got "
                             f"{n_draws!r}.")
        rng = _generator(random_state)
        fitted = self._fitted
        self._params_of(fitted)  # (a failing derivation fails here, before any draw)
        # the statistics drawn from do not change meanwhile: a partial_fit beside the draws
        # copies them (the model's lock is not held for all the draws)
        mark_shown(self, fitted)
        draws = [self._draw(fitted, rng)]
        _check_memory(draws[0][0], count)
        draws += [self._draw(fitted, rng) for _ in range(count - 1)]
        models = []
        for stats, changed in draws:
            model = type(self)(**{**fitted.hyper["params"], "predictive": False, **changed})
            model._publish(model._rederived(Fitted(
                fitted.classes, fitted.n_features, fitted.dtype, fitted.feature_names, stats,
                None, extra=fitted.extra)))
            models.append(model)
        return models
