"""Corpora for the text benchmarks.

* :func:`make_synthetic_corpus` — a 20-Newsgroups-shaped bag-of-words corpus generated reproducibly
  from a fixed seed: by default 11,314 train and 7,532 test documents, a 130,000-word Zipfian
  vocabulary, 20 classes and ~170 distinct words per document on average.
* :func:`load_newsgroups20` and :func:`load_sms_spam` — the real corpora in ``../shared/data``,
  vectorised with scikit-learn's ``CountVectorizer`` fitted on the training part.

Every corpus is returned as a :class:`TextCorpus`: CSR float64 matrices with int32 ``indices`` and
``indptr`` (canonical: sorted indices, no duplicates) and int64 labels ``0 .. n_classes-1``.

How the synthetic corpus is generated (all vectorised; ~1-2 s at full size):

1. A base Zipf distribution over the vocabulary, ``p_r ∝ r**-s`` for the word of frequency rank ``r``.
   Ranks are mapped to column indices by a fixed random permutation, as with a real vectoriser whose
   columns are sorted alphabetically, so frequent words are scattered over the whole table.
2. Each class perturbs the base distribution: every word's probability is multiplied by a lognormal
   factor, and a few hundred class-specific "topic" words (drawn from the mid-frequency range) are
   boosted. The classes are therefore learnable (MultinomialNB reaches roughly the accuracy it has on
   the real 20 Newsgroups) but share most of their mass, as real newsgroups do.
3. Document lengths (in distinct words) are lognormal with the requested mean; each document's
   target number of distinct words is converted to a number of tokens through the expected-distinct
   curve ``E[distinct | L tokens] = Σ_j 1 - (1 - p_j)**L`` of the base distribution.
4. Tokens are drawn i.i.d. from the document's class distribution (inverse-CDF sampling with
   ``searchsorted``), so each document's count vector is a multinomial draw; the (document, word)
   pairs are then counted into a CSR matrix.

Run ``python bench/_corpus.py`` to print the corpus statistics and a MultinomialNB accuracy check.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = [
    "TextCorpus",
    "SIZES",
    "shared_data_dir",
    "make_synthetic_corpus",
    "load_newsgroups20",
    "load_sms_spam",
]

SEED = 20_240_602

#: Shapes of the synthetic corpus for ``--bench-size``.  ``large`` is the shape of the
#: 20 Newsgroups "bydate" split vectorised by ``CountVectorizer()``.
SIZES = {
    "large": dict(n_train=11_314, n_test=7_532, n_features=130_000, n_classes=20, mean_distinct=170.0),
    "small": dict(n_train=2_000, n_test=1_000, n_features=20_000, n_classes=20, mean_distinct=120.0),
}

#: How many documents of the real 20 Newsgroups corpus are used at ``--bench-size=small``
#: (a seeded random subset; the full corpus at ``large``).
NG20_SMALL = (2_000, 1_000)


class TextCorpus(NamedTuple):
    name: str
    X_train: sp.csr_matrix
    y_train: np.ndarray
    X_test: sp.csr_matrix
    y_test: np.ndarray
    classes: np.ndarray  # the label names (for the real corpora) or 0..n_classes-1

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    def describe(self) -> str:
        d_train = np.diff(self.X_train.indptr)
        return (
            f"{self.name}: train {self.X_train.shape}, test {self.X_test.shape}, "
            f"nnz {self.X_train.nnz:,}+{self.X_test.nnz:,}, {len(self.classes)} classes, "
            f"distinct words/doc mean {d_train.mean():.1f} median {np.median(d_train):.0f} "
            f"max {d_train.max()}, tokens/doc mean {self.X_train.sum() / self.X_train.shape[0]:.1f}"
        )


def shared_data_dir() -> Path:
    """``../shared/data`` next to the repository root (it may be absent)."""
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


# --------------------------------------------------------------------------------------------------
# helpers


def _canonical_csr(X: sp.spmatrix) -> sp.csr_matrix:
    """float64 CSR with int32 indices/indptr, sorted indices and no duplicates."""
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()  # also sorts the indices
    if X.nnz > np.iinfo(np.int32).max:  # pragma: no cover - far beyond the benchmark sizes
        raise ValueError("corpus too large for int32 indices")
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


def _counts_to_csr(doc: np.ndarray, word: np.ndarray, n_docs: int, n_features: int) -> sp.csr_matrix:
    """Count (doc, word) token pairs into a canonical CSR matrix (vectorised)."""
    key = doc.astype(np.int64) * n_features + word
    key, counts = np.unique(key, return_counts=True)  # sorted: by doc, then by word
    rows = key // n_features
    cols = (key - rows * n_features).astype(np.int32)
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_docs), out=indptr[1:])
    X = sp.csr_matrix(
        (counts.astype(np.float64), cols, indptr.astype(np.int32)), shape=(n_docs, n_features)
    )
    X.has_sorted_indices = True
    X.has_canonical_format = True
    return X


def _expected_distinct(p: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """E[#distinct words] of a document of L i.i.d. tokens from ``p``, for each L in ``lengths``."""
    logq = np.log1p(-p)  # log(1 - p_j)
    return np.array([np.sum(-np.expm1(L * logq)) for L in lengths])


# --------------------------------------------------------------------------------------------------
# synthetic corpus


def make_synthetic_corpus(
    n_train: int = 11_314,
    n_test: int = 7_532,
    n_features: int = 130_000,
    n_classes: int = 20,
    mean_distinct: float = 170.0,
    *,
    zipf_s: float = 1.07,
    class_noise: float = 0.4,
    n_topic_words: int = 300,
    topic_boost: float = 4.0,
    length_sigma: float = 0.75,
    seed: int = SEED,
    name: str = "ng20-synth",
) -> TextCorpus:
    """A reproducible 20-Newsgroups-shaped bag-of-words corpus (see the module docstring).

    ``length_sigma`` is the sigma of the lognormal number of distinct words per document (real
    20 Newsgroups posts have a long right tail: median ~110, mean ~170, a few with thousands).
    """
    rng = np.random.default_rng(seed)
    n_docs = n_train + n_test

    # 1. base Zipf distribution by rank, and a fixed rank -> column permutation.
    ranks = np.arange(1, n_features + 1, dtype=np.float64)
    base = ranks ** -zipf_s
    base /= base.sum()
    rank_to_col = rng.permutation(n_features).astype(np.int32)

    # 2. per-class distributions over ranks: lognormal noise + boosted topic words.
    logp = np.log(base)[None, :] + class_noise * rng.standard_normal((n_classes, n_features))
    lo, hi = min(50, n_features // 10), max(min(20_000, n_features // 2), 60)
    for c in range(n_classes):  # 20 iterations
        topic = rng.choice(np.arange(lo, hi), size=min(n_topic_words, hi - lo), replace=False)
        logp[c, topic] += np.log(topic_boost)
    logp -= logp.max(axis=1, keepdims=True)
    probs = np.exp(logp)
    probs /= probs.sum(axis=1, keepdims=True)
    cdfs = np.cumsum(probs, axis=1)
    cdfs[:, -1] = 1.0

    # Labels: mildly unbalanced classes (20 Newsgroups ranges from 377 to 600 train documents).
    class_weights = rng.uniform(0.65, 1.0, size=n_classes)
    y = rng.choice(n_classes, size=n_docs, p=class_weights / class_weights.sum()).astype(np.int64)

    # 3. lengths: lognormal distinct-word targets -> token counts via the expected-distinct curve.
    mu = np.log(mean_distinct) - 0.5 * length_sigma**2
    distinct = rng.lognormal(mu, length_sigma, size=n_docs)
    distinct = np.clip(distinct, 5.0, 0.5 * n_features)
    grid = np.unique(np.geomspace(1, 200 * mean_distinct, 120).astype(np.int64)).astype(np.float64)
    curve = _expected_distinct(base, grid)
    n_tokens = np.maximum(np.rint(np.interp(distinct, curve, grid)), 1).astype(np.int64)

    # 4. tokens: inverse-CDF sampling from each class's distribution (one pass per class).
    doc_of_token = np.repeat(np.arange(n_docs, dtype=np.int64), n_tokens)
    class_of_token = y[doc_of_token]
    word_rank = np.empty(doc_of_token.shape[0], dtype=np.int64)
    u = rng.random(doc_of_token.shape[0])
    for c in range(n_classes):
        sel = class_of_token == c
        word_rank[sel] = np.searchsorted(cdfs[c], u[sel], side="right")
    np.minimum(word_rank, n_features - 1, out=word_rank)
    word = rank_to_col[word_rank]

    X = _counts_to_csr(doc_of_token, word, n_docs, n_features)

    # The split is random (the labels are i.i.d., so the first n_train rows are a random sample).
    X_train, X_test = X[:n_train], X[n_train:]
    return TextCorpus(
        name,
        _canonical_csr(X_train),
        y[:n_train].copy(),
        _canonical_csr(X_test),
        y[n_train:].copy(),
        np.arange(n_classes),
    )


# --------------------------------------------------------------------------------------------------
# real corpora


def _vectorise(name, text_train, label_train, text_test, label_test) -> TextCorpus:
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer()  # sklearn's defaults, as in its 20 Newsgroups examples
    X_train = vec.fit_transform(text_train)
    X_test = vec.transform(text_test)
    classes, y_all = np.unique(np.concatenate([label_train, label_test]), return_inverse=True)
    y_all = y_all.astype(np.int64)
    return TextCorpus(
        name,
        _canonical_csr(X_train),
        y_all[: len(label_train)],
        _canonical_csr(X_test),
        y_all[len(label_train):],
        classes,
    )


def _read_jsonl_gz(path: Path):
    texts, labels = [], []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            texts.append(rec["text"])
            labels.append(rec["label"])
    return texts, np.asarray(labels)


def load_newsgroups20(data_dir: Path | None = None, subset: tuple[int, int] | None = None,
                      seed: int = SEED) -> TextCorpus:
    """20 Newsgroups "bydate" (train/test split by date), vectorised with ``CountVectorizer``.

    ``subset=(n_train, n_test)`` takes a seeded random subset of each part (the files are sorted by
    label, so a prefix would not do).
    """
    d = (data_dir or shared_data_dir()) / "newsgroups20"
    t_train, l_train = _read_jsonl_gz(d / "20news-bydate-train.jsonl.gz")
    t_test, l_test = _read_jsonl_gz(d / "20news-bydate-test.jsonl.gz")
    if subset is not None:
        rng = np.random.default_rng(seed)
        i_tr = np.sort(rng.choice(len(t_train), size=min(subset[0], len(t_train)), replace=False))
        i_te = np.sort(rng.choice(len(t_test), size=min(subset[1], len(t_test)), replace=False))
        t_train, l_train = [t_train[i] for i in i_tr], l_train[i_tr]
        t_test, l_test = [t_test[i] for i in i_te], l_test[i_te]
    return _vectorise("ng20-real", t_train, l_train, t_test, l_test)


def load_sms_spam(test_size: float = 0.2, seed: int = SEED) -> TextCorpus:
    """SMS Spam Collection (the copy shipped in ``fastgen.data``, identical to
    ``../shared/data/sms_spam``), fixed seeded 80/20 split, vectorised with ``CountVectorizer``."""
    from fastgen.data import load_sms_spam as read_sms

    texts, labels = read_sms()
    labels = np.asarray(labels)
    perm = np.random.default_rng(seed).permutation(len(texts))
    n_test = int(round(test_size * len(texts)))
    i_te, i_tr = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return _vectorise(
        "sms",
        [texts[i] for i in i_tr], labels[i_tr],
        [texts[i] for i in i_te], labels[i_te],
    )


if __name__ == "__main__":  # pragma: no cover - manual check
    import sys
    import time

    size = sys.argv[1] if len(sys.argv) > 1 else "large"
    t0 = time.perf_counter()
    corpus = make_synthetic_corpus(**SIZES[size])
    print(f"generated in {time.perf_counter() - t0:.2f} s")
    print(corpus.describe())
    try:
        from sklearn.naive_bayes import MultinomialNB
    except ImportError:
        sys.exit(0)
    acc = MultinomialNB().fit(corpus.X_train, corpus.y_train).score(corpus.X_test, corpus.y_test)
    print(f"MultinomialNB test accuracy {acc:.3f} (chance {1 / len(corpus.classes):.3f})")
