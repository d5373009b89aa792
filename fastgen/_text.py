"""A tiny bag-of-words counter for the demo (private; not part of the public API).

It reproduces scikit-learn's ``CountVectorizer()`` with default settings, so that the demo runs
where only NumPy and SciPy are installed and its matrices are identical to scikit-learn's:

- lowercase with ``str.lower``, no accent stripping;
- tokens are the matches of ``r"(?u)\\b\\w\\w+\\b"`` (two or more word characters);
- the vocabulary maps each training token to its rank in ``sorted()`` order;
- ``count_matrix`` returns int64 counts in canonical CSR (sorted indices, no duplicates);
  tokens not in the vocabulary are ignored.
"""

import re
from itertools import chain

import numpy as np
import scipy.sparse as sp

__all__ = ["TOKEN_PATTERN", "tokenize", "build_vocabulary", "count_matrix", "fit_transform"]

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_token_re = re.compile(TOKEN_PATTERN)


def tokenize(doc):
    """Return the list of lowercase tokens of one string."""
    if not isinstance(doc, str):
        raise TypeError(f"documents must be str, got {type(doc).__name__}")
    return _token_re.findall(doc.lower())


def build_vocabulary(docs):
    """Return ``{token: column}`` with columns in sorted token order (like CountVectorizer)."""
    tokens = set()
    for doc in docs:
        tokens.update(tokenize(doc))
    if not tokens:
        raise ValueError("empty vocabulary; the documents contain no tokens")
    return {token: column for column, token in enumerate(sorted(tokens))}


def count_matrix(docs, vocabulary):
    """Return the ``(len(docs), len(vocabulary))`` int64 CSR matrix of token counts."""
    token_lists = [tokenize(doc) for doc in docs]
    lengths = np.fromiter(map(len, token_lists), dtype=np.intp, count=len(token_lists))
    get = vocabulary.get
    cols = np.fromiter((get(t, -1) for t in chain.from_iterable(token_lists)),
                       dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(token_lists), dtype=np.int64), lengths)
    known = cols >= 0
    rows, cols = rows[known], cols[known]
    shape = (len(token_lists), len(vocabulary))
    X = sp.csr_matrix((np.ones(rows.shape[0], dtype=np.int64), (rows, cols)), shape=shape)
    X.sum_duplicates()  # also sorts the indices
    return X


def fit_transform(docs):
    """Build the vocabulary of ``docs`` and count them; return ``(X, vocabulary)``."""
    docs = list(docs)
    vocabulary = build_vocabulary(docs)
    return count_matrix(docs, vocabulary), vocabulary
