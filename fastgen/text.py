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

``fastgen.save`` writes a fitted vectoriser, alone or as the first step of a Pipeline before a
fastgen classifier, to a model file without pickle: its parameters and its vocabulary, checked
on load as ``fit`` checks them. A callable ``analyzer``, ``tokenizer``, ``preprocessor`` or
``strip_accents`` is code, which a model file does not hold: saving it is a TypeError.
"""
from __future__ import annotations

import codecs
import collections.abc
import numbers
import os
import re
import unicodedata
import warnings
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Callable, NamedTuple

import numpy as np
import scipy.sparse as sp

from ._base import BaseEstimator
from ._core import _text
from ._persist import _ESTIMATORS
from ._validation import (
    InvalidParameterError,
    check_is_fitted,
    check_n_threads,
    exact_int,
    int_in,
    plain_choice,
    real_in,
    short_repr,
    user_stacklevel,
)

__all__ = ["DEFAULT_TOKEN_PATTERN", "CountVectorizer", "HashingVectorizer"]

DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
# Documents are handed to the kernels in batches of about this many characters (or documents):
# large enough to keep every core busy, small enough that a stream's memory stays bounded.
BATCH_CHARS = 1 << 25
BATCH_DOCS = 1 << 16
_INT32_MAX = np.iinfo(np.int32).max
_WHITE_SPACES = re.compile(r"\s\s+")
# the count types the kernels write; any other dtype is counted as int64 and cast once
_KERNEL_DTYPES = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.int32))


def _own_str(value, what):
    """``value`` as an exact str the caller owns: the kernels read a str's buffer directly, so a
    str subclass (whose methods may say anything about it) is copied to a plain str, and anything
    else is a TypeError naming ``what`` returned it."""
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)  # the characters, as an exact str (a subclass's __str__ is not called)
    raise TypeError(f"{what} returned {type(value).__name__} {short_repr(value)}; expected str")


def _own_feature(value, mode):
    """A feature from a Python analyzer as exact bytes the caller owns (a str's UTF-8; bytes
    only when hashing), whatever methods a subclass overrides."""
    if isinstance(value, str):
        # scikit-learn hashes the UTF-8 bytes of a str feature (a lone surrogate cannot be
        # hashed); counted features are only compared, so surrogates are passed through.
        return str.encode(value, "utf-8", "strict" if mode == "hash" else "surrogatepass")
    if isinstance(value, bytes) and mode == "hash":
        return bytes.__getitem__(value, slice(None))  # exact bytes (a copy for a subclass)
    raise TypeError(f"the analyzer produced a feature of type {type(value).__name__}; "
                    "features must be str")


def _raise_for_status(status, settings=None):
    """The exception for a kernel's status (see ``_text.Counts``)."""
    if status == _text.OK:
        return
    if status == _text.NO_MEMORY:
        raise MemoryError("out of memory while tokenising and counting the documents; pass "
                          "fewer or shorter documents at a time, or a narrower ngram_range")
    if status == _text.TOO_MANY_NGRAMS:
        raise ValueError(f"a document has more than {_text.MAX_NGRAMS} n-grams"
                         + (f" for ngram_range=({settings.min_n}, {settings.max_n})"
                            if settings is not None else "") + "; narrow ngram_range")
    if status == _text.TOO_MANY_TERMS:
        raise ValueError(f"the vocabulary has more than {_text.MAX_TERMS} terms")
    raise RuntimeError(f"fastgen.text: internal error, the kernel reported status {status}")


def _check_fits(low, high, dtype):
    """Counts in [low, high] must be values of ``dtype`` (a wrapped or infinite count is a wrong
    answer): a ValueError naming the dtype otherwise."""
    if dtype.kind in "biu":
        info = np.iinfo(dtype) if dtype.kind != "b" else None
        lo, hi = (0, 1) if info is None else (int(info.min), int(info.max))
        bad = low if low < lo else (high if high > hi else None)
    else:
        biggest = float(np.finfo(dtype).max)
        bad = low if -low > biggest else (high if high > biggest else None)
    if bad is not None and dtype.kind != "b":
        raise ValueError(f"a count of {bad} cannot be represented in dtype={dtype}; choose a "
                         "wider dtype (or binary=True)")


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
    bounds = tuple.__getitem__(ngram_range, slice(None)) if isinstance(ngram_range, tuple) else ()
    bounds = tuple(exact_int(n) for n in bounds)
    if len(bounds) != 2 or None in bounds:
        raise InvalidParameterError(
            f"ngram_range must be a tuple (min_n, max_n) of two ints, got "
            f"{short_repr(ngram_range)}")
    min_n, max_n = bounds
    ngram_range = bounds
    if min_n < 1:
        raise InvalidParameterError(f"ngram_range={ngram_range}: n-gram lengths must be at least 1")
    if min_n > max_n:
        raise InvalidParameterError(
            f"Invalid value for ngram_range={ngram_range} lower boundary larger than "
            "the upper boundary.")
    if max_n > 1 << 16:
        raise InvalidParameterError(
            f"ngram_range={ngram_range}: n-grams longer than 65536 tokens are not supported")
    return int(min_n), int(max_n)


def _decode(doc, input, encoding, decode_error):
    """A document as str: read from a file for ``input`` 'filename' or 'file'; bytes decoded
    with ``encoding`` and ``decode_error`` (scikit-learn's decode, of given settings)."""
    if input == "filename":
        if not isinstance(doc, (str, bytes, os.PathLike)):
            # (open() takes an int as a file descriptor of this process, and closes it)
            raise TypeError("input='filename' takes documents that are paths (str, bytes or "
                            f"os.PathLike), got {type(doc).__name__}.")
        with open(doc, "rb") as fh:
            doc = fh.read()
    elif input == "file":
        if not callable(getattr(doc, "read", None)):
            raise TypeError("input='file' takes documents that are file objects (with a read "
                            f"method), got {type(doc).__name__}.")
        doc = doc.read()
    if isinstance(doc, bytes):
        doc = doc.decode(encoding, decode_error)
    if doc is np.nan:
        raise ValueError("np.nan is an invalid document, expected byte or unicode string.")
    return doc


def _check_choice(name, value, choices):
    """``value`` among ``choices`` (None, or an exact str: ``plain_choice``), else a ValueError."""
    if value is None and None in choices:
        return None
    plain = plain_choice(value, choices)
    if plain is None:
        raise InvalidParameterError(f"{name} must be one of {choices!r}, got {short_repr(value)}")
    return plain


def _check_stop_words(stop_words):
    """None, or the frozenset of stop words ("english" is scikit-learn's list, when installed)."""
    if stop_words is None:
        return None
    if isinstance(stop_words, str):
        if plain_choice(stop_words, ("english",)) is None:
            raise InvalidParameterError(f"not a built-in stop list: {short_repr(stop_words)}")
        try:
            from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
        except ImportError:
            raise InvalidParameterError(
                "stop_words='english' is scikit-learn's list and scikit-learn is not "
                "installed: pass the stop words as a list") from None
        return frozenset(ENGLISH_STOP_WORDS)
    if not isinstance(stop_words, collections.abc.Collection):
        # (an iterator would be used up by the first read: fit and transform would differ)
        raise InvalidParameterError(
            f"stop_words must be None, 'english' or a collection of str (a list, a "
            f"set), got {type(stop_words).__name__}")
    words = list(stop_words)
    if not all(isinstance(w, str) for w in words):  # (no token could equal one that is not)
        raise InvalidParameterError(
            "stop_words must be None, 'english' or a collection of str, got one "
            "holding a " + next(type(w).__name__ for w in words if not isinstance(w, str)))
    # a str subclass's __hash__/__eq__ must not decide which tokens are stop words
    return frozenset(str.__str__(w) for w in words)


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


def _gathered(counts, settings):
    """The (indptr, keys, counts) arrays of a kernel's ``Counts``: its status checked, the arrays
    allocated here and filled by its ``gather``, and the counts checked to fit the dtype."""
    _raise_for_status(counts.status, settings)
    dtype = settings.dtype if settings.dtype in _KERNEL_DTYPES else np.dtype(np.int64)
    indptr = np.empty(counts.n_docs + 1, dtype=np.int64)
    keys = np.empty(counts.nnz, dtype=np.int32)
    values = np.empty(counts.nnz, dtype=dtype)
    _raise_for_status(counts.gather(indptr, keys, values), settings)
    if not settings.binary:
        _check_fits(counts.low, counts.high, settings.dtype)
    return indptr, keys, values


class _Settings(NamedTuple):
    """The validated parameters, in the form the kernels take (made per call, never stored)."""

    fast: bool                                 # the Cython tokeniser applies (default analyzer)
    min_n: int
    max_n: int
    stop: frozenset | None                     # stop words, for the Python analyzer
    stop_table: _text.Vocabulary | None        # the same, for the tokeniser
    n_threads: int
    dtype: np.dtype
    binary: bool
    lowercase: bool
    input: str                                 # decode's (exact str): one value for a call,
    encoding: str                              # whatever set_params another thread calls
    decode_error: str
    n_columns: int = 0                         # hashing: n_features
    signed: bool = False                       # hashing: alternate_sign
    max_df: float = 1.0                        # counting: max_df, min_df (an int or a float)
    min_df: float = 1
    max_features: int | None = None            # counting: max_features


class _Vectorizer(BaseEstimator):
    """What the two vectorisers share: parameters, decoding, the analyzers and the batching."""

    # -- parameters ------------------------------------------------------------------------------
    def _settings(self) -> _Settings:
        """Check every parameter (a ValueError/TypeError naming it); the kernels' settings."""
        # (each parameter the settings hold is read once: another thread's set_params cannot
        # slip an unchecked value between the check and the settings)
        input_ = _check_choice("input", self.input, ("content", "filename", "file"))
        decode_error = _check_choice("decode_error", self.decode_error,
                                     ("strict", "ignore", "replace"))
        encoding = self.encoding
        if not isinstance(encoding, str):
            raise InvalidParameterError(f"encoding must be a str, got {short_repr(encoding)}")
        encoding = str.__str__(encoding)
        try:
            text_encoding = codecs.lookup(encoding)._is_text_encoding
        except (LookupError, ValueError, TypeError):  # ValueError: an embedded NUL
            text_encoding = None
        if not text_encoding:
            raise InvalidParameterError(
                f"encoding={short_repr(encoding)} is not a text encoding known to "
                "Python's codecs")
        if not (self.strip_accents is None or callable(self.strip_accents)
                or plain_choice(self.strip_accents, ("ascii", "unicode"))):
            raise InvalidParameterError(
                f"strip_accents must be None, 'ascii', 'unicode' or a callable, got "
                f"{short_repr(self.strip_accents)}")
        if not (callable(self.analyzer) or plain_choice(self.analyzer, ("word", "char", "char_wb"))):
            raise InvalidParameterError(
                f"analyzer must be 'word', 'char', 'char_wb' or a callable, got "
                f"{short_repr(self.analyzer)}")
        for name in ("preprocessor", "tokenizer"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise InvalidParameterError(f"{name} must be None or a callable")
        if self.token_pattern is not None and not isinstance(self.token_pattern, str):
            raise InvalidParameterError(
                f"token_pattern must be a str or None, got {short_repr(self.token_pattern)}")
        if self.analyzer == "word" and self.tokenizer is None:
            if self.token_pattern is None:
                raise InvalidParameterError("token_pattern=None needs a tokenizer")
            try:
                pattern = re.compile(self.token_pattern)
            except (re.error, RecursionError, OverflowError, MemoryError) as exc:
                raise InvalidParameterError(
                    f"token_pattern={short_repr(self.token_pattern)} is not a valid "
                    f"regular expression: {exc}") from None
            if pattern.groups > 1:
                raise InvalidParameterError(
                    "More than 1 capturing group in token pattern. Only a single group "
                    "should be captured.")
        lowercase, binary = self.lowercase, self.binary
        for name, value in (("lowercase", lowercase), ("binary", binary)):
            if not isinstance(value, (bool, np.bool_)):
                raise InvalidParameterError(f"{name} must be a bool, got {short_repr(value)}")
        min_n, max_n = _check_ngram_range(self.ngram_range)
        stop = _check_stop_words(self.stop_words)
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            raise InvalidParameterError(
                f"dtype must be a numeric NumPy dtype, got {self.dtype!r}") from None
        if dtype.kind not in "biuf":
            raise InvalidParameterError(f"dtype must be a numeric NumPy dtype, got {dtype}")
        if dtype == np.float16:  # as scikit-learn, whose sparse arrays refuse it
            raise InvalidParameterError(
                "dtype=float16 is not supported by scipy.sparse; use float32")
        fast = (self.analyzer == "word" and self.tokenizer is None and self.preprocessor is None
                and self.strip_accents is None and type(self.token_pattern) is str
                and self.token_pattern == DEFAULT_TOKEN_PATTERN)
        stop_table = None
        if fast and stop:
            # the tokeniser's copy of the stop words is cached with the set it was made from
            cached = self.__dict__.get("_stop_table")
            if cached is not None and cached[0] == stop:
                stop_table = cached[1]
            else:
                stop_table = _text.Vocabulary.from_terms(
                    [str.encode(w, "utf-8", "surrogatepass") for w in stop])
                self._stop_table = (stop, stop_table)
        return _Settings(fast, min_n, max_n, stop, stop_table, check_n_threads(self),
                         dtype, bool(binary), bool(lowercase), input_, encoding, decode_error)

    # -- scikit-learn's analyzers, exactly (the path for everything the tokeniser does not do) --
    def decode(self, doc):
        """Return the document as str (read from a file for ``input`` 'filename' or 'file';
        bytes decoded with ``encoding`` and ``decode_error``)."""
        return _decode(doc, self.input, self.encoding, self.decode_error)

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
                doc = _own_str(doc.lower(), f"{type(doc).__name__}.lower()")
            if strip is not None:
                doc = _own_str(strip(doc), "strip_accents")
            return doc
        return preprocess

    def build_tokenizer(self) -> Callable[[str], list]:
        """Return the function that splits a string into tokens (``tokenizer`` or the pattern)."""
        if self.tokenizer is not None:
            return self.tokenizer
        return re.compile(self.token_pattern).findall

    @staticmethod
    def _word_ngrams(tokens, stop_words, min_n, max_n):
        if stop_words is not None:
            tokens = [w for w in tokens if w not in stop_words]
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

    @staticmethod
    def _char_ngrams(text_document, min_n, max_n):
        text_document = _WHITE_SPACES.sub(" ", text_document)
        text_len = len(text_document)
        if min_n == 1:
            ngrams = list(text_document)
            min_n += 1
        else:
            ngrams = []
        for n in range(min_n, min(max_n + 1, text_len + 1)):
            for i in range(text_len - n + 1):
                ngrams.append(text_document[i:i + n])
        return ngrams

    @staticmethod
    def _char_wb_ngrams(text_document, min_n, max_n):
        text_document = _WHITE_SPACES.sub(" ", text_document)
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
        def decode(doc):
            return _decode(doc, settings.input, settings.encoding, settings.decode_error)
        if callable(self.analyzer):
            analyzer = self.analyzer
            return lambda doc: analyzer(decode(doc))
        preprocess = self.build_preprocessor()
        if self.preprocessor is not None:
            user_preprocess = preprocess

            def preprocess(doc):
                return _own_str(user_preprocess(doc), "preprocessor")
        n = settings.min_n, settings.max_n  # (ngram_range as the call checked it)
        if self.analyzer == "char":
            return lambda doc: self._char_ngrams(preprocess(decode(doc)), *n)
        if self.analyzer == "char_wb":
            return lambda doc: self._char_wb_ngrams(preprocess(decode(doc)), *n)
        tokenize, stop = self.build_tokenizer(), settings.stop
        return lambda doc: self._word_ngrams(tokenize(preprocess(decode(doc))), stop, *n)

    # -- batches for the kernels -----------------------------------------------------------------
    @staticmethod
    def _document(doc, i, settings):
        """One raw document as str, or a clear error naming it."""
        try:
            doc = _decode(doc, settings.input, settings.encoding, settings.decode_error)
        except UnicodeDecodeError as exc:
            raise ValueError(f"document {i} cannot be decoded with encoding={settings.encoding!r} "
                             f"(decode_error={settings.decode_error!r}): {exc}") from None
        if not isinstance(doc, str):
            raise TypeError(f"document {i} is {type(doc).__name__}; documents must be str or bytes"
                            + (" (or files, with input='file')" if settings.input == "content"
                               else ""))
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
        content, lower = settings.input == "content", settings.lowercase

        def flush():  # the batch so far, counted
            nonlocal n_docs, batch, chars
            parts.append(call(batch, settings, mode, vocab))
            n_docs, batch, chars = n_docs + len(batch), [], 0

        for i, doc in enumerate(documents):
            if not (content and type(doc) is str):
                doc = self._document(doc, i, settings)
            if fast:
                # the kernel reads exact str only (see _own_str); a subclass's own lower() is
                # called, as scikit-learn calls it, and only it: a result it left in upper case
                # is counted on its own, without the kernel's lowercasing
                if type(doc) is not str:
                    doc = (_own_str(doc.lower(), f"document {i}'s {type(doc).__name__}.lower()")
                           if lower else _own_str(doc, f"document {i}"))
                    if lower and doc != doc.lower():
                        if batch:  # (the rows stay in the documents' order)
                            flush()
                        parts.append(self._count_batch([doc], settings, mode, vocab,
                                                       lowercase=False))
                        n_docs += 1
                        continue
                elif lower and not doc.isascii():
                    doc = doc.lower()  # exact Unicode lowercasing; ASCII is lowercased in the kernel
            else:
                doc = analyze(doc)
                if type(doc) is not list:
                    try:
                        doc = list(doc)
                    except TypeError:
                        raise TypeError(f"the analyzer returned {type(doc).__name__} for document "
                                        f"{i}; expected an iterable of features") from None
            batch.append(doc)
            chars += len(doc)
            if chars >= BATCH_CHARS or len(batch) >= BATCH_DOCS:
                flush()
                if mode == "grow" and len(vocab) > _text.MAX_TERMS:  # ids must stay below 2**31
                    raise ValueError(f"the vocabulary has more than {_text.MAX_TERMS} terms")
        if batch:
            flush()
        return n_docs, parts

    def _count_batch(self, docs, settings, mode, vocab, lowercase=None):
        lowercase = settings.lowercase if lowercase is None else lowercase
        counts = _text.count_documents(docs, lowercase, settings.stop_table,
                                       settings.min_n, settings.max_n, _text.MODES[mode], vocab,
                                       settings.n_columns, settings.signed, settings.n_threads)
        return _gathered(counts, settings)

    def _count_analyzed(self, analyzed, settings, mode, vocab):
        encoded = []
        doc_ptr = np.zeros(len(analyzed) + 1, dtype=np.int64)
        for d, features in enumerate(analyzed):
            encoded.extend(_own_feature(f, mode) for f in features)
            doc_ptr[d + 1] = len(encoded)
        token_ptr = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=token_ptr[1:])
        encoded.append(bytes(16))  # the hash reads up to 16 bytes past a feature
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        counts = _text.count_tokens(blob, token_ptr, doc_ptr, _text.MODES[mode], vocab,
                                    settings.n_columns, settings.signed, settings.n_threads)
        return _gathered(counts, settings)

    def __sklearn_is_fitted__(self):
        return True

    # -- model files (fastgen.save / fastgen.load) -------------------------------------------
    def _file_record(self):
        """(parameters, fitted state): what a model file holds of this vectoriser (the fitted
        state is None here; CountVectorizer adds its vocabulary). Parameters only pickle could
        store are a TypeError naming them."""
        settings = self._settings()
        params = self.get_params()
        for name in ("analyzer", "preprocessor", "tokenizer", "strip_accents"):
            if callable(params[name]):
                raise TypeError(f"{name}={short_repr(params[name])} cannot be saved: a model file "
                                "holds no code (pickle the vectoriser instead)")
        if np.dtype(settings.dtype.name) != settings.dtype:
            raise TypeError(f"dtype={settings.dtype!r} cannot be saved: a model file holds a plain "
                            "NumPy dtype, named")
        params["dtype"] = settings.dtype.name
        if settings.stop is not None and not isinstance(self.stop_words, str):
            params["stop_words"] = sorted(settings.stop)
        return params, None

    def _needs_trust(self) -> list[str]:
        """The settings a model file may give only when it is trusted (``fastgen.load``): a
        token pattern the word analyzer runs other than the default (a regular expression can
        take time exponential in a document's length), and an ``input`` other than 'content'
        (``transform`` would read the files its documents name)."""
        found = []
        if self.analyzer == "word" and self.token_pattern != DEFAULT_TOKEN_PATTERN:
            found.append(f"token_pattern={short_repr(self.token_pattern)} (a regular expression "
                         "can take time exponential in a document's length)")
        if self.input != "content":
            found.append(f"input={self.input!r} (transform would read the files its documents "
                         "name)")
        return found

    @classmethod
    def _from_file(cls, params, fitted):
        """The vectoriser a model file describes, its parameters validated as ``fit`` validates
        them and its fitted state by ``_load_fitted`` (``fastgen.load``)."""
        if not isinstance(params, dict) or set(params) != set(cls._param_names()):
            raise ValueError(f"the parameters must be exactly {cls._param_names()}")
        name = params["dtype"]
        try:
            dtype = np.dtype(name) if isinstance(name, str) else None
        except (TypeError, ValueError):
            dtype = None
        if dtype is None or dtype.name != name:
            raise ValueError(f"dtype must name a NumPy dtype, got {short_repr(name)}")
        model = cls(**{**params, "dtype": dtype.type})
        model._settings()
        model._load_fitted(fitted)
        return model

    def __getstate__(self):
        state = super().__getstate__()
        for cache in ("_table", "_stop_table", "_lock"):  # C tables, rebuilt when needed; a lock
            state.pop(cache, None)
        fitted = state.pop("_vocabulary", None)
        if fitted is not None:  # the published vocabulary, as scikit-learn pickles it
            state["vocabulary_"] = dict(fitted.mapping)
        return state

    def __setstate__(self, state):
        state = dict(state)
        vocabulary = state.pop("vocabulary_", None)
        state.pop("_table", None)  # an earlier fastgen's cache: rebuilt from vocabulary_
        self.__dict__.update(state)
        if vocabulary is not None:
            self.vocabulary_ = vocabulary  # validated like any assignment

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(),
                    input_tags=InputTags(string=True, two_d_array=False),
                    requires_fit=self._requires_fit)


class HashingVectorizer(_Vectorizer):
    """Documents to a matrix of hashed token counts; scikit-learn's ``HashingVectorizer``.

    Each feature (word or word n-gram) goes to column ``abs(h) % n_features`` where ``h`` is the
    signed 32-bit MurmurHash3 (hash seed zero) of its UTF-8 bytes, with sign ``h >= 0`` when
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
        n_columns = int_in(self.n_features, 1, _INT32_MAX)
        if n_columns is None:
            raise InvalidParameterError(
                f"n_features must be an int in [1, 2**31 - 1], got {self.n_features!r}")
        _check_choice("norm", self.norm, ("l1", "l2", None))
        if not isinstance(self.alternate_sign, (bool, np.bool_)):
            raise InvalidParameterError(
                f"alternate_sign must be a bool, got {self.alternate_sign!r}")
        return settings._replace(n_columns=n_columns, signed=bool(self.alternate_sign))

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
        if settings.binary:
            out.data.fill(1)
        if self.norm is not None:
            if out.dtype not in (np.float32, np.float64):
                out = out.astype(np.float64)  # as scikit-learn's normalize does
            _text.csr_normalize_rows(out.data, out.indptr, self.norm == "l1", settings.n_threads)
        return out

    def fit_transform(self, X: Iterable, y: Any = None) -> sp.csr_matrix:
        """Hash documents; the same as ``transform``."""
        return self.fit(X, y).transform(X)

    @property
    def _n_features_out(self):
        return int(self.n_features)

    def _load_fitted(self, fitted):
        if fitted is not None:
            raise ValueError("a HashingVectorizer has no fitted state")


class _FittedVocabulary(NamedTuple):
    """A CountVectorizer's vocabulary as transform sees it: the term -> column mapping (a
    read-only view of a dict nobody else holds) and the kernels' table of the same terms (id =
    column). Built whole, then published by one assignment (``_publish_vocabulary``), so a
    transform running beside a fit or an assignment of ``vocabulary_`` reads the old state or
    the new one, never a mix (the idea of ``fastgen._state.Fitted``)."""

    mapping: Mapping
    table: _text.Vocabulary


def _fitted_vocabulary(vocabulary, what):
    """A validated ``_FittedVocabulary`` from a mapping term -> column: terms are str (copied
    to exact str, so a subclass's __hash__/__eq__ decide nothing), columns are distinct ints
    0..n-1, n >= 1. Any other mapping is a ValueError/TypeError naming ``what``."""
    if not isinstance(vocabulary, Mapping) and not (hasattr(vocabulary, "items")
                                                     and not isinstance(vocabulary, (str, bytes))):
        raise TypeError(f"{what} must be a mapping of terms to columns, got "
                        f"{type(vocabulary).__name__}")
    try:
        items = list(vocabulary.items())
    except Exception as exc:  # a hostile mapping
        raise TypeError(f"{what}: its items cannot be read ({type(exc).__name__}: {exc})") from None
    mapping = {}
    for term, column in items:
        if not isinstance(term, str):
            raise TypeError(f"{what}: terms must be str, got {type(term).__name__} "
                            f"{short_repr(term)}")
        index = exact_int(column)
        if index is None:
            raise TypeError(f"{what}: the column of {short_repr(term)} must be an int, got "
                            f"{short_repr(column)}")
        term = str.__str__(term)
        if term in mapping:
            raise ValueError(f"{what}: duplicate term {short_repr(term)}")
        mapping[term] = index
    if not mapping:
        raise ValueError(f"{what}: empty vocabulary passed to fit")
    if len(mapping) > _text.MAX_TERMS:
        raise ValueError(f"{what}: more than {_text.MAX_TERMS} terms")
    n = len(mapping)
    columns = set(mapping.values())
    if len(columns) != n:
        raise ValueError(f"{what}: Vocabulary contains repeated indices.")
    if min(columns) < 0 or max(columns) >= n:
        missing = next(i for i in range(n) if i not in columns)
        raise ValueError(f"{what}: Vocabulary of size {n} doesn't contain index {missing}.")
    terms = sorted(mapping, key=mapping.__getitem__)
    table = _text.Vocabulary.from_terms([str.encode(t, "utf-8", "surrogatepass") for t in terms])
    return _FittedVocabulary(MappingProxyType(mapping), table)


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
    vocabulary_ : mapping
        Term -> column, read-only (it is the vocabulary ``transform`` uses). Assigning a mapping
        of str to the ints 0..n-1 validates it and replaces the vocabulary whole.
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
        limits = {}  # (converted once: what is checked is what is used)
        for name in ("max_df", "min_df"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise InvalidParameterError(f"{name} must be an int or a float, got {value!r}")
            if isinstance(value, numbers.Integral):
                limits[name] = int_in(value, 0)
                if limits[name] is None:
                    raise InvalidParameterError(f"{name} must be non-negative, got {value}")
            else:
                limits[name] = real_in(value, 0.0, 1.0)
                if limits[name] is None:
                    raise InvalidParameterError(f"{name} as a float must be in [0.0, 1.0], "
                                                f"got {value}")
        mf = self.max_features
        limits["max_features"] = None if mf is None else int_in(mf, 1)
        if mf is not None and limits["max_features"] is None:
            raise InvalidParameterError(f"max_features must be None or a positive int, got {mf!r}")
        return settings._replace(**limits)

    def __sklearn_is_fitted__(self):
        return "_vocabulary" in self.__dict__


    # -- the fitted vocabulary: one immutable state, published by one assignment ---------------
    @property
    def vocabulary_(self):
        """Mapping term -> column (read-only; assign a new mapping to replace it whole)."""
        fitted = self.__dict__.get("_vocabulary")
        if fitted is None:
            raise AttributeError(f"{type(self).__name__} has no vocabulary_ before fit")
        return fitted.mapping

    @vocabulary_.setter
    def vocabulary_(self, vocabulary):
        self._publish_vocabulary(_fitted_vocabulary(vocabulary, "vocabulary_"))

    @vocabulary_.deleter
    def vocabulary_(self):
        with self._write_lock():
            if self.__dict__.pop("_vocabulary", None) is None:
                raise AttributeError("vocabulary_")

    def _publish_vocabulary(self, fitted):
        with self._write_lock():  # writers one at a time; readers take the state once
            self._vocabulary = fitted

    @property
    def _n_features_out(self):
        return len(self._fitted_state().mapping)

    def _file_record(self):
        params, _ = super()._file_record()
        mapping = dict(self._fitted_state().mapping)
        if self.vocabulary is None:
            return params, {"vocabulary_": mapping}
        params["vocabulary"] = mapping  # the given vocabulary as transform uses it, a plain dict
        return params, None

    def _load_fitted(self, fitted):
        if self.vocabulary is not None:
            if fitted is not None:
                raise ValueError("a CountVectorizer given its vocabulary has no learned one")
            self._validate_vocabulary()
        elif not isinstance(fitted, dict) or set(fitted) != {"vocabulary_"}:
            raise ValueError("the fitted state must be exactly vocabulary_")
        else:
            self.fixed_vocabulary_ = False
            self.vocabulary_ = fitted["vocabulary_"]  # validated as any assignment

    def _fitted_state(self):
        """The published vocabulary state (after fit, or from the ``vocabulary`` parameter)."""
        fitted = self.__dict__.get("_vocabulary")
        if fitted is None:
            self._validate_vocabulary()
            if not self.fixed_vocabulary_:
                check_is_fitted(self)
            fitted = self._vocabulary
        return fitted

    def _validate_vocabulary(self):
        """Set vocabulary_ and fixed_vocabulary_ from the ``vocabulary`` parameter."""
        vocabulary = self.vocabulary
        if vocabulary is None:
            self.fixed_vocabulary_ = False
            return
        if isinstance(vocabulary, (str, bytes)):
            raise InvalidParameterError(
                "vocabulary must be a mapping or an iterable of terms, not a string")
        if isinstance(vocabulary, set):
            vocabulary = sorted(vocabulary)
        if not hasattr(vocabulary, "items"):
            vocab = {}
            try:
                terms = list(vocabulary)
            except TypeError:
                raise InvalidParameterError(
                    f"vocabulary must be a mapping or an iterable of terms, got "
                    f"{type(vocabulary).__name__}") from None
            for i, t in enumerate(terms):
                if not isinstance(t, str):
                    raise InvalidParameterError(
                        f"vocabulary terms must be str, got {type(t).__name__} "
                        f"{short_repr(t)}")
                if vocab.setdefault(str.__str__(t), i) != i:
                    raise InvalidParameterError(f"Duplicate term in vocabulary: {short_repr(t)}")
            vocabulary = vocab
        try:
            fitted = _fitted_vocabulary(vocabulary, "vocabulary")
        except (TypeError, ValueError) as exc:  # (the parameter's fault: said as such)
            raise InvalidParameterError(str(exc)) from None
        self.fixed_vocabulary_ = True
        self._publish_vocabulary(fitted)

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
        X : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        """
        if isinstance(raw_documents, (str, bytes)):
            raise ValueError("Iterable over raw text documents expected, string object received.")
        settings = self._settings()
        self._validate_vocabulary()
        if self.fixed_vocabulary_:
            fitted = self._vocabulary
            if settings.lowercase and any(any(map(str.isupper, t)) for t in fitted.mapping):
                warnings.warn("Upper case characters found in vocabulary while 'lowercase' is True. "
                              "These entries will not be matched with any documents",
                              stacklevel=user_stacklevel())
            return self._transform(raw_documents, settings, fitted)
        vocab = _text.Vocabulary()
        n_docs, parts = self._batches(raw_documents, settings, "grow", vocab)
        if not len(vocab):
            raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
        X = _assemble(parts, n_docs, len(vocab), settings.dtype)  # columns: first appearance
        if settings.binary:
            X.data.fill(1)
        high = settings.max_df if isinstance(settings.max_df, int) else settings.max_df * n_docs
        low = settings.min_df if isinstance(settings.min_df, int) else settings.min_df * n_docs
        if high < low:
            raise InvalidParameterError("max_df corresponds to < documents than min_df")
        alphabetical = vocab.sorted_ids()  # first-appearance ids in sorted term order
        rank = np.empty_like(alphabetical)
        rank[alphabetical] = np.arange(alphabetical.shape[0])
        # scikit-learn's order of operations, which decides ties and each row's entry order:
        # sort then limit with max_features, else limit then sort.
        if settings.max_features is not None:
            X.indices = rank.astype(X.indices.dtype).take(X.indices)
            keep = self._keep(X, high, low, settings.max_features)
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
        mapping = {terms[i]: position[i] for i in np.sort(columns).tolist()}
        # built by the kernels from the documents: consistent by construction
        self._publish_vocabulary(_FittedVocabulary(MappingProxyType(mapping), vocab.subset(columns)))
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
        X : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        """
        if isinstance(raw_documents, (str, bytes)):
            raise ValueError("Iterable over raw text documents expected, string object received.")
        settings = self._settings()
        return self._transform(raw_documents, settings, self._fitted_state())

    def _transform(self, raw_documents, settings, fitted):
        # one state for the whole call: a concurrent fit or assignment publishes a new one
        n_docs, parts = self._batches(raw_documents, settings, "lookup", fitted.table)
        X = _assemble(parts, n_docs, len(fitted.mapping), settings.dtype)
        if settings.binary:
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
        mapping = self._fitted_state().mapping
        return np.asarray(sorted(mapping, key=mapping.__getitem__), dtype=object)

    def inverse_transform(self, X: Any) -> list:
        """The terms with non-zero entries in each row of X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)

        Returns
        -------
        terms : list of arrays of str objects
        """
        check_is_fitted(self)
        mapping = self._fitted_state().mapping
        X = sp.csr_matrix(X, copy=True)  # (its zeros are dropped below: the caller's stays)
        if X.shape[1] != len(mapping):
            raise ValueError(f"X has {X.shape[1]} columns; the vocabulary has {len(mapping)} terms")
        X.check_format(full_check=True)  # (its indices pick the terms)
        names = np.asarray(sorted(mapping, key=mapping.__getitem__), dtype=object)
        X.eliminate_zeros()
        return [names[X.indices[X.indptr[i]:X.indptr[i + 1]]] for i in range(X.shape[0])]


# the classes a model file may name
_ESTIMATORS.update(CountVectorizer=CountVectorizer, HashingVectorizer=HashingVectorizer)
