"""The Examples sections of the public docstrings run and give what they show."""
import doctest

import pytest

import fastgen._persist
import fastgen.data
import fastgen.naive_bayes
import fastgen.semi_supervised
import fastgen.text


@pytest.mark.parametrize("module", [fastgen.naive_bayes, fastgen.discriminant_analysis,
                                    fastgen.data, fastgen.text, fastgen.semi_supervised,
                                    fastgen._persist],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, "no examples found"
    assert result.failed == 0
