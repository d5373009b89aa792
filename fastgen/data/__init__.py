"""Small datasets bundled with fastgen (see ``README.md`` in this folder for sources and terms)."""

from importlib import resources

import numpy as np

__all__ = ["load_horse_colic", "load_sms_spam"]


def load_sms_spam():
    """Load the SMS Spam Collection v.1 (Almeida & Gómez Hidalgo, UCI dataset 228).

    Returns
    -------
    texts : list of str of length 5574
        The raw messages, in file order.
    labels : ndarray of str of shape (5574,)
        ``"ham"`` (4,827 messages) or ``"spam"`` (747 messages).

    Notes
    -----
    The data is read from the package with :mod:`importlib.resources`, so it works from a
    wheel, an editable install or a zip import. Cite Almeida, Gómez Hidalgo and Yamakami,
    "Contributions to the study of SMS spam filtering: new collection and results",
    ACM DocEng 2011, when you use it.

    Examples
    --------
    >>> from fastgen.data import load_sms_spam
    >>> texts, labels = load_sms_spam()
    >>> len(texts), int((labels == "spam").sum())
    (5574, 747)
    """
    raw = resources.files(__name__).joinpath("SMSSpamCollection").read_bytes()
    # Split on "\n" only: str.splitlines() would also split on characters such as U+2028.
    lines = raw.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    labels, texts = [], []
    for number, line in enumerate(lines, start=1):
        label, sep, text = line.partition("\t")
        if not sep or label not in ("ham", "spam"):
            raise ValueError(f"SMSSpamCollection: malformed line {number}: {line[:60]!r}")
        labels.append(label)
        texts.append(text)
    return texts, np.array(labels)


# The 21 clinical attributes recorded before the outcome (horse-colic.names, attributes 1, 2 and
# 4-22); the hospital number (3), the targets (23, 24), the lesion codes (25-27, known only in
# retrospect) and cp_data (28, "of no significance") are left out.
HORSE_COLIC_FEATURES = (
    "surgery", "age", "rectal_temperature", "pulse", "respiratory_rate",
    "temperature_of_extremities", "peripheral_pulse", "mucous_membranes",
    "capillary_refill_time", "pain", "peristalsis", "abdominal_distension", "nasogastric_tube",
    "nasogastric_reflux", "nasogastric_reflux_ph", "rectal_examination_feces", "abdomen",
    "packed_cell_volume", "total_protein", "abdominocentesis_appearance",
    "abdominocentesis_total_protein",
)
_HORSE_COLIC_COLUMNS = (0, 1) + tuple(range(3, 22))  # 0-based columns of the features above
_HORSE_COLIC_TARGETS = {
    "outcome": (22, {"1": "lived", "2": "died", "3": "euthanized"}),
    "surgical_lesion": (23, {"1": "yes", "2": "no"}),
}
_HORSE_COLIC_FILES = {"train": ("horse-colic.data",), "test": ("horse-colic-test.data",),
                      "all": ("horse-colic.data", "horse-colic-test.data")}


def load_horse_colic(subset="all", target="outcome"):
    """Load the Horse Colic data (McLeish & Cecile, UCI dataset 47), with its missing values.

    368 horses with colic (300 in the UCI training file, 68 in its test file) and 21 clinical
    attributes, a quarter of whose values are missing (``?`` in the files, NaN here).

    Parameters
    ----------
    subset : {"all", "train", "test"}, default="all"
        The UCI training file (300 rows), its test file (68 rows) or both, in that order.
    target : {"outcome", "surgical_lesion"}, default="outcome"
        What ``y`` holds: what became of the horse (``"lived"``, ``"died"``, ``"euthanized"``) or
        whether its lesion was surgical (``"yes"``, ``"no"``).

    Returns
    -------
    X : ndarray of shape (n_samples, 21), dtype float64
        The attributes named in ``feature_names``, NaN where the value is missing. Seven are
        numbers (rectal temperature, pulse, respiratory rate, nasogastric reflux pH, packed cell
        volume, total protein, abdominocentesis total protein); the others are the codes of
        ``horse-colic.names`` (1, 2, ...; ``age`` is 1 for an adult and 9 for a young horse).
    y : ndarray of str of shape (n_samples,)
        The target. A row whose target is missing (one in each file for ``"outcome"``) is left
        out, so ``"all"`` has 366 rows for ``"outcome"`` and 368 for ``"surgical_lesion"``.
    feature_names : list of str of length 21
        The names of the columns of ``X``.

    Notes
    -----
    The hospital number, the lesion-type codes (known only after surgery or autopsy) and
    ``cp_data`` are not returned. Cite the UCI Machine Learning Repository (dataset 47,
    <https://archive.ics.uci.edu/dataset/47/horse+colic>) and its creators, Mary McLeish and
    Matt Cecile (University of Guelph, 1989), when you use it; ``README.md`` in this folder has
    the details.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen.data import load_horse_colic
    >>> X, y, names = load_horse_colic()
    >>> X.shape, sorted(set(y.tolist()))
    ((366, 21), ['died', 'euthanized', 'lived'])
    >>> round(float(np.isnan(X).mean()), 2)
    0.25
    """
    if not isinstance(subset, str) or subset not in _HORSE_COLIC_FILES:
        raise ValueError(f"subset must be one of {sorted(_HORSE_COLIC_FILES)}, got {subset!r}")
    if not isinstance(target, str) or target not in _HORSE_COLIC_TARGETS:
        raise ValueError(f"target must be one of {sorted(_HORSE_COLIC_TARGETS)}, got {target!r}")
    column, labels = _HORSE_COLIC_TARGETS[target]
    rows = []
    for name in _HORSE_COLIC_FILES[subset]:
        text = resources.files(__name__).joinpath(name).read_text(encoding="ascii")
        lines = text.split("\n")[1:]  # this copy has a header line, which the UCI file has not
        for number, line in enumerate(lines, start=2):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 28:
                raise ValueError(f"{name}: line {number} has {len(fields)} fields, not 28")
            rows.append(fields)
    rows = [r for r in rows if r[column] != "?"]
    X = np.array([[np.nan if r[j] == "?" else float(r[j]) for j in _HORSE_COLIC_COLUMNS]
                  for r in rows], dtype=np.float64)
    y = np.array([labels[r[column]] for r in rows])
    return X, y, list(HORSE_COLIC_FEATURES)
