"""
Decision regions of GaussianNB, LDA and QDA
===========================================

The three Gaussian generative classifiers differ only in the covariance they give each class
(Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*, 2nd ed., 2009, §4.3):

* :class:`~fastgen.GaussianNB`: a diagonal covariance per class (the features are independent
  given the class), so the boundaries are quadratic curves aligned with the axes;
* :class:`~fastgen.LinearDiscriminantAnalysis`: one full covariance shared by all classes, so the
  boundaries are straight lines;
* :class:`~fastgen.QuadraticDiscriminantAnalysis`: a full covariance per class, so the boundaries
  are general quadratic curves.

We fit all three to the same two-dimensional data set of three classes and draw, side by side,
the predicted class (colour), the posterior probability of that class (contours) and the data.
"""

# %%
# Data: three Gaussian classes with different shapes
# ---------------------------------------------------
# Class 0 is elongated and tilted, class 1 is round and wide, class 2 is small and tilted the
# other way. None of the three models is exactly right for every class, which is the usual case.

import matplotlib.pyplot as plt
import numpy as np

import fastgen

rng = np.random.default_rng(0)
means = np.array([[-1.5, 0.0], [2.0, 2.0], [1.5, -1.5]])
covariances = np.array([
    [[2.0, 1.5], [1.5, 1.6]],
    [[1.2, 0.0], [0.0, 1.2]],
    [[0.5, -0.35], [-0.35, 0.5]],
])
n_per_class = (200, 150, 150)
X = np.vstack([rng.multivariate_normal(m, c, size=n)
               for m, c, n in zip(means, covariances, n_per_class)])
y = np.repeat([0, 1, 2], n_per_class)

# every second row for training, the others to measure the accuracy
train, test = np.arange(len(y)) % 2 == 0, np.arange(len(y)) % 2 == 1

# %%
# Fit the three models and draw their decision regions
# ----------------------------------------------------
# ``predict_proba`` on a grid gives the posterior of every class; the predicted class is the most
# probable one. The lines are contours of that largest posterior: where it is near 1/3 the model
# cannot tell the classes apart, on the boundaries it drops to about 1/2.

models = {
    "GaussianNB": fastgen.GaussianNB(),
    "LinearDiscriminantAnalysis": fastgen.LinearDiscriminantAnalysis(),
    "QuadraticDiscriminantAnalysis": fastgen.QuadraticDiscriminantAnalysis(),
}

x0, x1 = np.meshgrid(np.linspace(-6, 6, 300), np.linspace(-5, 6, 300))
grid = np.column_stack([x0.ravel(), x1.ravel()])
colours = np.array(["tab:blue", "tab:orange", "tab:green"])
region_cmap = plt.matplotlib.colors.ListedColormap(["#c6dbef", "#fdd0a2", "#c7e9c0"])

fig, axes = plt.subplots(1, 3, figsize=(13, 4.6), sharex=True, sharey=True,
                         layout="constrained")
for ax, (name, model) in zip(axes, models.items()):
    model.fit(X[train], y[train])
    proba = model.predict_proba(grid)
    predicted = proba.argmax(axis=1).reshape(x0.shape)
    ax.contourf(x0, x1, predicted, levels=[-0.5, 0.5, 1.5, 2.5], cmap=region_cmap)
    lines = ax.contour(x0, x1, proba.max(axis=1).reshape(x0.shape),
                       levels=[0.5, 0.7, 0.9, 0.99], colors="k", linewidths=0.7, alpha=0.6)
    ax.clabel(lines, fmt="%.2f", fontsize=7)
    ax.scatter(X[test, 0], X[test, 1], c=colours[y[test]], s=10, edgecolor="k", linewidth=0.3)
    accuracy = model.score(X[test], y[test])
    ax.set_title(f"{name}\ntest accuracy {accuracy:.3f}", fontsize=10)
    ax.set_xlabel("feature 1")
axes[0].set_ylabel("feature 2")
handles = [plt.Line2D([], [], marker="o", linestyle="", markerfacecolor=c, markeredgecolor="k",
                      label=f"class {k}") for k, c in enumerate(colours)]
fig.legend(handles=handles, loc="outside right center", title="test points")
fig.suptitle("Predicted class (regions) and its posterior probability (contours)")
plt.show()

# %%
# LDA's boundaries are straight lines: its one covariance is a compromise between the tilted,
# elongated class 0, the round class 1 and the small class 2. GaussianNB's boundaries are curved but
# its class shapes are aligned with the axes, so it cannot follow the tilt of classes 0 and 2.
# QDA follows every class's shape; away from the data its quadratic boundaries extrapolate
# freely (the wide class 1 takes over the bottom of the picture, where no point lies). QDA
# estimates 5 numbers per class here, against 4 for GaussianNB, and LDA 2 per class plus 3 shared:
# with few rows per class the simpler models are often the better bet.
