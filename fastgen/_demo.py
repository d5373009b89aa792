"""``python -m fastgen demo``: naive Bayes spam filtering on the bundled SMS Spam Collection.

Needs only NumPy and SciPy. When scikit-learn is importable, its naive Bayes models are fitted on
the same matrices and compared with fastgen's for speed and for equality of ``predict_log_proba``.
"""

import platform
import statistics
import sys
import time

import numpy as np

import fastgen
from fastgen.data import load_sms_spam
from fastgen.text import DEFAULT_TOKEN_PATTERN, CountVectorizer

MODELS = ("MultinomialNB", "BernoulliNB", "ComplementNB")
EXAMPLES = (
    "WINNER!! You have won a guaranteed £1000 cash prize. Call 09061701461 now to claim, T&Cs apply",
    "Hey, I won two free tickets for the concert tonight! Call me if you want to come",
    "Are we still meeting for lunch tomorrow? I'll call you when I leave work",
)
N_LATENCY_ROWS = 200


def stratified_split(y, test_fraction=0.2, seed=0):
    """Return sorted ``(train, test)`` indices holding out ``test_fraction`` of each class."""
    rng = np.random.default_rng(seed)
    test = []
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        test.append(members[: round(test_fraction * members.size)])
    test = np.sort(np.concatenate(test))
    train = np.setdiff1d(np.arange(y.shape[0]), test)
    return train, test


def _best_seconds(fn, repeats=5, min_seconds=0.02):
    """Best per-call time of ``fn()`` over ``repeats`` runs of enough calls to last ``min_seconds``."""
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    number = max(1, int(min_seconds / max(once, 1e-9)))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _median_latency_us(predict_proba, rows):
    """Median wall time in µs of ``predict_proba(row)`` over pre-sliced one-row matrices."""
    for row in rows[:20]:  # warm-up
        predict_proba(row)
    times = []
    for row in rows:
        start = time.perf_counter_ns()
        predict_proba(row)
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times) / 1e3


def evaluate(model, X_train, y_train, X_test, y_test, rows):
    """Fit ``model`` and return its quality and speed numbers as a dict."""
    fit_s = _best_seconds(lambda: model.fit(X_train, y_train), repeats=5, min_seconds=0.0)
    pred = model.predict(X_test)
    predict_s = _best_seconds(lambda: model.predict(X_test))
    latency_us = _median_latency_us(model.predict_proba, rows)
    is_spam, said_spam = y_test == "spam", pred == "spam"
    hits = int(np.sum(is_spam & said_spam))
    return {
        "model": model,
        "pred": pred,
        "accuracy": float(np.mean(pred == y_test)),
        "precision": hits / max(int(said_spam.sum()), 1),
        "recall": hits / max(int(is_spam.sum()), 1),
        "fit_ms": fit_s * 1e3,
        "docs_per_s": X_test.shape[0] / predict_s,
        "latency_us": latency_us,
        "log_proba": model.predict_log_proba(X_test),
    }


def _import_sklearn():
    try:
        import sklearn
        from sklearn import naive_bayes
    except ImportError:
        return None, None
    return sklearn.__version__, naive_bayes


def _row(model, library, r):
    return (f"{model:<14} {library:<9} {r['accuracy']:>8.4f} {r['precision']:>9.4f} "
            f"{r['recall']:>8.4f} {r['fit_ms']:>8.2f} {r['docs_per_s']:>14,.0f} "
            f"{r['latency_us']:>14.1f}")


def _prob(p):
    return f"{p:.1e}" if p < 1e-3 else f"{p:.4f}"


def run(seed=0, compare_sklearn=True, out=None):
    """Run the demo, writing a plain-text report to ``out`` (default: stdout). Returns 0."""
    out = sys.stdout if out is None else out

    def say(line=""):
        print(line, file=out)

    t_start = time.perf_counter()
    texts, labels = load_sms_spam()
    train, test = stratified_split(labels, seed=seed)
    vectorizer = CountVectorizer(dtype=np.float64)
    X_train = vectorizer.fit_transform([texts[i] for i in train])
    X_test = vectorizer.transform([texts[i] for i in test])
    vocabulary = vectorizer.vocabulary_
    y_train, y_test = labels[train], labels[test]
    words = np.array(sorted(vocabulary, key=vocabulary.get))
    rows = [X_test[i] for i in range(min(N_LATENCY_ROWS, X_test.shape[0]))]

    sk_version, sk_nb = _import_sklearn() if compare_sklearn else (None, None)

    say(f"fastgen {fastgen.__version__} demo: naive Bayes spam filtering "
        f"(Python {platform.python_version()}, NumPy {np.__version__})")
    say("Data: SMS Spam Collection v.1, T. A. Almeida & J. M. Gómez Hidalgo (UCI dataset 228);")
    say("      see fastgen/data/README.md for the citation and terms.")
    say(f"{len(texts):,} messages ({int((labels == 'ham').sum()):,} ham / "
        f"{int((labels == 'spam').sum()):,} spam); stratified 80/20 split, seed {seed}: "
        f"{train.size:,} train / {test.size:,} test.")
    say(f"Bag of words (fastgen.text.CountVectorizer: lowercase, tokens r\"{DEFAULT_TOKEN_PATTERN}\", "
        f"vocabulary from the training set): {len(vocabulary):,} words,")
    say(f"float64 CSR matrices with {X_train.nnz:,} (train) and {X_test.nnz:,} (test) non-zeros.")
    say()
    say("fit: best of 5. predict: documents/s on the test set, best of 5. "
        f"1-row: median predict_proba latency over {len(rows)} test rows.")
    if sk_nb is not None:
        say("speed-up: how many times faster fastgen is than scikit-learn (> 1 means faster).")
    say()
    header = (f"{'model':<14} {'library':<9} {'accuracy':>8} {'spam prec':>9} {'spam rec':>8} "
              f"{'fit ms':>8} {'predict docs/s':>14} {'1-row proba µs':>14}")
    say(header)
    say("-" * len(header))

    ours = {}
    parity = []
    for name in MODELS:
        r = evaluate(getattr(fastgen, name)(), X_train, y_train, X_test, y_test, rows)
        ours[name] = r
        say(_row(name, "fastgen", r))
        if sk_nb is not None:
            s = evaluate(getattr(sk_nb, name)(), X_train, y_train, X_test, y_test, rows)
            say(_row("", "sklearn", s))
            say(f"{'':<14} {'speed-up':<9} {'':>8} {'':>9} {'':>8} "
                f"{s['fit_ms'] / r['fit_ms']:>7.1f}x "
                f"{r['docs_per_s'] / s['docs_per_s']:>13.1f}x "
                f"{s['latency_us'] / r['latency_us']:>13.1f}x")
            diff = float(np.max(np.abs(r["log_proba"] - s["log_proba"])))
            same = bool(np.array_equal(r["pred"], s["pred"]))
            parity.append((name, diff, same))
    say()

    if sk_nb is None:
        if compare_sklearn:
            say("scikit-learn is not installed: skipping the comparison "
                "(pip install scikit-learn to see it).")
        else:
            say("scikit-learn comparison disabled (--no-sklearn).")
    else:
        say(f"Parity with scikit-learn {sk_version} (same matrices, default parameters):")
        for name, diff, same in parity:
            flag = "" if diff < 1e-8 and same else "   <-- MISMATCH"
            say(f"  {name:<14} max |predict_log_proba difference| = {diff:.1e}, "
                f"predictions identical: {'yes' if same else 'NO'}{flag}")
    say()

    mnb = ours["MultinomialNB"]["model"]
    spam, ham = list(mnb.classes_).index("spam"), list(mnb.classes_).index("ham")
    log_odds = mnb.feature_log_prob_[spam] - mnb.feature_log_prob_[ham]
    top = np.argsort(-log_odds, kind="stable")[:10]
    say("Most spam-indicative words (MultinomialNB, log P(word|spam) - log P(word|ham)):")
    for chunk in (top[:5], top[5:]):
        say("  " + ", ".join(f"{words[j]} ({log_odds[j]:.2f})" for j in chunk))
    say()

    X_ex = vectorizer.transform(EXAMPLES)
    say("P(spam | message) for a few new messages:")
    say(f"  {'Multinomial':>11} {'Bernoulli':>10} {'Complement':>10}  message")
    probs = [ours[name]["model"].predict_proba(X_ex)[:, spam] for name in MODELS]
    for k, message in enumerate(EXAMPLES):
        shown = message if len(message) <= 60 else message[:57] + "..."
        say(f"  {_prob(probs[0][k]):>11} {_prob(probs[1][k]):>10} {_prob(probs[2][k]):>10}  {shown}")
    say()
    say(f"Done in {time.perf_counter() - t_start:.1f} s.")
    return 0
