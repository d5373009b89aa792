"""
Decisions under a loss matrix
=============================

``predict`` returns the most probable class: the right decision when every error costs the same.
When a missed case of disease (a false negative) costs more than a false alarm, the decision that
minimises the expected cost is different. Every fastgen classifier takes the costs as a loss
matrix, ``predict(X, loss=L)``, where ``L[c, k]`` is the cost of predicting class ``k`` when the
truth is ``c``; it predicts the class ``k`` of minimum conditional risk
``sum_c P(c | x) L[c, k]`` (Duda, Hart & Stork, *Pattern Classification*, 2nd ed., 2001, §2.2).

For two classes, "disease" and "healthy" (``classes_`` is sorted, so "disease" comes first),
correct decisions cost nothing, a false alarm costs 1 and a miss costs ``C``:
``L = [[0, C], [1, 0]]``. The rule is then: predict "disease" when
``P(disease | x) > 1 / (1 + C)``.
The posterior stays the same; only the threshold moves, and with it the decision boundary.
"""

# %%
# One feature
# -----------
# A screening test: a marker measured in 1,000 healthy people (90%) and diseased ones (10%), each
# class Gaussian. We fit :class:`~fastgen.GaussianNB` and look at where the decision switches
# for several costs ``C`` of a miss.

import matplotlib.pyplot as plt
import numpy as np

import fastgen

rng = np.random.default_rng(0)
n_healthy, n_disease = 900, 100
marker = np.concatenate([rng.normal(0.0, 1.0, n_healthy), rng.normal(2.0, 1.2, n_disease)])
status = np.array(["healthy"] * n_healthy + ["disease"] * n_disease)
model = fastgen.GaussianNB().fit(marker[:, None], status)
print("classes_:", model.classes_)  # the rows and columns of the loss matrix follow this order

disease = list(model.classes_).index("disease")
costs = [1, 5, 20, 100]
colours = plt.cm.viridis(np.linspace(0.0, 0.85, len(costs)))


def loss_matrix(miss_cost):
    """loss[true, predicted] in classes_ order: a miss costs miss_cost, a false alarm 1."""
    loss = np.ones((2, 2)) - np.eye(2)
    loss[disease, 1 - disease] = miss_cost
    return loss


t = np.linspace(-3.5, 6.0, 2000)
posterior = model.predict_proba(t[:, None])[:, disease]

fig, ax1 = plt.subplots(figsize=(8, 5.2), layout="constrained")
counts = ax1.twinx()  # the data, in people per bin, behind the posterior
counts.hist([marker[status == "healthy"], marker[status == "disease"]], bins=40,
            color=["tab:blue", "tab:red"], alpha=0.3, histtype="stepfilled",
            label=["healthy (data)", "disease (data)"])
counts.set_ylabel("people per bin")
ax1.set_zorder(counts.get_zorder() + 1)
ax1.patch.set_visible(False)
ax1.plot(t, posterior, color="k", linewidth=2, label="P(disease | x)")
for miss_cost, colour in zip(costs, colours):
    decided = model.predict(t[:, None], loss=loss_matrix(miss_cost))
    switches = t[1:][decided[1:] != decided[:-1]]
    assert len(switches) == 1  # on this range the rule is one threshold on x
    boundary = switches[0]
    ax1.axhline(1 / (1 + miss_cost), color=colour, linestyle=":", linewidth=1)
    ax1.axvline(boundary, color=colour, linewidth=1.5,
                label=f"C = {miss_cost}: disease if x > {boundary:.2f}")
    print(f"C = {miss_cost:>3}: threshold on P(disease | x) {1 / (1 + miss_cost):.3f}, "
          f"predict disease for x > {boundary:.2f}")
ax1.set(xlabel="marker x", ylabel="P(disease | x)", ylim=(0, 1.02),
        title="One marker (GaussianNB): the cost of a miss moves the boundary")
handles = ax1.get_legend_handles_labels()[0] + counts.get_legend_handles_labels()[0]
fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncols=3)
fig.suptitle("predict(X, loss=L) with L = [[0, C], [1, 0]] (classes_ = [disease, healthy])")
plt.show()

# %%
# The dotted lines are the thresholds ``1 / (1 + C)`` on the posterior; each vertical line is where
# ``predict(X, loss=L)`` switches to "disease". With ``C = 1`` (the 0-1 loss: the same as plain
# ``predict``) the boundary is where the posterior crosses 1/2, about where the two histograms
# meet: diseased people are rare, so the boundary lies far to the right and misses two thirds of
# them. Raising ``C`` moves it left: more people are flagged, fewer are missed.
#
# Two features
# ------------
# The same with two markers and :class:`~fastgen.QuadraticDiscriminantAnalysis`: the boundary is
# now a curve, and each cost gives a different one. Rows beyond a curve (to its upper right) are
# flagged as "disease"; the larger ``C``, the closer the curve comes to the healthy cloud.

means = {"healthy": [0.0, 0.0], "disease": [2.0, 1.5]}
covariances = {"healthy": [[1.0, 0.3], [0.3, 1.0]], "disease": [[1.6, 0.4], [0.4, 1.2]]}
X = np.vstack([rng.multivariate_normal(means[c], covariances[c], size=n)
               for c, n in (("healthy", n_healthy), ("disease", n_disease))])
y = np.array(["healthy"] * n_healthy + ["disease"] * n_disease)
qda = fastgen.QuadraticDiscriminantAnalysis().fit(X, y)

fig, ax2 = plt.subplots(figsize=(8, 6), layout="constrained")
g0, g1 = np.meshgrid(np.linspace(-3.5, 5.5, 300), np.linspace(-3.5, 4.5, 300))
grid = np.column_stack([g0.ravel(), g1.ravel()])
for label, colour, alpha in (("healthy", "tab:blue", 0.4), ("disease", "tab:red", 0.8)):
    ax2.scatter(*X[y == label].T, s=8, color=colour, alpha=alpha, label=label)
proba = qda.predict_proba(grid)
for miss_cost, colour in zip(costs, colours):
    loss = loss_matrix(miss_cost)
    flagged = qda.predict(grid, loss=loss) == "disease"
    # the boundary is where both decisions carry the same risk, sum_c P(c | x) loss[c, k]: a
    # smooth function to draw the contour of, whose sign is predict's decision
    risk = proba @ loss
    margin = risk[:, 1 - disease] - risk[:, disease]
    assert np.array_equal(flagged[abs(margin) > 1e-9], margin[abs(margin) > 1e-9] > 0)
    ax2.contour(g0, g1, margin.reshape(g0.shape), levels=[0], colors=[colour], linewidths=2)
    ax2.plot([], [], color=colour, linewidth=2, label=f"boundary, C = {miss_cost}")
ax2.set(xlabel="marker 1", ylabel="marker 2",
        title="Two markers (QDA): the decision boundary for each cost C of a miss")
fig.legend(fontsize=8, loc="outside lower center", ncols=3)
plt.show()

# %%
# What each rule costs
# --------------------
# On fresh data drawn from the same two classes, each rule trades false alarms for misses. The
# rule fitted for a cost ``C`` has the lowest average cost when misses really cost ``C``: that is
# what minimising the conditional risk means.

X_new = np.vstack([rng.multivariate_normal(means[c], covariances[c], size=10 * n)
                   for c, n in (("healthy", n_healthy), ("disease", n_disease))])
y_new = np.array(["healthy"] * (10 * n_healthy) + ["disease"] * (10 * n_disease))
print("average cost per person when a miss really costs C:")
print(f"{'rule':>9} {'misses':>7} {'false alarms':>13}"
      + "".join(f"{'C = ' + str(c):>9}" for c in costs))
for rule_cost in costs:
    predicted = qda.predict(X_new, loss=loss_matrix(rule_cost))
    misses = np.sum((y_new == "disease") & (predicted == "healthy"))
    false_alarms = np.sum((y_new == "healthy") & (predicted == "disease"))
    average = [(true_cost * misses + false_alarms) / len(y_new) for true_cost in costs]
    print(f"{'C = ' + str(rule_cost):>9} {misses:>7} {false_alarms:>13}"
          + "".join(f"{a:9.3f}" for a in average))
