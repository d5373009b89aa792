"""fastgen: fast, exact generative classifiers with a Cython core.

Each model learns P(x | y) and P(y) and decides by Bayes' rule. The public classes follow
scikit-learn's names, parameters and fitted attributes.
"""
from ._core._openmp import effective_n_threads, openmp_enabled
from ._information_gain import information_gain
from ._persist import load, load_metadata, save
from ._validation import ConvergenceWarning, DataConversionWarning, NotFittedError
from ._version import __version__
from .baseline import BaselineClassifier
from .discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from . import io, text  # streamed svmlight/CSV batches; raw documents to counts
from .mixed import MixedNB
from .semi_supervised import SemiSupervised
from .naive_bayes import (
    BernoulliNB,
    CategoricalNB,
    ComplementNB,
    GaussianNB,
    MultinomialNB,
    PoissonNB,
)

__all__ = [
    "BaselineClassifier",
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "ConvergenceWarning",
    "DataConversionWarning",
    "GaussianNB",
    "LinearDiscriminantAnalysis",
    "MixedNB",
    "MultinomialNB",
    "NotFittedError",
    "PoissonNB",
    "QuadraticDiscriminantAnalysis",
    "SemiSupervised",
    "__version__",
    "information_gain",
    "load",
    "load_metadata",
    "save",
    "show_config",
]


def show_config() -> None:
    """Print the versions fastgen runs with and whether its kernels use OpenMP."""
    import platform

    import numpy
    import scipy

    from ._core._openmp import max_threads

    print(f"fastgen: {__version__}")
    print(f"python: {platform.python_version()} ({platform.platform()})")
    print(f"numpy: {numpy.__version__}")
    print(f"scipy: {scipy.__version__}")
    from ._core import checks, jll

    print(f"OpenMP: {openmp_enabled()} (max threads: {max_threads()}, "
          f"effective default n_threads: {effective_n_threads(None)})")
    for name, module in (("scoring kernels", jll), ("input checks", checks)):
        print(f"{name}: {'AVX2/FMA' if module.__name__.endswith('_avx2') else 'baseline'}")
