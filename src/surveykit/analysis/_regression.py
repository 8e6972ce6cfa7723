"""Design-based linear and logistic regression: R's ``svyglm``.

The coefficients are those of a weighted fit (least squares for ``"gaussian"``, iteratively
reweighted least squares for ``"binomial"``, i.e. R's ``quasibinomial``: a logistic
regression without a likelihood's claims about the variance), converged until the deviance
stops changing (1e-13 relative), with the sandwich taken at the converged fit. R's ``glm``
stops one step earlier and builds its sandwich from that step's working weights: at
``glm.control(epsilon=1e-12)`` its se are up to 2e-8 off the converged ones (and a small
p-value 1.4e-6), at R's default ``epsilon=1e-8`` about 1e-5.

The variance is the design's, through ``svy.varcoef``: the influence value of respondent
``i`` is

    x_i = w_i * (y_i - mu_i) * X_i  (X' W X)^-1,    W = diag(w_i * mu_i (1 - mu_i))

(``mu_i (1 - mu_i)`` is 1 for the linear model; it is R's ``model.matrix * resid(working) *
weights(working)`` times ``summary(g)$cov.unscaled``), and ``Design.vcov`` turns those into
the sandwich variance over PSUs within strata, with the fpc and calibration residuals.

Rows missing the response or a predictor are left out as R's ``na.action = na.omit`` leaves
them out of ``svyglm``: the design is subset to the complete rows (``design[-nas, ]``), a
domain: strata and PSU counts of the variance stay the whole sample's, while the degrees of
freedom count only the PSUs and strata that keep a complete row. The t statistics, p-values
and intervals use R's residual degrees of freedom of a ``svyglm``,
``degf(design) + 1 - number of coefficients``.

On a replicate design (R's ``svyglm.svyrep.design``) the variance is instead R's ``svrVar``
of the coefficients refitted with every replicate's weights (from the full-sample
coefficients, to convergence; a block of replicates at a time, their cross-products one
matrix product, their Newton steps one batched solve), and ``degf`` is the design's as
given: R sets ``df.residual`` before it drops the incomplete rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NoReturn

import numpy as np
import numpy.typing as npt
import pandas as pd

from surveykit.analysis import _formula
from surveykit.analysis import _inputs as inputs
from surveykit.analysis._design import Design, ReplicateDesign, design_of
from surveykit.analysis._influence import Basis, FloatArray, Influence
from surveykit.analysis._inputs import Weights
from surveykit.analysis._replicates import analysis_weight_chunks
from surveykit.errors import AnalysisInputError

Family = Literal["gaussian", "binomial"]
FAMILIES = ("gaussian", "binomial")

MAX_ITERATIONS = 100
TOLERANCE = 1e-13
"""IRLS stops when the deviance changes by less than this, relative (R: ``epsilon``)."""

EPSILON = float(np.finfo(np.float64).eps)
SEPARATED = 10 * EPSILON
"""A fitted probability this close to 0 or 1 means the 0s and 1s are separated."""

ALIASED = 1e-7
"""A column whose part not explained by the columns before it is below this share of its
own size is aliased (R's ``glm`` tolerance for its pivoting QR)."""

__all__ = ["regress"]


def regress(
    data: pd.DataFrame | Design,
    formula: str,
    *,
    family: Family = "gaussian",
    weights: Weights = None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Regression coefficients with design-based standard errors (R's ``svyglm``).

    ``family="gaussian"`` is a linear model; ``family="binomial"`` a logistic one (R's
    ``family=quasibinomial``), with odds ratios. Estimates, standard errors, t statistics,
    p-values and intervals are R's ``summary(svyglm(...))`` and ``confint(...)`` on the same
    design (strata, PSUs, fpc, raking/post-stratification/calibration all count). On a
    :class:`~surveykit.ReplicateDesign` it is R's ``svyglm`` on an ``svrepdesign``: every
    replicate refitted, the variance from the replicate coefficients (R's ``svrVar``, the
    design's ``scale``, ``rscales`` and ``mse``), ``df_residual`` from the design's
    ``degf`` before incomplete rows are dropped.

    A gaussian response is numbers (text holding numbers, or a labelled frame's labels with
    ``attrs["value_codes"]``, as :func:`means` reads them). A binomial response is 0/1
    numbers, booleans, or text/categorical answers with exactly
    two distinct values: then the second (sorted text, or category order) is the event, 1,
    as R codes a two-level factor (the frame's ``attrs["event"]`` says which). Rows missing
    any model variable are left out, as a domain of the design (R's ``na.omit``), and
    counted in ``attrs["dropped"]``.

    Args:
        data: a :class:`~surveykit.Design`, or a frame (with ``weights=``: a design of those
            weights, each row its own PSU; without: equal weights, robust errors).
        formula: ``"response ~ x1 + x2 + a:b"``; ``a*b`` is ``a + b + a:b``; ``- 1`` drops
            the intercept. Numeric columns enter as they are; text, categorical and boolean
            ones as treatment-coded dummies against their first level (sorted text,
            category order, ``FALSE``), named like R's (``regionNorth``); an ordered
            categorical too (R would give it polynomial contrasts). See
            ``surveykit.analysis._formula``.
        family: ``"gaussian"`` or ``"binomial"``.
        weights: a column name or Series (only with a frame).
        ci: the confidence level of the intervals.

    Returns:
        ``["term", "estimate", "se", "statistic", "df", "p_value", "ci_low", "ci_high"]``,
        plus ``["odds_ratio", "or_ci_low", "or_ci_high"]`` for ``"binomial"``, one row per
        coefficient (``"(Intercept)"`` first). ``attrs``: ``formula``, ``family``,
        ``design``, ``df_residual`` (``degf + 1 - coefficients``, R's ``df.residual`` of a
        ``svyglm``), ``degrees_of_freedom`` (the design's, on the complete rows; on a
        replicate design on all its rows, as R), ``vcov`` (the coefficients' variance
        matrix, rows as lists in the terms' order), ``n``
        (rows fitted), ``dropped`` (rows missing a model variable), ``iterations``, ``ci``
        and, for ``"binomial"``, ``event``; on a replicate design ``replicates_dropped``
        (replicates whose refit had a singular model matrix, left out as R's ``na.omit``).

    Raises:
        AnalysisInputError: a column that is not there, a response that is not a number
            (or not 0/1 for ``"binomial"``), a model matrix without full rank (naming the
            columns), a logistic fit that does not converge (separation; on a replicate
            design also a replicate's refit, naming the replicate).

    Example:
        >>> design = sk.Design(df, weights="w", strata="region", psu="household")
        >>> sk.analysis.regress(  # doctest: +SKIP
        ...     design, "renew ~ age + region + nps", family="binomial"
        ... )
    """
    ci = inputs.check_ci(ci)
    if family not in FAMILIES:
        raise AnalysisInputError(f"family must be one of {list(FAMILIES)}, not {family!r}")
    frame, found = design_of(data, weights)
    design = found if found is not None else Design(frame)
    formula_ = _formula.parse(formula)
    codings = {name: _formula.code(frame, name) for name in formula_.variables}
    if family == "gaussian":
        codings[formula_.response] = _numeric_response(frame, codings[formula_.response])
    w = design.weights_array
    complete = ~np.logical_or.reduce([_formula.missing(c) for c in codings.values()])
    response, event = _response(codings[formula_.response], family, complete)
    fitted_rows = complete & (w > 0)
    if not fitted_rows.any():
        raise AnalysisInputError(
            f"formula {formula!r}: no row with a positive weight has every model variable"
        )
    for name in formula_.variables[1:]:
        codings[name] = _formula.used_levels(codings[name], fitted_rows)
    matrix, names = _formula.model_matrix(formula_, codings, fitted_rows)
    fitted_w = np.where(fitted_rows, w, 0.0)
    r = _check_rank(matrix, fitted_w, names, formula)
    fit = _fit(matrix, np.where(fitted_rows, response, 0.0), fitted_w, r, family)
    dropped_replicates = 0
    if isinstance(design, ReplicateDesign):
        # R's svyglm.svyrep.design: degf() of the design as given, before na.omit
        vcov, dropped_replicates = _replicate_vcov(
            design, matrix, response, fitted_rows, fit.coef, family
        )
        degf = design.degrees_of_freedom
    else:
        influence = Influence(len(names))
        influence.add(fit.row, Basis.dense(matrix), fit.bread)
        vcov = design.vcov(influence)
        degf = design.subset(complete).degrees_of_freedom
    df_residual = degf + 1 - len(names)
    result = _table(names, fit.coef, np.sqrt(np.clip(np.diag(vcov), 0.0, None)), df_residual, ci)
    if family == "binomial":
        result["odds_ratio"] = np.exp(result["estimate"])
        result["or_ci_low"] = np.exp(result["ci_low"])
        result["or_ci_high"] = np.exp(result["ci_high"])
    result.attrs = {
        "formula": formula,
        "family": family,
        "design": design.describe(),
        "variance": design.variance_method,
        "df_residual": df_residual,
        "degrees_of_freedom": degf,
        "n": int(fitted_rows.sum()),
        "dropped": int((~complete).sum()),
        "iterations": fit.iterations,
        "ci": ci,
        "vcov": vcov.tolist(),
    }
    if family == "binomial":
        result.attrs["event"] = event
    if isinstance(design, ReplicateDesign):
        result.attrs["replicates_dropped"] = dropped_replicates
    return result


def _replicate_vcov(
    design: ReplicateDesign,
    matrix: FloatArray,
    response: FloatArray,
    rows: np.ndarray,
    coef: FloatArray,
    family: Family,
) -> tuple[FloatArray, int]:
    """R's ``svrVar`` of the coefficients refitted with every replicate's weights.

    As ``svyglm.svyrep.design``: each replicate is fitted to the same rows (those complete
    and of positive full-sample weight) with its analysis weights, from the full-sample
    coefficients, to convergence. A replicate whose model matrix is singular under its
    weights (a level only its deleted PSUs have) gets R's NA coefficients, and R's
    ``na.omit`` of the replicates leaves it out of the variance (all its coefficients).
    Returns the variance and how many replicates were left out.
    """
    x = np.ascontiguousarray(matrix[rows])
    y = response[rows]
    betas = np.full((design.n_replicates, len(coef)), np.nan)
    products = _products(x)
    for chosen, weights in analysis_weight_chunks(design, cells=REFIT_CELLS):
        block = np.ascontiguousarray(weights[rows].T)  # replicates x rows
        del weights
        betas[chosen] = _refit(x, y, block, coef, family, chosen.start, products)
    kept = np.isfinite(betas).all(axis=1)
    if not kept.any():
        raise AnalysisInputError(
            "every replicate's refit has a singular model matrix (R: \"All replicates "
            'contained NAs"); the model has more terms than the replicates can estimate'
        )
    rscales = design.rscales[kept]
    thetas = betas[kept]
    centre = coef if design.mse else thetas[rscales > 0].mean(axis=0)
    deviation = thetas - centre[None, :]
    vcov = design.scale * ((deviation * rscales[:, None]).T @ deviation)
    return np.asarray(vcov, dtype=np.float64), int((~kept).sum())


def _refit(
    x: FloatArray,
    y: FloatArray,
    weights: FloatArray,
    start: FloatArray,
    family: Family,
    first: int,
    products: FloatArray | None = None,
) -> FloatArray:
    """Replicates' coefficients (R's ``glm.fit(start=beta0)`` each), NaN where R gives NA.

    ``weights`` is replicates x rows (replicate ``first`` first). All the replicates of the
    block are fitted together: their cross-products ``X' W_r X`` are one matrix product of
    the weights with the rows' column products (``products``, see ``_grams``), their Newton
    steps one batched solve. Rows of weight 0 add nothing, so no row is copied per
    replicate. A replicate with a column aliased under its weights gets NaN (R: NA).
    """
    k, p = len(weights), x.shape[1]
    betas = np.full((k, p), np.nan)
    counts = (weights > 0).sum(axis=1)
    sums = weights.sum(axis=1)
    fitted = counts > 0
    w = weights * (counts / np.where(fitted, sums, 1.0))[:, None]  # mean 1 over its rows
    gram = _grams(x, w, products)
    fitted &= ~_aliased(gram)
    if not fitted.any():
        return betas
    if family == "gaussian":
        index = np.flatnonzero(fitted)
        gram = gram[index]
        score = w[index] @ (x * (y - x @ start)[:, None])
        step = _solve(gram, score)
        step = step + _solve(gram, score - np.einsum("kpq,kq->kp", gram, step))  # refined
        betas[index] = start[None, :] + step
        return betas
    coef = np.tile(start, (k, 1))
    deviance = np.full(k, np.inf)
    active = fitted.copy()
    event = y > 0
    for _ in range(MAX_ITERATIONS):
        index = np.flatnonzero(active)
        if not len(index):
            return betas
        mu = _expit_inplace(coef[index] @ x.T)
        wi = w[index]
        likelihood = np.where(event, mu, 1 - mu)
        np.log(likelihood, out=likelihood)
        current = -2 * np.einsum("kn,kn->k", wi, likelihood)
        del likelihood
        settled = np.abs(current - deviance[index]) < TOLERANCE * (np.abs(current) + 0.1)
        deviance[index] = current
        if settled.any():
            edge = (((mu <= SEPARATED) | (mu >= 1 - SEPARATED)) & (wi > 0)).any(axis=1)
            if (settled & edge).any():
                _separated(first + int(index[np.flatnonzero(settled & edge)[0]]))
            betas[index[settled]] = coef[index[settled]]
            active[index[settled]] = False
        moving = ~settled
        if not moving.any():
            return betas
        m, wm = mu[moving], wi[moving]
        del mu, wi
        residual = np.subtract(y[None, :], m)
        residual *= wm
        score = residual @ x
        del residual
        m *= m - 1  # mu (1 - mu), in place
        np.negative(m, out=m)
        m *= wm
        coef[index[moving]] += _solve(_grams(x, m, products), score)
    _separated(first + int(np.flatnonzero(active)[0]))


def _expit_inplace(eta: FloatArray) -> FloatArray:
    """``_expit`` overwriting ``eta`` (a replicates x rows block)."""
    np.clip(eta, -700.0, 700.0, out=eta)
    np.negative(eta, out=eta)
    np.exp(eta, out=eta)
    eta += 1.0
    np.reciprocal(eta, out=eta)
    np.clip(eta, EPSILON, 1 - EPSILON, out=eta)
    return eta


def _separated(r: int) -> NoReturn:
    raise AnalysisInputError(
        f"replicate {r + 1}: the logistic refit has fitted probabilities of 0 or 1 (R warns "
        'and keeps it: "fitted probabilities numerically 0 or 1 occurred"): with this '
        "replicate's weights a predictor separates the 0s from the 1s; leave it out or "
        "merge its levels"
    )


REFIT_CELLS = 2_000_000
"""Replicates x rows refitted at a time (a logistic refit keeps a few such blocks)."""

ROW_BLOCK_CELLS = 4_000_000
"""Rows x column products built at a time for the replicates' cross-products."""

PRODUCT_CELLS = 16_000_000
"""Rows x column products kept for a whole fit (128 MB; more: built per block, per step)."""


def _products(x: FloatArray) -> FloatArray | None:
    """The rows' column products ``x_j x_k`` (j <= k) when they fit in ``PRODUCT_CELLS``."""
    left, right = np.triu_indices(x.shape[1])
    if x.shape[0] * len(left) > PRODUCT_CELLS:
        return None
    return np.asarray(x[:, left] * x[:, right], dtype=np.float64)


def _grams(x: FloatArray, w: FloatArray, products: FloatArray | None = None) -> FloatArray:
    """``X' diag(w_r) X`` for every row ``w_r`` of ``w`` (k x rows): k x p x p.

    One matrix product of ``w`` with the rows' column products (``products``, or made a
    block of rows at a time when they are not given).
    """
    p = x.shape[1]
    left, right = np.triu_indices(p)
    if products is not None:
        out = w @ products
    else:
        out = np.zeros((len(w), len(left)))
        step = max(1, ROW_BLOCK_CELLS // len(left))
        for a in range(0, x.shape[0], step):
            rows = slice(a, a + step)
            out += w[:, rows] @ (x[rows][:, left] * x[rows][:, right])
    gram = np.empty((len(w), p, p))
    gram[:, left, right] = out
    gram[:, right, left] = out
    return gram


def _solve(gram: FloatArray, score: FloatArray) -> FloatArray:
    """``gram_r^-1 score_r`` for every replicate, on the equilibrated cross-products."""
    scale = 1 / np.sqrt(np.diagonal(gram, axis1=1, axis2=2))
    equilibrated = gram * scale[:, :, None] * scale[:, None, :]
    step = np.linalg.solve(equilibrated, (score * scale)[:, :, None])[:, :, 0]
    return np.asarray(step * scale, dtype=np.float64)


def _aliased(gram: FloatArray) -> npt.NDArray[np.bool_]:
    """Per replicate, whether a column is aliased (as ``_check_rank``, on ``X' W X``).

    The diagonal of the Cholesky factor of the equilibrated cross-product is each column's
    share not explained by the columns before it, R's pivoting test.
    """
    out = np.zeros(len(gram), dtype=bool)
    for r, g in enumerate(gram):
        size = np.sqrt(np.diag(g))
        if (size == 0).any():
            out[r] = True
            continue
        try:
            factor = np.linalg.cholesky(g / np.outer(size, size))
        except np.linalg.LinAlgError:
            out[r] = True
            continue
        out[r] = bool((np.abs(np.diag(factor)) <= ALIASED).any())
    return out


def _response(
    coding: _formula.Coding, family: Family, complete: np.ndarray
) -> tuple[FloatArray, str | None]:
    """The response as numbers (0/1 for binomial) and, for a two-level factor, its event."""
    name = coding.name
    if coding.numbers is not None:
        y = coding.numbers
        if family == "binomial":
            values = np.unique(y[complete])
            if not np.isin(values, (0.0, 1.0)).all():
                bad = [v for v in values if v not in (0.0, 1.0)][:3]
                raise AnalysisInputError(
                    f"response {name!r}: a binomial model needs 0/1 answers (or booleans, or "
                    f"text with two values), and it has {', '.join(map(str, bad))}"
                )
        return y, None
    assert coding.codes is not None
    used = np.unique(coding.codes[complete & (coding.codes >= 0)])
    if family == "gaussian":
        if coding.levels == ("FALSE", "TRUE"):
            return np.where(coding.codes >= 0, coding.codes, np.nan).astype(np.float64), None
        raise AnalysisInputError(f"response {name!r} is not numeric")
    if len(used) != 2 and coding.levels != ("FALSE", "TRUE"):
        raise AnalysisInputError(
            f"response {name!r}: a binomial model needs two distinct answers (or 0/1, or "
            f"booleans); it has {len(used)}: {[coding.levels[i] for i in used[:5]]}"
        )
    event_code = int(used[-1]) if coding.levels != ("FALSE", "TRUE") else 1
    y = np.where(coding.codes < 0, np.nan, (coding.codes == event_code).astype(np.float64))
    return y, coding.levels[event_code]


def _numeric_response(frame: pd.DataFrame, coding: _formula.Coding) -> _formula.Coding:
    """A gaussian response given as text or labels, as numbers (as ``means()`` reads them).

    Text holding numbers (``"7"``) and the labels of a labelled frame (mapped back through
    ``attrs["value_codes"]``) are numbers; any other answer is an error naming its row.
    """
    if coding.numbers is not None or coding.levels == ("FALSE", "TRUE"):
        return coding
    ans = inputs.answers(frame, coding.name)
    values = ans.numbers(inputs.question_series(frame, coding.name), "a gaussian model's response")
    numbers = np.append(values, np.nan)[np.where(ans.codes >= 0, ans.codes, len(values))]
    return _formula.Coding(coding.name, np.asarray(numbers, dtype=np.float64), None)


@dataclass(frozen=True)
class _Fit:
    """A converged weighted fit: coefficients, the influence's row factor and bread."""

    coef: FloatArray
    row: FloatArray  # w_i (y_i - mu_i), 0 outside the fit
    bread: FloatArray  # (X' W X)^-1
    iterations: int


def _triangular(matrix: FloatArray, weight: FloatArray) -> FloatArray:
    """``R`` of the QR decomposition of ``sqrt(weight) * matrix`` (R's ``glm`` QR)."""
    return np.asarray(np.linalg.qr(matrix * np.sqrt(weight)[:, None], mode="r"), np.float64)


def _newton_step(matrix: FloatArray, weight: FloatArray, score: FloatArray) -> FloatArray:
    """``(X' W X)^-1 score`` by Cholesky on the equilibrated p x p cross-product.

    The step only needs to point the right way: the fit's accuracy comes from the score
    ``X' w (y - mu)`` driven to 0, not from the cross-product's (p x p instead of the
    rows x p QR, which takes a second on a million rows).
    """
    from scipy import linalg

    gram = (matrix * weight[:, None]).T @ matrix
    scale = 1 / np.sqrt(np.diag(gram))
    step = linalg.solve(gram * np.outer(scale, scale), score * scale, assume_a="pos")
    return np.asarray(step * scale, dtype=np.float64)


def _fit(matrix: FloatArray, y: FloatArray, w: FloatArray, r: FloatArray, family: Family) -> _Fit:
    """R's ``glm.fit`` with weights ``w`` (rescaled as ``svyglm`` does; the scale cancels).

    ``r`` is the QR factor of ``sqrt(w) * matrix`` (``w`` rescaled to mean 1 over the rows
    of positive weight, as ``_check_rank`` does): for a linear model the bread itself.
    """
    from scipy import linalg

    used = w > 0
    w = w / w[used].mean()
    x, yy, ww = matrix[used], y[used], w[used]
    if family == "gaussian":
        coef = np.zeros(x.shape[1])
        for _ in range(2):  # the solve, then one refinement of its rounding
            coef = coef + _newton_step(x, ww, x.T @ (ww * (yy - x @ coef)))
        mu = x @ coef
        iterations = 1
    else:
        # R's start (binomial()$initialize) and first step, a least-squares fit of the
        # working response; then Newton steps (R's IRLS steps) until the deviance settles.
        mu = (ww * yy + 0.5) / (ww + 1.0)
        working = ww * mu * (1 - mu)
        eta = np.log(mu / (1 - mu))
        coef = _newton_step(x, working, x.T @ (working * eta + ww * (yy - mu)))
        deviance = np.inf
        converged = False
        for iterations in range(1, MAX_ITERATIONS + 1):  # noqa: B007
            mu = _expit(x @ coef)
            previous, deviance = deviance, _binomial_deviance(yy, mu, ww)
            converged = abs(deviance - previous) < TOLERANCE * (abs(deviance) + 0.1)
            if converged:
                break
            coef = coef + _newton_step(x, ww * mu * (1 - mu), x.T @ (ww * (yy - mu)))
        if not converged or ((mu <= SEPARATED) | (mu >= 1 - SEPARATED)).any():
            raise AnalysisInputError(
                'the logistic fit has fitted probabilities of 0 or 1 (R warns: "fitted '
                'probabilities numerically 0 or 1 occurred"): a predictor (or a mix of them) '
                "separates the 0s from the 1s, so some coefficient is infinite; leave it out "
                "or merge its levels"
            )
        r = _triangular(x, ww * mu * (1 - mu))
    r_inverse = linalg.solve_triangular(r, np.eye(r.shape[0]))
    bread = np.asarray(r_inverse @ r_inverse.T, dtype=np.float64)
    residual = np.zeros(len(y))
    residual[used] = yy - mu
    return _Fit(coef, w * residual, bread, iterations)


def _expit(eta: FloatArray) -> FloatArray:
    """The logistic function, kept an epsilon inside (0, 1) as R's ``binomial()$linkinv``."""
    mu = 1 / (1 + np.exp(-np.clip(eta, -700.0, 700.0)))
    return np.asarray(np.clip(mu, EPSILON, 1 - EPSILON), dtype=np.float64)


def _binomial_deviance(y: FloatArray, mu: FloatArray, w: FloatArray) -> float:
    with np.errstate(divide="ignore"):
        loglik = np.where(y > 0, y * np.log(mu), 0.0) + np.where(
            y < 1, (1 - y) * np.log(1 - mu), 0.0
        )
    return float(-2 * np.sum(w * loglik))


def _check_rank(
    matrix: FloatArray, weight: FloatArray, names: list[str], formula: str
) -> FloatArray:
    """The QR factor of the weighted matrix, or an error naming the aliased columns.

    A column whose part that the columns before it do not explain is below ``ALIASED``
    of its own size is aliased (R drops it with an NA coefficient; this names it).
    """
    used = weight > 0
    if used.sum() < matrix.shape[1]:
        raise AnalysisInputError(
            f"formula {formula!r}: {int(used.sum())} complete rows cannot fit "
            f"{matrix.shape[1]} coefficients"
        )
    x, ww = matrix[used], weight[used] / weight[used].mean()
    r = _triangular(x, ww)
    sizes = np.linalg.norm(x * np.sqrt(ww)[:, None], axis=0)
    aliased = np.flatnonzero((np.abs(np.diag(r)) <= ALIASED * sizes) | (sizes == 0))
    if len(aliased):
        raise AnalysisInputError(
            f"formula {formula!r}: the model matrix is singular: "
            f"{[names[j] for j in aliased]} repeat(s) what the columns before explain "
            "(a level every complete row shares, a column that is a sum of others, or a "
            "level only rows without weight use); leave one out"
        )
    return r


def _table(
    names: list[str], coef: FloatArray, se: FloatArray, df_residual: int, ci: float
) -> pd.DataFrame:
    """R's ``summary(svyglm)`` coefficient table and ``confint`` as a tidy frame."""
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = coef / se
    if df_residual > 0:
        p_value = 2 * stats.t.sf(np.abs(statistic), df_residual)
        half = stats.t.ppf(1 - (1 - ci) / 2, df_residual) * se
    else:
        p_value = np.full(len(coef), np.nan)
        half = np.full(len(coef), np.nan)
    return pd.DataFrame(
        {
            "term": names,
            "estimate": coef,
            "se": se,
            "statistic": statistic,
            "df": df_residual,
            "p_value": p_value,
            "ci_low": coef - half,
            "ci_high": coef + half,
        }
    )
