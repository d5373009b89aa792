"""Small datasets bundled with fastgen (see ``README.md`` in this folder for sources and terms)."""

from importlib import resources

import numpy as np

__all__ = ["load_sms_spam"]


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
