"""
Most informative words of a spam filter
=======================================

Multinomial naive Bayes scores a document by adding, for each word, its count times
``log P(word | class)`` (McCallum & Nigam, "A comparison of event models for naive Bayes text
classification", AAAI-98 Workshop on Learning for Text Categorization, 1998). For two classes
the decision depends on the difference of the two tables: every occurrence of a word moves the
log-odds of spam against ham by

.. math:: \\log \\frac{P(\\text{word} \\mid \\text{spam})}{P(\\text{word} \\mid \\text{ham})},

so the words with the largest ratios, either way, are the ones the model relies on. We train
:class:`~fastgen.MultinomialNB` on the SMS Spam Collection that ships with fastgen
(:func:`fastgen.data.load_sms_spam`: 5,574 messages, 747 of them spam), with fastgen's own
vectoriser, and plot them.
"""

# %%
# Vectorise the messages and fit the model
# ----------------------------------------
# :class:`fastgen.text.CountVectorizer` gives the same word counts as scikit-learn's. Words that
# occur in fewer than 5 messages are left out, so that the chart is not led by rare words whose
# ratio rests on a handful of counts. A held-out quarter of the messages measures the accuracy.

import matplotlib.pyplot as plt
import numpy as np

import fastgen
from fastgen.data import load_sms_spam
from fastgen.text import CountVectorizer

texts, labels = load_sms_spam()
test = np.random.default_rng(0).random(len(texts)) < 0.25
train_texts = [t for t, held_out in zip(texts, test) if not held_out]
test_texts = [t for t, held_out in zip(texts, test) if held_out]

vectorizer = CountVectorizer(min_df=5)
X_train = vectorizer.fit_transform(train_texts)
model = fastgen.MultinomialNB(alpha=1.0).fit(X_train, labels[~test])
accuracy = model.score(vectorizer.transform(test_texts), labels[test])
print(f"{X_train.shape[1]} words; held-out accuracy {accuracy:.3f} "
      f"(always 'ham': {np.mean(labels[test] == 'ham'):.3f})")

# %%
# The log-probability ratios
# --------------------------
# ``feature_log_prob_`` holds ``log P(word | class)``, one row per class in ``classes_`` order.

words = vectorizer.get_feature_names_out()
spam, ham = (list(model.classes_).index(c) for c in ("spam", "ham"))
log_ratio = model.feature_log_prob_[spam] - model.feature_log_prob_[ham]
# in how many training messages of each class a word occurs, to show next to its bar
occurs = (X_train > 0).astype(np.int64)
in_spam = np.asarray(occurs[labels[~test] == "spam"].sum(axis=0)).ravel()
in_ham = np.asarray(occurs[labels[~test] == "ham"].sum(axis=0)).ravel()

n_top = 15
order = np.argsort(log_ratio)
top = {"spam": order[::-1][:n_top], "ham": order[:n_top]}

fig, axes = plt.subplots(1, 2, figsize=(12, 5.6), layout="constrained")
for ax, (label, colour) in zip(axes, (("spam", "tab:red"), ("ham", "tab:blue"))):
    rows = top[label][::-1]  # the strongest word at the top
    ax.barh(np.arange(n_top), log_ratio[rows], color=colour)
    ax.set_yticks(np.arange(n_top), [f"{words[j]}  ({in_spam[j]} / {in_ham[j]})" for j in rows])
    ax.axvline(0, color="k", linewidth=0.8)
    ax.set_xlabel("log P(word | spam) - log P(word | ham)")
    ax.set_title(f"Words that point to {label}")
axes[1].invert_xaxis()  # ham's ratios are negative: reversed, its bars grow the same way
fig.suptitle("MultinomialNB on the SMS Spam Collection: the most informative words\n"
             "(in brackets: the number of training messages, spam / ham, that contain the word)")
plt.show()

# %%
# Spam is recognised by prizes, money and calls to action ("claim", "prize", "150p", "guaranteed"):
# each occurrence of such a word multiplies the odds of spam by ``exp`` of its bar, 75 to 300
# times. Ham is recognised by the words of chat between friends ("he", "she", "sorry", "lor",
# "later"), and by "gt" and "lt": 214 ham messages, and no spam, contain the placeholder
# ``&lt;#&gt;`` (an HTML-escaped ``<#>``, apparently where a number was removed), an artefact of
# the corpus that the model learns as readily as any real word. Ham's largest ratios are smaller
# than spam's although most of these words never occur in spam: spam has fewer words in all, so
# a word never seen in spam keeps a larger smoothed probability there (``alpha=1`` adds one count
# to every word of every class). Words
# common to both classes, such as "the" (-0.44) or "to" (+0.39), barely move the decision.
