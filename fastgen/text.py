"""Raw documents to CSR token counts: ``HashingVectorizer`` and ``CountVectorizer``.

They produce scikit-learn's matrices (same columns, values, order and dtypes) for the same settings,
and the text models take them directly::

    from sklearn.pipeline import make_pipeline
    pipe = make_pipeline(fastgen.text.HashingVectorizer(alternate_sign=False, norm=None),
                         fastgen.MultinomialNB())

The default word analyzer (lowercase, ``token_pattern=r"(?u)\\b\\w\\w+\\b"``, word n-grams, stop
words) runs in Cython over the strings' own buffers, without the GIL and across cores
(``fastgen/_core/_text.pyx``). Any other analyzer -- a custom ``token_pattern``, ``tokenizer``,
``preprocessor``, ``strip_accents``, ``analyzer="char"``/``"char_wb"`` or a callable -- runs in
Python exactly as scikit-learn defines it, and its features are then hashed or counted by the
same kernels. Documents are read from any iterable in batches, so a generator over a file streams
in bounded memory.
"""
from __future__ import annotations

import numbers
import re
import unicodedata
import warnings
from collections.abc import Iterable
from typing import Any, Callable, NamedTuple

import numpy as np
import scipy.sparse as sp

from ._base import BaseEstimator
from ._core import _text
from ._core._openmp import effective_n_threads
from ._validation import check_is_fitted

__all__ = ["DEFAULT_TOKEN_PATTERN", "CountVectorizer", "HashingVectorizer"]

DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
# Documents are handed to the kernels in batches of about this many characters (or documents):
# large enough to keep every core busy, small enough that a stream's memory stays bounded.
BATCH_CHARS = 1 << 25
BATCH_DOCS = 1 << 16
_INT32_MAX = np.iinfo(np.int32).max
_WHITE_SPACES = re.compile(r"\s\s+")


def strip_accents_unicode(s: str) -> str:
    """Remove accents: NFKD, then drop the combining characters (scikit-learn's function)."""
    try:
        s.encode("ASCII", errors="strict")
        return s
    except UnicodeEncodeError:
        normalized = unicodedata.normalize("NFKD", s)
        return "".join([c for c in normalized if not unicodedata.combining(c)])


def strip_accents_ascii(s: str) -> str:
    """Transliterate to ASCII: NFKD, then drop what is not ASCII (scikit-learn's function)."""
    nkfd_form = unicodedata.normalize("NFKD", s)
    return nkfd_form.encode("ASCII", "ignore").decode("ASCII")


def _check_ngram_range(ngram_range):
    if (not isinstance(ngram_range, tuple) or len(ngram_range) != 2
            or not all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in ngram_range)):
        raise TypeError(f"ngram_range must be a tuple (min_n, max_n) of two ints, got {ngram_range!r}")
    min_n, max_n = ngram_range
    if min_n < 1:
        raise ValueError(f"ngram_range={ngram_range}: n-gram lengths must be at least 1")
    if min_n > max_n:
        raise ValueError(f"Invalid value for ngram_range={ngram_range} lower boundary larger than "
                         "the upper boundary.")
    if max_n > 1 << 16:
        raise ValueError(f"ngram_range={ngram_range}: n-grams longer than 65536 tokens are not supported")
    return int(min_n), int(max_n)


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices!r}, got {value!r}")


def _check_stop_words(stop_words):
    """None, or the frozenset of stop words ("english" is scikit-learn's list, when installed)."""
    if stop_words is None:
        return None
    if isinstance(stop_words, str):
        if stop_words != "english":
            raise ValueError(f"not a built-in stop list: {stop_words}")
        try:
            from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
        except ImportError:
            raise ValueError("stop_words='english' is scikit-learn's list and scikit-learn is not "
                             "installed: pass the stop words as a list") from None
        return frozenset(ENGLISH_STOP_WORDS)
    try:
        return frozenset(stop_words)
    except TypeError:
        raise TypeError(f"stop_words must be None, 'english' or a collection of str, got "
                        f"{type(stop_words).__name__}") from None


def _assemble(parts, n_rows, n_cols, dtype):
    """One CSR matrix from the kernels' (indptr, keys, counts) batches."""
    nnz = sum(p[1].shape[0] for p in parts)
    index_dtype = np.int32 if max(nnz, n_cols) <= _INT32_MAX else np.int64
    if len(parts) == 1:  # one batch: its arrays are the matrix's
        indptr, indices, data = parts[0]
        return sp.csr_matrix((data.astype(dtype, copy=False), indices.astype(index_dtype, copy=False),
                              indptr.astype(index_dtype, copy=False)), shape=(n_rows, n_cols),
                             copy=False)
    indptr = np.empty(n_rows + 1, dtype=index_dtype)
    indptr[0] = 0
    indices = np.empty(nnz, dtype=index_dtype)
    data = np.empty(nnz, dtype=dtype)
    row = pos = 0
    for p_indptr, keys, counts in parts:
        n, m = p_indptr.shape[0] - 1, keys.shape[0]
        indptr[row + 1:row + n + 1] = p_indptr[1:] + pos
        indices[pos:pos + m] = keys
        data[pos:pos + m] = counts
        row, pos = row + n, pos + m
    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols), copy=False)


def _select_columns(X, new_index):
    """X with column j moved to new_index[j] (dropped where -1), keeping each row's entry order
    (what scipy's ``X[:, kept]`` and an index remap do in scikit-learn)."""
    new = new_index[X.indices]
    keep = new >= 0
    kept_before = np.zeros(X.nnz + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    indptr = kept_before[X.indptr].astype(X.indptr.dtype)
    n_cols = int(new_index.max(initial=-1)) + 1
    return sp.csr_matrix((X.data[keep], new[keep].astype(X.indices.dtype), indptr),
                         shape=(X.shape[0], n_cols), copy=False)


class _Settings(NamedTuple):
    """The validated parameters, in the form the kernels take (made per call, never stored)."""

    fast: bool                                 # the Cython tokeniser applies (default analyzer)
    min_n: int
    max_n: int
    stop: frozenset | None                     # stop words, for the Python analyzer
    stop_table: _text.Vocabulary | None        # the same, for the tokeniser
    n_threads: int
    dtype: np.dtype
    n_columns: int = 0                         # hashing: n_features
    signed: bool = False                       # hashing: alternate_sign


class _Vectorizer(BaseEstimator):
    """What the two vectorisers share: parameters, decoding, the analyzers and the batching."""

    # -- parameters ------------------------------------------------------------------------------
    def _settings(self) -> _Settings:
        """Check every parameter (a ValueError/TypeError naming it); the kernels' settings."""
        _check_choice("input", self.input, ("content", "filename", "file"))
        _check_choice("decode_error", self.decode_error, ("strict", "ignore", "replace"))
        if not isinstance(self.encoding, str):
            raise TypeError(f"encoding must be a str, got {self.encoding!r}")
        if not (self.strip_accents in (None, "ascii", "unicode") or callable(self.strip_accents)):
            raise ValueError(f"strip_accents must be None, 'ascii', 'unicode' or a callable, got "
                             f"{self.strip_accents!r}")
        if not (self.analyzer in ("word", "char", "char_wb") or callable(self.analyzer)):
            raise ValueError(f"analyzer must be 'word', 'char', 'char_wb' or a callable, got "
                             f"{self.analyzer!r}")
        for name in ("preprocessor", "tokenizer"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise TypeError(f"{name} must be None or a callable")
        if self.token_pattern is not None and not isinstance(self.token_pattern, str):
            raise TypeError(f"token_pattern must be a str or None, got {self.token_pattern!r}")
        if self.analyzer == "word" and self.tokenizer is None:
            if self.token_pattern is None:
                raise ValueError("token_pattern=None needs a tokenizer")
            if re.compile(self.token_pattern).groups > 1:
                raise ValueError("More than 1 capturing group in token pattern. Only a single group "
                                 "should be captured.")
        for name in ("lowercase", "binary"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        min_n, max_n = _check_ngram_range(self.ngram_range)
        stop = _check_stop_words(self.stop_words)
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            raise TypeError(f"dtype must be a numeric NumPy dtype, got {self.dtype!r}") from None
        if dtype.kind not in "biuf":
            raise TypeError(f"dtype must be a numeric NumPy dtype, got {dtype}")
        fast = (self.analyzer == "word" and self.tokenizer is None and self.preprocessor is None
                and self.strip_accents is None and self.token_pattern == DEFAULT_TOKEN_PATTERN)
        stop_table = None
        if fast and stop:
            # the tokeniser's copy of the stop words is cached with the set it was made from
            cached = self.__dict__.get("_stop_table")
            if cached is not None and cached[0] == stop:
                stop_table = cached[1]
            else:
                stop_table = _text.Vocabulary.from_terms(
                    [w.encode("utf-8", "surrogatepass") for w in stop if isinstance(w, str)])
                self._stop_table = (stop, stop_table)
        return _Settings(fast, min_n, max_n, stop, stop_table, effective_n_threads(self.n_threads),
                         dtype)

    # -- scikit-learn's analyzers, exactly (the path for everything the tokeniser does not do) --
    def decode(self, doc):
        """Return the document as str (read from a file for ``input`` 'filename' or 'file';
        bytes decoded with ``encoding`` and ``decode_error``)."""
        if self.input == "filename":
            with open(doc, "rb") as fh:
                doc = fh.read()
        elif self.input == "file":
            doc = doc.read()
        if isinstance(doc, bytes):
            doc = doc.decode(self.encoding, self.decode_error)
        if doc is np.nan:
            raise ValueError("np.nan is an invalid document, expected byte or unicode string.")
        return doc

    def build_preprocessor(self) -> Callable[[str], str]:
        """Return the function that lowercases and strips accents (or ``preprocessor``)."""
        if self.preprocessor is not None:
            return self.preprocessor
        if callable(self.strip_accents):
            strip = self.strip_accents
        else:
            strip = {None: None, "ascii": strip_accents_ascii,
                     "unicode": strip_accents_unicode}[self.strip_accents]
        lower = self.lowercase

        def preprocess(doc):
            if lower:
                doc = doc.lower()
            if strip is not None:
                doc = strip(doc)
            return doc
        return preprocess

    def build_tokenizer(self) -> Callable[[str], list]:
        """Return the function that splits a string into tokens (``tokenizer`` or the pattern)."""
        if self.tokenizer is not None:
            return self.tokenizer
        return re.compile(self.token_pattern).findall

    def _word_ngrams(self, tokens, stop_words=None):
        if stop_words is not None:
            tokens = [w for w in tokens if w not in stop_words]
        min_n, max_n = self.ngram_range
        if max_n != 1:
            original_tokens = tokens
            if min_n == 1:
                tokens = list(original_tokens)
                min_n += 1
            else:
                tokens = []
            n_original_tokens = len(original_tokens)
            for n in range(min_n, min(max_n + 1, n_original_tokens + 1)):
                for i in range(n_original_tokens - n + 1):
                    tokens.append(" ".join(original_tokens[i:i + n]))
        return tokens

    def _char_ngrams(self, text_document):
        text_document = _WHITE_SPACES.sub(" ", text_document)
        text_len = len(text_document)
        min_n, max_n = self.ngram_range
        if min_n == 1:
            ngrams = list(text_document)
            min_n += 1
        else:
            ngrams = []
        for n in range(min_n, min(max_n + 1, text_len + 1)):
            for i in range(text_len - n + 1):
                ngrams.append(text_document[i:i + n])
        return ngrams

    def _char_wb_ngrams(self, text_document):
        text_document = _WHITE_SPACES.sub(" ", text_document)
        min_n, max_n = self.ngram_range
        ngrams = []
        for w in text_document.split():
            w = " " + w + " "
            w_len = len(w)
            for n in range(min_n, max_n + 1):
                offset = 0
                ngrams.append(w[offset:offset + n])
                while offset + n < w_len:
                    offset += 1
                    ngrams.append(w[offset:offset + n])
                if offset == 0:  # count a short word (w_len < n) only once
                    break
        return ngrams

    def build_analyzer(self) -> Callable[[Any], list]:
        """Return the function from a raw document to its list of features, as scikit-learn's."""
        return self._analyzer(self._settings())

    def _analyzer(self, settings):
        decode = self.decode
        if callable(self.analyzer):
            analyzer = self.analyzer
            return lambda doc: analyzer(decode(doc))
        preprocess = self.build_preprocessor()
        if self.analyzer == "char":
            return lambda doc: self._char_ngrams(preprocess(decode(doc)))
        if self.analyzer == "char_wb":
            return lambda doc: self._char_wb_ngrams(preprocess(decode(doc)))
        tokenize, stop = self.build_tokenizer(), settings.stop
        return lambda doc: self._word_ngrams(tokenize(preprocess(decode(doc))), stop)

    # -- batches for the kernels -----------------------------------------------------------------
    def _document(self, doc, i):
        """One raw document as str, or a clear error naming it."""
        try:
            doc = self.decode(doc)
        except UnicodeDecodeError as exc:
            raise ValueError(f"document {i} cannot be decoded with encoding={self.encoding!r} "
                             f"(decode_error={self.decode_error!r}): {exc}") from None
        if not isinstance(doc, str):
            raise TypeError(f"document {i} is {type(doc).__name__}; documents must be str or bytes"
                            + (" (or files, with input='file')" if self.input == "content" else ""))
        return doc

    def _batches(self, raw_documents, settings, mode, vocab):
        """Run the kernel over ``raw_documents`` in batches: (n_docs, [(indptr, keys, counts)])."""
        if isinstance(raw_documents, (str, bytes)):
            raise ValueError("Iterable over raw text documents expected, string object received.")
        try:
            documents = iter(raw_documents)
        except TypeError:
            raise TypeError(f"raw_documents must be an iterable of str, got "
                            f"{type(raw_documents).__name__}") from None
        fast = settings.fast
        call = self._count_batch if fast else self._count_analyzed
        analyze = None if fast else self._analyzer(settings)
        parts, n_docs, batch, chars = [], 0, [], 0
        content = self.input == "content"
        lower = self.lowercase
        for i, doc in enumerate(documents):
            if not (content and type(doc) is str):
                doc = self._document(doc, i)
            if fast:
                if lower and not doc.isascii():
                    doc = doc.lower()  # exact Unicode lowercasing; ASCII is lowercased in the kernel
            else:
                doc = analyze(doc)
            batch.append(doc)
            chars += len(doc)
            if chars >= BATCH_CHARS or len(batch) >= BATCH_DOCS:
                parts.append(call(batch, settings, mode, vocab))
                n_docs, batch, chars = n_docs + len(batch), [], 0
                if mode == "grow" and len(vocab) > _text.MAX_TERMS:  # ids must stay below 2**31
                    raise ValueError(f"the vocabulary has more than {_text.MAX_TERMS} terms")
        if batch:
            parts.append(call(batch, settings, mode, vocab))
            n_docs += len(batch)
        return n_docs, parts

    def _count_batch(self, docs, settings, mode, vocab):
        return _text.count_documents(docs, self.lowercase, settings.stop_table, settings.min_n,
                                     settings.max_n, _text.MODES[mode], vocab, settings.n_columns,
                                     settings.signed, settings.dtype, settings.n_threads)

    def _count_analyzed(self, analyzed, settings, mode, vocab):
        # scikit-learn hashes the UTF-8 bytes of a str feature (a lone surrogate cannot be
        # hashed); counted features are only compared, so surrogates are passed through.
        errors = "strict" if mode == "hash" else "surrogatepass"
        encoded = []
        doc_ptr = np.zeros(len(analyzed) + 1, dtype=np.int64)
        for d, features in enumerate(analyzed):
            for f in features:
                if isinstance(f, str):
                    encoded.append(f.encode("utf-8", errors))
                elif isinstance(f, bytes) and mode == "hash":
                    encoded.append(f)
                else:
                    raise TypeError(f"the analyzer produced a feature of type {type(f).__name__}; "
                                    "features must be str")
            doc_ptr[d + 1] = len(encoded)
        token_ptr = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=token_ptr[1:])
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        return _text.count_tokens(blob, token_ptr, doc_ptr, _text.MODES[mode], vocab,
                                  settings.n_columns, settings.signed, settings.dtype,
                                  settings.n_threads)

    def __sklearn_is_fitted__(self):
        return True

    def __getstate__(self):
        state = super().__getstate__()
        for cache in ("_table", "_stop_table"):  # C tables, rebuilt when needed
            state.pop(cache, None)
        return state

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(),
                    input_tags=InputTags(string=True, two_d_array=False),
                    requires_fit=self._requires_fit)


class HashingVectorizer(_Vectorizer):
    """Documents to a matrix of hashed token counts; scikit-learn's ``HashingVectorizer``.

    Each feature (word or word n-gram) goes to column ``abs(h) % n_features`` where ``h`` is the
    signed 32-bit MurmurHash3 (seed 0) of its UTF-8 bytes, with sign ``h >= 0`` when
    ``alternate_sign``; counts in a column are summed. The result equals scikit-learn's for the
    same parameters: same columns, values, entry order and dtypes. It is stateless: ``fit`` only
    checks the parameters, and batches can be transformed independently (for ``partial_fit``).

    Parameters
    ----------
    input : {'content', 'filename', 'file'}, default='content'
        What the items of the iterable are: the text, file names to read, or open files.
    encoding : str, default='utf-8'
        Encoding used to decode bytes.
    decode_error : {'strict', 'ignore', 'replace'}, default='strict'
        What to do with bytes that cannot be decoded (strict: a ValueError naming the document).
    strip_accents : {'ascii', 'unicode'} or callable, default=None
        Accent removal after lowercasing (this runs the Python analyzer).
    lowercase : bool, default=True
        Lowercase with ``str.lower`` before tokenising.
    preprocessor : callable, default=None
        Replaces lowercasing and accent stripping (this runs the Python analyzer).
    tokenizer : callable, default=None
        Replaces the token pattern (this runs the Python analyzer).
    stop_words : {'english'}, list or None, default=None
        Tokens removed before n-grams are formed ('english' is scikit-learn's list).
    token_pattern : str, default=r"(?u)\\b\\w\\w+\\b"
        Regular expression of a token. The default runs in Cython; another pattern runs the
        Python analyzer with ``re``.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        Lengths of the word (or character) n-grams.
    analyzer : {'word', 'char', 'char_wb'} or callable, default='word'
        Features from words, characters, characters within words, or a function of the document.
    n_features : int, default=2**20
        Number of columns.
    binary : bool, default=False
        Set every non-zero count to 1 (before normalising).
    norm : {'l1', 'l2'} or None, default='l2'
        Normalise each row to unit norm. MultinomialNB needs ``norm=None`` or non-negative rows.
    alternate_sign : bool, default=True
        Give each feature the sign of its hash, so that collisions cancel in expectation.
        Count models need ``alternate_sign=False``.
    dtype : numpy dtype, default=np.float64
        Type of the values.
    n_threads : int, default=None
        Threads for tokenising; None uses all cores. Results do not depend on it.

    Examples
    --------
    >>> from fastgen.text import HashingVectorizer
    >>> X = HashingVectorizer(n_features=16, norm=None).transform(["the cat", "the the dog"])
    >>> X.shape
    (2, 16)
    >>> X.toarray()[1]  # "dog" hashes to column 5 and "the" (twice) to 14, both with sign -1
    array([ 0.,  0.,  0.,  0.,  0., -1.,  0.,  0.,  0.,  0.,  0.,  0.,  0.,  0., -2.,  0.])
    """

    _requires_fit = False

    def __init__(self, *, input: str = "content", encoding: str = "utf-8",
                 decode_error: str = "strict", strip_accents: Any = None, lowercase: bool = True,
                 preprocessor: Callable | None = None, tokenizer: Callable | None = None,
                 stop_words: Any = None, token_pattern: str | None = DEFAULT_TOKEN_PATTERN,
                 ngram_range: tuple = (1, 1), analyzer: Any = "word", n_features: int = 2 ** 20,
                 binary: bool = False, norm: str | None = "l2", alternate_sign: bool = True,
                 dtype: Any = np.float64, n_threads: int | None = None):
        self.input = input
        self.encoding = encoding
        self.decode_error = decode_error
        self.strip_accents = strip_accents
        self.lowercase = lowercase
        self.preprocessor = preprocessor
        self.tokenizer = tokenizer
        self.stop_words = stop_words
        self.token_pattern = token_pattern
        self.ngram_range = ngram_range
        self.analyzer = analyzer
        self.n_features = n_features
        self.binary = binary
        self.norm = norm
        self.alternate_sign = alternate_sign
        self.dtype = dtype
        self.n_threads = n_threads

    def _settings(self):
        settings = super()._settings()
        if (not isinstance(self.n_features, numbers.Integral) or isinstance(self.n_features, bool)
                or not 1 <= self.n_features <= _INT32_MAX):
            raise ValueError(f"n_features must be an int in [1, 2**31 - 1], got {self.n_features!r}")
        _check_choice("norm", self.norm, ("l1", "l2", None))
        if not isinstance(self.alternate_sign, (bool, np.bool_)):
            raise TypeError(f"alternate_sign must be a bool, got {self.alternate_sign!r}")
        return settings._replace(n_columns=int(self.n_features), signed=bool(self.alternate_sign))

    def fit(self, X: Iterable, y: Any = None) -> HashingVectorizer:
        """Check the parameters (the vectoriser is stateless).

        Parameters
        ----------
        X : iterable of str
            Ignored apart from being checked not to be a single string.
        y : None
            Ignored.

        Returns
        -------
        self : HashingVectorizer
        """
        if isinstance(X, (str, bytes)):
            raise ValueError("Iterable over raw text documents expected, string object received.")
        self._settings()
        return self

    def partial_fit(self, X: Iterable, y: Any = None) -> HashingVectorizer:
        """Check the parameters (the vectoriser is stateless); see ``fit``."""
        return self.fit(X, y)

    def transform(self, X: Iterable) -> sp.csr_matrix:
        """Hash documents into a CSR matrix of shape (n_documents, n_features).

        Parameters
        ----------
        X : iterable of str or bytes (or file names / files, see ``input``)
            The documents; any iterable, read in batches.

        Returns
        -------
        X : scipy.sparse.csr_matrix
        """
        settings = self._settings()
        n_docs, parts = self._batches(X, settings, "hash", None)
        out = _assemble(parts, n_docs, settings.n_columns, settings.dtype)
        if self.binary:
            out.data.fill(1)
        if self.norm is not None:
            if out.dtype not in (np.float32, np.float64):
                out = out.astype(np.float64)  # as scikit-learn's normalize does
            _text.csr_normalize_rows(out.data, out.indptr, self.norm == "l1", settings.n_threads)
        return out

    def fit_transform(self, X: Iterable, y: Any = None) -> sp.csr_matrix:
        """Hash documents; the same as ``transform``."""
        return self.fit(X, y).transform(X)


class CountVectorizer(_Vectorizer):
    """Documents to a matrix of token counts; scikit-learn's ``CountVectorizer``.

    ``fit`` learns ``vocabulary_`` (each term's column, in sorted term order) and the result
    equals scikit-learn's for the same parameters: same ``vocabulary_``, same columns, values,
    entry order and dtypes (``fit_transform`` keeps scikit-learn's row order, which is the order
    in which terms first appeared; ``transform`` sorts each row).

    Parameters
    ----------
    input, encoding, decode_error, strip_accents, lowercase, preprocessor, tokenizer, stop_words, \
token_pattern, ngram_range, analyzer, binary, n_threads
        As for ``HashingVectorizer``.
    max_df : float in [0, 1] or int, default=1.0
        Drop terms found in more than this fraction (float) or number (int) of documents.
    min_df : float in [0, 1] or int, default=1
        Drop terms found in fewer than this fraction or number of documents.
    max_features : int, default=None
        Keep only the terms with the highest counts (after ``max_df``/``min_df``).
    vocabulary : mapping or iterable of str, default=None
        A fixed vocabulary (term -> column, or terms in column order); ``fit`` then learns nothing.
    dtype : numpy dtype, default=np.int64
        Type of the counts.

    Attributes
    ----------
    vocabulary_ : dict
        Term -> column.
    fixed_vocabulary_ : bool
        True when ``vocabulary`` was given.

    Examples
    --------
    >>> from fastgen.text import CountVectorizer
    >>> cv = CountVectorizer()
    >>> cv.fit_transform(["The cat sat.", "The dog; the cat."]).toarray()
    array([[1, 0, 1, 1],
           [1, 1, 0, 2]])
    >>> cv.vocabulary_ == {"the": 3, "cat": 0, "sat": 2, "dog": 1}
    True
    """

    _requires_fit = True

    def __init__(self, *, input: str = "content", encoding: str = "utf-8",
                 decode_error: str = "strict", strip_accents: Any = None, lowercase: bool = True,
                 preprocessor: Callable | None = None, tokenizer: Callable | None = None,
                 stop_words: Any = None, token_pattern: str | None = DEFAULT_TOKEN_PATTERN,
                 ngram_range: tuple = (1, 1), analyzer: Any = "word", max_df: float = 1.0,
                 min_df: float = 1, max_features: int | None = None, vocabulary: Any = None,
                 binary: bool = False, dtype: Any = np.int64, n_threads: int | None = None):
        self.input = input
        self.encoding = encoding
        self.decode_error = decode_error
        self.strip_accents = strip_accents
        self.lowercase = lowercase
        self.preprocessor = preprocessor
        self.tokenizer = tokenizer
        self.stop_words = stop_words
        self.token_pattern = token_pattern
        self.ngram_range = ngram_range
        self.analyzer = analyzer
        self.max_df = max_df
        self.min_df = min_df
        self.max_features = max_features
        self.vocabulary = vocabulary
        self.binary = binary
        self.dtype = dtype
        self.n_threads = n_threads

    def _settings(self):
        settings = super()._settings()
        for name in ("max_df", "min_df"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{name} must be an int or a float, got {value!r}")
            if isinstance(value, numbers.Integral):
                if value < 0:
                    raise ValueError(f"{name} must be non-negative, got {value}")
            elif not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} as a float must be in [0.0, 1.0], got {value}")
        mf = self.max_features
        if mf is not None and (isinstance(mf, bool) or not isinstance(mf, numbers.Integral) or mf < 1):
            raise ValueError(f"max_features must be None or a positive int, got {mf!r}")
        return settings

    def __sklearn_is_fitted__(self):
        return hasattr(self, "vocabulary_")


    def _validate_vocabulary(self):
        """Set vocabulary_ and fixed_vocabulary_ from the ``vocabulary`` parameter."""
        vocabulary = self.vocabulary
        if vocabulary is None:
            self.fixed_vocabulary_ = False
            return
        if isinstance(vocabulary, (str, bytes)):
            raise TypeError("vocabulary must be a mapping or an iterable of terms, not a string")
        if isinstance(vocabulary, set):
            vocabulary = sorted(vocabulary)
        if not hasattr(vocabulary, "items"):
            vocab = {}
            for i, t in enumerate(vocabulary):
                if vocab.setdefault(t, i) != i:
                    raise ValueError(f"Duplicate term in vocabulary: {t!r}")
            vocabulary = vocab
        else:
            vocabulary = dict(vocabulary)
            indices = set(vocabulary.values())
            if len(indices) != len(vocabulary):
                raise ValueError("Vocabulary contains repeated indices.")
            for i in range(len(vocabulary)):
                if i not in indices:
                    raise ValueError(f"Vocabulary of size {len(vocabulary)} doesn't contain index {i}.")
        if not vocabulary:
            raise ValueError("empty vocabulary passed to fit")
        bad = next((t for t in vocabulary if not isinstance(t, str)), None)
        if bad is not None:
            raise TypeError(f"vocabulary terms must be str, got {type(bad).__name__} {bad!r}")
        self.fixed_vocabulary_ = True
        self.vocabulary_ = vocabulary
        self.__dict__.pop("_table", None)

    def _lookup_table(self):
        table = self.__dict__.get("_table")
        if table is None:
            terms = sorted(self.vocabulary_, key=self.vocabulary_.__getitem__)
            table = _text.Vocabulary.from_terms([t.encode("utf-8", "surrogatepass") for t in terms])
            self._table = table
        return table

    def fit(self, raw_documents: Iterable, y: Any = None) -> CountVectorizer:
        """Learn the vocabulary of the documents.

        Parameters
        ----------
        raw_documents : iterable of str or bytes (or file names / files, see ``input``)
            The documents; any iterable, read in batches.
        y : None
            Ignored.

        Returns
        -------
        self : CountVectorizer
        """
        self.fit_transform(raw_documents)
        return self

    def fit_transform(self, raw_documents: Iterable, y: Any = None) -> sp.csr_matrix:
        """Learn the vocabulary and return the document-term count matrix.

        Parameters
        ----------
        raw_documents : iterable of str or bytes (or file names / files, see ``input``)
            The documents; any iterable, read in batches.
        y : None
            Ignored.

        Returns
        -------
        X : scipy.sparse.csr_matrix of shape (n_documents, len(vocabulary_))
        """
        if isinstance(raw_documents, (str, bytes)):
            raise ValueError("Iterable over raw text documents expected, string object received.")
        settings = self._settings()
        self._validate_vocabulary()
        if self.fixed_vocabulary_:
            if self.lowercase and any(any(map(str.isupper, t)) for t in self.vocabulary_):
                warnings.warn("Upper case characters found in vocabulary while 'lowercase' is True. "
                              "These entries will not be matched with any documents", stacklevel=2)
            return self._transform(raw_documents, settings)
        vocab = _text.Vocabulary()
        n_docs, parts = self._batches(raw_documents, settings, "grow", vocab)
        if not len(vocab):
            raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
        X = _assemble(parts, n_docs, len(vocab), settings.dtype)  # columns: first appearance
        if self.binary:
            X.data.fill(1)
        high = self.max_df if isinstance(self.max_df, numbers.Integral) else self.max_df * n_docs
        low = self.min_df if isinstance(self.min_df, numbers.Integral) else self.min_df * n_docs
        if high < low:
            raise ValueError("max_df corresponds to < documents than min_df")
        alphabetical = vocab.sorted_ids()  # first-appearance ids in sorted term order
        rank = np.empty_like(alphabetical)
        rank[alphabetical] = np.arange(alphabetical.shape[0])
        # scikit-learn's order of operations, which decides ties and each row's entry order:
        # sort then limit with max_features, else limit then sort.
        if self.max_features is not None:
            X.indices = rank.astype(X.indices.dtype).take(X.indices)
            keep = self._keep(X, high, low, self.max_features)
            X = _select_columns(X, np.where(keep, np.cumsum(keep) - 1, -1))
            columns = alphabetical[keep]  # first-appearance id of each column
        else:
            keep = self._keep(X, high, low, None)
            kept_sorted = alphabetical[keep[alphabetical]]
            new_index = np.full(keep.shape[0], -1, dtype=np.int64)
            new_index[kept_sorted] = np.arange(kept_sorted.shape[0])
            X = _select_columns(X, new_index)
            columns = kept_sorted
        if not columns.shape[0]:
            raise ValueError("After pruning, no terms remain. Try a lower min_df or a higher max_df.")
        terms = vocab.terms()
        position = dict(zip(columns.tolist(), range(columns.shape[0])))
        self.vocabulary_ = {terms[i]: position[i] for i in np.sort(columns).tolist()}
        self._table = vocab.subset(columns)
        return X

    @staticmethod
    def _keep(X, high, low, limit):
        """scikit-learn's _limit_features mask: document frequency in [low, high], then the
        ``limit`` terms of highest total count."""
        dfs = np.bincount(X.indices, minlength=X.shape[1])
        mask = np.ones(len(dfs), dtype=bool)
        mask &= dfs <= high
        mask &= dfs >= low
        if limit is not None and mask.sum() > limit:
            tfs = np.asarray(X.sum(axis=0)).ravel()
            mask_inds = (-tfs[mask]).argsort()[:limit]
            new_mask = np.zeros(len(dfs), dtype=bool)
            new_mask[np.where(mask)[0][mask_inds]] = True
            mask = new_mask
        return mask

    def transform(self, raw_documents: Iterable) -> sp.csr_matrix:
        """Count the vocabulary's terms in documents (other terms are ignored).

        Parameters
        ----------
        raw_documents : iterable of str or bytes (or file names / files, see ``input``)
            The documents; any iterable, read in batches.

        Returns
        -------
        X : scipy.sparse.csr_matrix of shape (n_documents, len(vocabulary_))
        """
        if isinstance(raw_documents, (str, bytes)):
            raise ValueError("Iterable over raw text documents expected, string object received.")
        settings = self._settings()
        if not hasattr(self, "vocabulary_"):
            self._validate_vocabulary()
            if not self.fixed_vocabulary_:
                check_is_fitted(self)
        return self._transform(raw_documents, settings)

    def _transform(self, raw_documents, settings):
        n_docs, parts = self._batches(raw_documents, settings, "lookup", self._lookup_table())
        X = _assemble(parts, n_docs, len(self.vocabulary_), settings.dtype)
        if self.binary:
            X.data.fill(1)
        return X

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The terms in column order, as an object array of str.

        Parameters
        ----------
        input_features : None
            Ignored.

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        if not hasattr(self, "vocabulary_"):
            self._validate_vocabulary()
        check_is_fitted(self)
        return np.asarray(sorted(self.vocabulary_, key=self.vocabulary_.__getitem__), dtype=object)

    def inverse_transform(self, X: Any) -> list:
        """The terms with non-zero entries in each row of X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, len(vocabulary_))

        Returns
        -------
        terms : list of arrays of str objects
        """
        check_is_fitted(self)
        X = sp.csr_matrix(X)
        if X.shape[1] != len(self.vocabulary_):
            raise ValueError(f"X has {X.shape[1]} columns; the vocabulary has {len(self.vocabulary_)} terms")
        names = self.get_feature_names_out()
        X.eliminate_zeros()
        return [names[X.indices[X.indptr[i]:X.indptr[i + 1]]] for i in range(X.shape[0])]
