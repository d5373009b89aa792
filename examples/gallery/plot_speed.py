"""
Speed against scikit-learn
==========================

fastgen computes the same models as scikit-learn where both have them (the parity tests compare
the posteriors to about 1e-9 or closer), so their speeds can be compared directly. This chart
shows measured ratios, scikit-learn's time divided by fastgen's: above 1 fastgen is faster.

Nothing is timed here. The figures were measured with fastgen's benchmark suite (``bench/``,
pytest-benchmark, both libraries in the same run on the same data, with the results checked to
agree after timing) and are copied from its records:

* the text models: the "Results" table of ``bench/README.md``, the run of 2026-11-23 on a 2-core
  Intel Xeon VM, scikit-learn 1.9.1, the fastest of many rounds, on the real 20 Newsgroups
  training and test sets (11,314 + 7,532 documents, 130,107 words), one thread;
* the Gaussian family: the table in fastgen's ``README.md`` measured with
  ``bench/bench_gaussian.py`` (2026-11-24, 200,000 x 50 dense rows, 5 classes, one thread, BLAS
  pinned to one thread for both libraries);
* the rest: ``bench/README.md``'s sections on LDA with a singular covariance (digits,
  2026-11-24), scoring DataFrames (UCI adult, 2026-11-25) and svmlight reading (2026-11-25), all
  medians on a shared 2-core host.

The host was shared and noisy; ``bench/README.md`` gives the ranges over repeated runs. Rerun the
suite on your machine with ``pytest bench --benchmark-only --benchmark-group-by=group``.
"""

# %%
# The measurements
# ----------------

import matplotlib.pyplot as plt
import numpy as np

# (model, operation, kind, scikit-learn time / fastgen time)
TEXT_20NEWSGROUPS = [  # bench/README.md, "Results", 2026-11-23, one thread, fastest round
    ("MultinomialNB", "fit", "fit", 7.77),
    ("MultinomialNB", "partial_fit, 5 chunks", "fit", 6.51),
    ("MultinomialNB", "predict_log_proba, test set", "batch", 2.63),
    ("MultinomialNB", "predict_proba, one document", "one row", 175.9),
    ("ComplementNB", "fit", "fit", 7.49),
    ("ComplementNB", "partial_fit, 5 chunks", "fit", 8.16),
    ("ComplementNB", "predict_log_proba, test set", "batch", 2.69),
    ("ComplementNB", "predict_proba, one document", "one row", 157.3),
    ("BernoulliNB", "fit", "fit", 7.97),
    ("BernoulliNB", "partial_fit, 5 chunks", "fit", 7.09),
    ("BernoulliNB", "predict_log_proba, test set", "batch", 5.68),
    ("BernoulliNB", "predict_proba, one document", "one row", 1095.6),
]
OTHER = [
    # README.md, Gaussian family (bench_gaussian.py), 200,000 x 50, one thread, fastest round
    ("GaussianNB", "fit, 200k x 50", "fit", 5.4),
    ("GaussianNB", "predict_proba, 200k x 50", "batch", 7.4),
    ("GaussianNB", "predict_proba, one row", "one row", 167 / 7),  # 167 µs against 7 µs
    ("LDA (sklearn lsqr)", "fit, 200k x 50", "fit", 2.4),
    ("LDA (sklearn lsqr)", "predict_proba, 200k x 50", "batch", 1.29),
    ("QDA", "fit, 200k x 50", "fit", 5.6),
    ("QDA", "predict_proba, 200k x 50", "batch", 3.1),
    # bench/README.md, singular covariance: digits, 1,797 x 64, sklearn's svd solver, medians
    ("LDA (sklearn svd)", "fit, digits", "fit", 1.71),
    ("LDA (sklearn svd)", "predict_proba, digits", "batch", 1.52),
    # bench/README.md, scoring DataFrames: UCI adult, medians
    # (scikit-learn: OrdinalEncoder + CategoricalNB, the same model)
    ("CategoricalNB", "predict_proba, 1-row DataFrame", "one row", 85.9),
    ("CategoricalNB", "predict_proba, 10k-row DataFrame", "batch", 6.88),
    # bench/README.md, svmlight reading: 20 Newsgroups train (14.8 MB), medians
    ("fastgen.io", "read svmlight file", "input", 13.2),
]

# %%
# The chart
# ---------
# One bar per measurement, on a logarithmic axis; the dashed line is 1x (the same speed).

kind_colours = {"fit": "tab:blue", "batch": "tab:green", "one row": "tab:orange",
                "input": "tab:purple"}
kind_labels = {"fit": "fit / partial_fit", "batch": "batch prediction",
               "one row": "one-row prediction (latency)", "input": "reading a file"}

fig, axes = plt.subplots(2, 1, figsize=(10, 10), sharex=True, layout="constrained",
                         gridspec_kw={"height_ratios": [len(TEXT_20NEWSGROUPS), len(OTHER)]})
panels = [
    (axes[0], TEXT_20NEWSGROUPS, "Text models on 20 Newsgroups, one thread\n"
                                 "(bench/README.md, 2026-11-23, 2-core Intel Xeon VM)"),
    (axes[1], OTHER, "Gaussian family, categories, file input, one thread\n"
                     "(README.md and bench/README.md, 2026-11-24/25, shared 2-core host)"),
]
for ax, rows, title in panels:
    positions = np.arange(len(rows))[::-1]
    ratios = np.array([r[3] for r in rows])
    ax.barh(positions, ratios, color=[kind_colours[r[2]] for r in rows], height=0.7)
    ax.set_yticks(positions, [f"{model}: {operation}" for model, operation, _, _ in rows],
                  fontsize=9)
    for y, ratio in zip(positions, ratios):
        ax.text(ratio * 1.08, y, f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:.3g}x",
                va="center", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(0.5, 5000)
    ax.axvline(1, color="k", linestyle="--", linewidth=1)
    ax.set_title(title, fontsize=10)
axes[1].set_xlabel("scikit-learn time / fastgen time (log scale; above 1: fastgen is faster)")
handles = [plt.Rectangle((0, 0), 1, 1, color=c, label=kind_labels[k])
           for k, c in kind_colours.items()]
fig.legend(handles=handles, loc="outside lower center", ncols=4)
fig.suptitle("fastgen against scikit-learn 1.9.1: measured speed ratios (no timing at build time)")
plt.show()

# %%
# The largest ratios are for one row at a time, where fastgen validates and scores an array row
# in 7 to 15 µs while scikit-learn's per-call overhead dominates; scikit-learn's BernoulliNB also
# rebuilds a dense table of ``log(1 - p)`` on every call. Batch prediction of text is 2.6 to 5.7
# times faster on one thread (about twice that on two cores, which scikit-learn's naive Bayes
# does not use), and fitting 6.5 to 8.2 times. LDA gains least, 1.3 to 2.4 times. The DataFrame
# rows compare CategoricalNB with scikit-learn's ``OrdinalEncoder`` + ``CategoricalNB`` pipeline,
# which computes the same model from the same frame.
