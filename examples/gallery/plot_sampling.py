"""
Sampling from a fitted model
============================

A generative classifier is a model of how the data arise: a class ``c`` is drawn from the prior
P(c), then the features from P(x | c). ``sample(n_samples)`` runs that model forwards and returns
new rows and their labels. Comparing the samples with the data is a quick check of what a model
has (and has not) captured. Here the data have strongly correlated features: naive Bayes assumes
the features independent given the class, and its samples show it.
"""

# %%
# Data with correlated features
# -----------------------------
# Two classes whose features are correlated in opposite directions, so that together they form
# an X.

import matplotlib.pyplot as plt
import numpy as np

import fastgen

rng = np.random.default_rng(0)
X = np.vstack([
    rng.multivariate_normal([0.0, 0.0], [[1.0, 0.92], [0.92, 1.0]], size=400),
    rng.multivariate_normal([0.5, 0.0], [[1.0, -0.85], [-0.85, 1.0]], size=250),
])
y = np.repeat(["A", "B"], [400, 250])

# %%
# Fit two models and draw from each
# ---------------------------------
# :class:`~fastgen.GaussianNB` keeps a mean and a variance per feature and class;
# :class:`~fastgen.QuadraticDiscriminantAnalysis` a mean and a full covariance per class. Both draw
# the classes from their priors (here 400 : 250), so the samples have the data's class balance
# too. ``random_state`` makes the draws repeatable.

models = {"GaussianNB": fastgen.GaussianNB().fit(X, y),
          "QDA": fastgen.QuadraticDiscriminantAnalysis().fit(X, y)}
samples = {name: model.sample(len(y), random_state=1) for name, model in models.items()}

fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), sharex=True, sharey=True,
                         layout="constrained")
panels = [("the data", X, y)] + [(f"{len(y)} samples from {name}", *samples[name])
                                 for name in models]
for ax, (title, X_panel, y_panel) in zip(axes, panels):
    for label, colour in (("A", "tab:blue"), ("B", "tab:orange")):
        rows = y_panel == label
        ax.scatter(*X_panel[rows].T, s=6, alpha=0.5, color=colour,
                   label=f"class {label} ({rows.sum()})")
        r = np.corrcoef(X_panel[rows].T)[0, 1]
        ax.text(0.03, 0.97 - 0.07 * (label == "B"), f"class {label}: correlation {r:+.2f}",
                transform=ax.transAxes, va="top", fontsize=9, color=colour,
                bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1))
    ax.set(title=title, xlabel="feature 1")
    ax.legend(loc="lower right", fontsize=8)
axes[0].set_ylabel("feature 2")
fig.suptitle("Samples drawn with model.sample(): naive Bayes loses the correlation, QDA keeps it")
plt.show()

# %%
# GaussianNB reproduces each feature's distribution within each class (its marginals are right)
# but not how the features vary together: its samples are axis-aligned blobs with correlation
# near 0. QDA's full covariances reproduce the X. The classifiers' decisions can still be good
# where the independence assumption is wrong (naive Bayes often classifies well with poorly
# calibrated probabilities), but sampling shows plainly what the model believes about the data.
#
# The same for text
# -----------------
# :class:`~fastgen.MultinomialNB` samples documents as bags of words: a length from the class's
# observed lengths, then that many words drawn independently from the class's word distribution
# (the multinomial event model of McCallum & Nigam, "A comparison of event models for naive
# Bayes text classification", AAAI-98 Workshop on Learning for Text Categorization, 1998).
# Trained on the SMS Spam Collection that ships with fastgen, its "spam" reads like spam, word
# salad though it is: word order and every dependence between words are outside the model. (A bag
# of words has no order; the words are printed in a random one.)

from fastgen.data import load_sms_spam
from fastgen.text import CountVectorizer

texts, labels = load_sms_spam()
vectorizer = CountVectorizer(min_df=2)
text_model = fastgen.MultinomialNB(alpha=0.1).fit(vectorizer.fit_transform(texts), labels)
vocabulary = vectorizer.get_feature_names_out()
documents, document_labels = text_model.sample(3, y=["spam", "spam", "ham"], random_state=0)
for row, label in zip(documents, document_labels):
    words = np.repeat(vocabulary[row.indices], row.data.astype(int))
    print(f"{label}: {' '.join(rng.permutation(words))}")
