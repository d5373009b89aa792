"""
Placeholder
===========

A tiny script that checks the gallery configuration builds.
"""
import matplotlib.pyplot as plt

import fastgen

model = fastgen.GaussianNB().fit([[0.0], [1.0], [3.0], [4.0]], [0, 0, 1, 1])
plt.plot([0, 1, 3, 4], model.predict_proba([[0.0], [1.0], [3.0], [4.0]])[:, 1], "o")
