"""Estimator base classes and input validation: scikit-learn's own where it
is installed (so get_params, set_params, clone, tags, repr, fitted checks
and the error messages are scikit-learn's), a small stand-in otherwise
that keeps get_params / set_params / fit_predict and refuses bad input
with messages of the same kind."""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from . import _clib
from ._arrays import as_numpy
from ._errors import InvalidArgumentError

try:
    from sklearn.base import BaseEstimator, ClusterMixin
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted
    try:  # scikit-learn >= 1.6
        from sklearn.utils.validation import validate_data as _sk_validate_data
    except ImportError:
        _sk_validate_data = None
    HAVE_SKLEARN = True
except ImportError:
    HAVE_SKLEARN = False

    # The stand-ins take the names of scikit-learn's classes when it is not installed.
    class NotFittedError(ValueError, AttributeError):  # type: ignore[no-redef]
        """Raised when a fitted attribute or method is used before fit."""

    class BaseEstimator:  # type: ignore[no-redef]
        """get_params / set_params / repr from the constructor's arguments, as
        scikit-learn's BaseEstimator does."""

        @classmethod
        def _get_param_names(cls) -> list[str]:
            sig = inspect.signature(cls.__init__)
            return sorted(p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD)

        def get_params(self, deep: bool = True) -> dict[str, Any]:
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params: Any) -> BaseEstimator:
            names = self._get_param_names()
            for key, value in params.items():
                if key not in names:
                    raise InvalidArgumentError(f"Invalid parameter {key!r} for estimator {type(self).__name__}. "
                                               f"Valid parameters are: {names!r}.")
                setattr(self, key, value)
            return self

        def __repr__(self) -> str:
            args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
            return f"{type(self).__name__}({args})"

    class ClusterMixin:  # type: ignore[no-redef]
        _estimator_type = "clusterer"

        def fit_predict(self, X: Any, y: Any = None, **kwargs: Any) -> np.ndarray:
            return self.fit(X, **kwargs).labels_  # type: ignore[attr-defined]  # fit is the estimator's

    def check_is_fitted(estimator: Any, attributes: Any = None) -> None:
        if not any(k.endswith("_") and not k.startswith("__") for k in vars(estimator)):
            raise NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
                                 "appropriate arguments before using this estimator.")


def validate(estimator: Any, X: Any, *, reset: bool, sparse: bool, name: str = "X", allow_nan: bool = True) -> Any:
    """X as a float64 (n, d) array (or a CSR matrix when sparse is allowed),
    NaN and infinity left in (allow_nan) or refused; with reset,
    n_features_in_ and feature_names_in_ are set, else X must have the
    fitted number of features. scikit-learn's validate_data where
    installed."""
    kwargs = dict(accept_sparse="csr" if sparse else False, dtype=np.float64, reset=reset)
    if HAVE_SKLEARN:
        if _sk_validate_data is not None:
            return _sk_validate_data(estimator, X, ensure_all_finite=not allow_nan, **kwargs)
        return estimator._validate_data(X, force_all_finite=not allow_nan, **kwargs)
    x = _validate_without_sklearn(estimator, X, reset, name)
    if not allow_nan and not np.isfinite(x).all():
        raise InvalidArgumentError(f"Input {name} contains {'NaN' if np.isnan(x).any() else 'infinity'}.")
    return x


def _validate_without_sklearn(estimator: Any, X: Any, reset: bool, name: str) -> np.ndarray:
    columns = getattr(X, "columns", None)
    a = as_numpy(X, name)
    if a.dtype.kind == "c":
        raise InvalidArgumentError("Complex data not supported")
    if a.ndim != 2:
        raise InvalidArgumentError(f"Expected 2D array, got {a.ndim}D array instead. Reshape your data either using "
                                   "array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) "
                                   "if it contains a single sample.")
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"{name}: could not convert to float64 ({e})") from None
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise InvalidArgumentError(f"Found array with {a.shape[0]} sample(s) and {a.shape[1]} feature(s) (shape="
                                   f"{a.shape}) while a minimum of 1 is required.")
    if reset:
        estimator.n_features_in_ = a.shape[1]
        if columns is not None and all(isinstance(c, str) for c in columns):
            estimator.feature_names_in_ = np.asarray(list(columns), dtype=object)
    elif a.shape[1] != estimator.n_features_in_:
        raise InvalidArgumentError(f"X has {a.shape[1]} features, but {type(estimator).__name__} is expecting "
                                   f"{estimator.n_features_in_} features as input.")
    return a


def threads_from_n_jobs(n_jobs: int | None, default: int | None, name: str = "n_jobs") -> int | None:
    """grove threads for scikit-learn's n_jobs: None = default, a positive
    count as it is, negative counts from the cores grove may use
    (``grove_cores``: OMP_NUM_THREADS or the CPUs, under a cgroup quota) as
    joblib counts from its CPUs: cores + 1 + n_jobs, at least 1; -1 (all
    of them) is the default, which also leaves out the cores other
    processes keep busy."""
    if n_jobs is None:
        return default
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise InvalidArgumentError(f"{name}: a nonzero integer or None, got {n_jobs!r}")
    if n_jobs > 0:
        return int(n_jobs)
    cores = openmp_cores()
    threads = max(cores + 1 + int(n_jobs), 1)
    return None if threads == cores else threads


def openmp_cores() -> int:
    """The most threads grove's default uses (grove_cores)."""
    return int(_clib.lib.grove_cores())
