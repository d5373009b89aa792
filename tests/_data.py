"""Test data: small slices of the shared real corpora and synthetic Zipfian counts.

Real-data loaders take the ``shared/data`` directory (see ``conftest.shared_data``)
and need scikit-learn for ``CountVectorizer``; they are cached, so a corpus is read and
vectorised once per session. Nothing here touches the network.
"""

import gzip
import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from fastgen.data import load_sms_spam

# ---------------------------------------------------------------------------------------
# Real corpora


def read_newsgroups(data_dir, subset, n=None, seed=0):
    """20 newsgroups 'bydate' (texts, labels); ``n`` documents drawn without
    replacement with ``seed`` (the files are sorted by label, so never take a prefix)."""
    path = Path(data_dir) / "newsgroups20" / f"20news-bydate-{subset}.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    if n is not None and n < len(docs):
        idx = np.sort(np.random.default_rng(seed).choice(len(docs), n, replace=False))
        docs = [docs[i] for i in idx]
    return [d["text"] for d in docs], np.asarray([d["label"] for d in docs])


def _vectorise(train_texts, test_texts):
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer()
    X_train = vec.fit_transform(train_texts).tocsr()
    X_test = vec.transform(test_texts).tocsr()
    return X_train, X_test


@lru_cache(maxsize=None)
def sms_counts():
    """SMS spam (the copy shipped in fastgen.data, identical to ../shared/data/sms_spam) as word
    counts: X_train, X_test (CSR int64), y_train, y_test (str). Every 4th message is a test
    message."""
    texts, labels = load_sms_spam()
    test = np.arange(len(texts)) % 4 == 3
    train_texts = [t for t, m in zip(texts, test) if not m]
    test_texts = [t for t, m in zip(texts, test) if m]
    X_train, X_test = _vectorise(train_texts, test_texts)
    return X_train, X_test, labels[~test], labels[test]


@lru_cache(maxsize=None)
def newsgroups_counts(data_dir, n_train=2000, n_test=1000, seed=0):
    """20 newsgroups as word counts (vocabulary of the training slice):
    X_train, X_test (CSR int64), y_train, y_test (str). ``None`` means the full set."""
    train_texts, y_train = read_newsgroups(data_dir, "train", n_train, seed)
    test_texts, y_test = read_newsgroups(data_dir, "test", n_test, seed + 1)
    X_train, X_test = _vectorise(train_texts, test_texts)
    return X_train, X_test, y_train, y_test


# ---------------------------------------------------------------------------------------
# Synthetic data


def zipf_counts(n_samples, n_features, n_classes=3, mean_len=40, seed=0, dtype=np.float64):
    """Bag-of-words counts: each class draws words from its own permutation of a
    Zipf(1.1) vocabulary distribution; document lengths are 1 + Poisson(mean_len).
    Returns (CSR matrix with sorted, unique indices, int labels 0..n_classes-1); every
    class appears at least once when n_samples >= n_classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_samples)
    y[: min(n_classes, n_samples)] = np.arange(min(n_classes, n_samples))
    lengths = 1 + rng.poisson(mean_len, n_samples)
    base = 1.0 / np.arange(1, n_features + 1) ** 1.1
    rows, cols = [], []
    for c in range(n_classes):
        members = np.flatnonzero(y == c)
        if members.size == 0:
            continue
        p = base[rng.permutation(n_features)]
        p /= p.sum()
        r = np.repeat(members, lengths[members])
        rows.append(r)
        cols.append(rng.choice(n_features, size=r.size, p=p))
    rows = np.concatenate(rows)
    cols = np.concatenate(cols)
    X = sp.coo_matrix(
        (np.ones(rows.size, dtype=dtype), (rows, cols)), shape=(n_samples, n_features)
    ).tocsr()
    X.sum_duplicates()
    X.sort_indices()
    return X, y


def to_format(X, fmt, dtype=None):
    """Convert a sparse or dense matrix to one of the accepted input formats:
    'dense', 'csr_matrix', 'csr_array', 'csr_int64' (csr_array with int64 indices and
    indptr), 'csc', 'coo'."""
    if dtype is not None:
        X = X.astype(dtype)
    if fmt == "dense":
        return np.ascontiguousarray(X.toarray() if sp.issparse(X) else X)
    if fmt == "csr_matrix":
        return sp.csr_matrix(X)
    if fmt == "csr_array":
        Y = sp.csr_array(X)
        Y.indices = Y.indices.astype(np.int32)
        Y.indptr = Y.indptr.astype(np.int32)
        return Y
    if fmt == "csr_int64":
        Y = sp.csr_array(X)
        Y.indices = Y.indices.astype(np.int64)
        Y.indptr = Y.indptr.astype(np.int64)
        return Y
    if fmt == "csc":
        return sp.csc_matrix(X)
    if fmt == "coo":
        return sp.coo_matrix(X)
    raise ValueError(fmt)


CSR_FORMATS = ["csr_matrix", "csr_array", "csr_int64"]
ALL_FORMATS = ["dense"] + CSR_FORMATS


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def readonly(X):
    """A copy of X whose arrays are not writeable."""
    if sp.issparse(X):
        X = X.copy()
        for a in (X.data, X.indices, X.indptr):
            a.setflags(write=False)
        return X
    X = np.array(X)
    X.setflags(write=False)
    return X


def fitted_attrs(est):
    """The fitted statistics and parameters common to the three discrete models."""
    names = ["class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_"]
    if hasattr(est, "feature_all_"):
        names.append("feature_all_")
    return {n: getattr(est, n) for n in names}


def jll_scale(est, X):
    """An upper bound of the magnitude of the terms summed in each row's joint
    log-likelihood, max over rows: absolute tolerances for log-probabilities scale
    with it (summation order differs between implementations)."""
    W = np.abs(np.asarray(est.feature_log_prob_, dtype=np.float64))
    Xa = abs(sp.csr_matrix(X, dtype=np.float64)) if sp.issparse(X) else np.abs(
        np.asarray(X, dtype=np.float64)
    )
    s = np.asarray(Xa @ W.T)
    prior = np.abs(np.asarray(est.class_log_prior_, dtype=np.float64))
    prior = prior[np.isfinite(prior)].max() if np.isfinite(prior).any() else 0.0
    # Bernoulli also sums log(1 - p) over every feature
    extra = np.abs(np.log1p(-np.exp(-W))).sum(axis=1).max() if hasattr(est, "binarize") else 0.0
    return max(1.0, float(s.max(initial=0.0)) + prior + float(extra))


@lru_cache(maxsize=None)
def horse_colic(data_dir):
    """UCI horse colic, training and test files together, with its own holes ('?' -> NaN):
    X (366, 22) of the numeric and coded columns, y the outcome (1 lived, 2 died, 3
    euthanized). Dropped: the hospital number, the outcome, the lesion codes and cp_data."""
    rows = []
    for name in ("horse-colic.data", "horse-colic-test.data"):
        lines = (Path(data_dir) / "horse_colic" / name).read_text().splitlines()
        for line in lines[1:]:  # (a header of column names)
            fields = line.split()
            if len(fields) >= 28:
                rows.append([np.nan if v == "?" else float(v) for v in fields[:28]])
    A = np.array(rows)
    keep = ~np.isnan(A[:, 22])
    X = np.delete(A, [2, 22, 24, 25, 26, 27], axis=1)[keep]
    return np.ascontiguousarray(X), A[keep, 22].astype(int)


ADULT_NAMES = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
               "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
               "hours_per_week", "native_country"]


def adult_frame(data_dir, n=None, subset="train"):
    """UCI adult as pandas reads it (6 integer columns, 8 text columns with holes, '?' ->
    NaN): the first ``n`` rows' features as a DataFrame, and the income labels."""
    import pandas as pd

    df = pd.read_csv(Path(data_dir) / "adult" / f"adult-{subset}.csv", header=None,
                     skipinitialspace=True, na_values="?", nrows=n)
    X = df.iloc[:, :14].copy()
    X.columns = ADULT_NAMES
    return X, df.iloc[:, 14].str.rstrip(".").to_numpy()
