"""Model files (issue 6): save/load round trips exactly, without pickle; damaged, foreign or
newer files and inconsistent contents are clear errors; pickle and joblib keep working."""
import hashlib
import json
import math
import os
import pickle
import re
import stat
import struct
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from _memory import cap_address_space
from fastgen._persist import FORMAT_VERSION, MAGIC

RNG = np.random.default_rng(0)
Y = np.array(["ham", "spam", "eggs"])[RNG.integers(0, 3, 240)]
DENSE = RNG.normal(size=(240, 4)) + (Y == "spam")[:, None]
COUNTS = sp.csr_matrix(RNG.poisson(1.5, size=(240, 7)).astype(np.float64))
CODES = RNG.integers(0, 4, size=(240, 3))

CASES = [
    (lambda: fastgen.MultinomialNB(alpha=0.5), COUNTS),
    (lambda: fastgen.ComplementNB(norm=True), COUNTS),
    (lambda: fastgen.BernoulliNB(alpha=np.linspace(0.5, 1.5, 7)), COUNTS),
    (lambda: fastgen.PoissonNB(), COUNTS.toarray()),
    (lambda: fastgen.GaussianNB(priors=[0.2, 0.3, 0.5]), DENSE),
    (lambda: fastgen.CategoricalNB(min_categories=6), CODES),
    (lambda: fastgen.LinearDiscriminantAnalysis(), DENSE),
    (lambda: fastgen.LinearDiscriminantAnalysis("spherical"), DENSE),
    (lambda: fastgen.LinearDiscriminantAnalysis(shrinkage="auto"), DENSE),
    (lambda: fastgen.QuadraticDiscriminantAnalysis(reg_param=0.1), DENSE),
    (lambda: fastgen.MixedNB(["gaussian", "gaussian", "poisson", "bernoulli"]), np.abs(DENSE)),
    (lambda: fastgen.BaselineClassifier(), DENSE),
]
IDS = [type(make()).__name__ + str(i) for i, (make, _) in enumerate(CASES)]
METHODS = ("predict_joint_log_proba", "predict_log_proba", "predict_proba", "predict")


def _fitted_attributes(model):
    """The public fitted attributes (read-only views of the model's snapshot), by name; n_iter_
    (EM iterations of the last batch) is not kept in model files."""
    names = [name for name in dir(model) if name.endswith("_") and not name.startswith("_")
             and name != "n_iter_" and hasattr(model, name)]
    assert {"classes_", "class_count_", "n_features_in_"} <= set(names)
    return {name: getattr(model, name) for name in names}


def _same(a, b, X):
    for method in METHODS:
        np.testing.assert_array_equal(getattr(a, method)(X), getattr(b, method)(X), err_msg=method)
    mine, theirs = _fitted_attributes(a), _fitted_attributes(b)
    assert mine.keys() == theirs.keys()
    for name, value in mine.items():
        if isinstance(value, dict):  # MixedNB's parts_ and categories_
            assert value.keys() == theirs[name].keys(), name
        elif isinstance(value, list) and value and isinstance(value[0], np.ndarray):
            for v, w in zip(value, theirs[name]):
                np.testing.assert_array_equal(v, w, err_msg=name)
        else:
            np.testing.assert_array_equal(value, theirs[name], err_msg=name)
    assert a.get_params().keys() == b.get_params().keys()


@pytest.mark.parametrize("make, X", CASES, ids=IDS)
def test_round_trip_is_exact(make, X, tmp_path):
    model = make().fit(X, Y)
    model.save(tmp_path / "model.fastgen")
    loaded = fastgen.load(tmp_path / "model.fastgen")
    assert type(loaded) is type(model)
    _same(model, loaded, X[:50])
    # the loaded model keeps learning like the original
    model.partial_fit(X[:30], Y[:30])
    loaded.partial_fit(X[:30], Y[:30])
    _same(model, loaded, X[:50])


@pytest.mark.parametrize("make, X", CASES, ids=IDS)
def test_pickle_still_works(make, X):
    model = make().fit(X, Y)
    _same(model, pickle.loads(pickle.dumps(model)), X[:50])
    joblib = pytest.importorskip("joblib")
    import io

    buffer = io.BytesIO()
    joblib.dump(model, buffer)
    buffer.seek(0)
    _same(model, joblib.load(buffer), X[:50])


def test_mixed_dataframe_round_trip(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": DENSE[:, 0], "colour": np.array(["red", None, "blue"])[CODES[:, 0] % 3],
                          "flag": CODES[:, 1] > 1})
    model = fastgen.MixedNB().fit(frame, Y)
    model.save(tmp_path / "m")
    loaded = fastgen.load(tmp_path / "m")
    np.testing.assert_array_equal(model.predict_proba(frame), loaded.predict_proba(frame))
    assert loaded.categories_.keys() == model.categories_.keys()


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "model.fastgen"
    fastgen.GaussianNB().fit(DENSE, Y).save(path)
    return path


def _rewrite(path, mutate_header=None, version=None, data=lambda data: data):
    """Re-write a model file with a changed header, version or array data and a valid
    checksum."""
    blob = path.read_bytes()[:-32]
    magic, file_version, length = struct.unpack_from("<8sIQ", blob)
    header = json.loads(blob[20:20 + length])
    if mutate_header:
        mutate_header(header)
    encoded = json.dumps(header).encode()
    body = struct.pack("<8sIQ", magic, version or file_version, len(encoded)) + encoded + \
        data(blob[20 + length:])
    path.write_bytes(body + hashlib.sha256(body).digest())


def test_truncated_file(saved):
    data = saved.read_bytes()
    for cut in (5, 30, len(data) // 2, len(data) - 1):
        saved.write_bytes(data[:cut])
        with pytest.raises(ValueError, match="truncated|not a fastgen"):
            fastgen.load(saved)


SPARSE = 8 << 30  # bytes


def _sparse_file(path, header_length, header=b""):
    """A file of ``SPARSE`` bytes that holds a model file's prefix (with this header length)
    and ``header``, then a hole: it reads as zeros and takes no disk."""
    with open(path, "wb") as f:
        f.write(struct.pack("<8sIQ", MAGIC, FORMAT_VERSION, header_length) + header)
        f.truncate(SPARSE)
    if getattr(os.stat(path), "st_blocks", 0) * 512 > 1 << 20:
        pytest.skip("the file system does not make sparse files")


def _peak(read, path):
    """The most memory Python held while ``read(path)`` raised ValueError (and the error); the
    address space capped meanwhile, so that a regression that reads a sparse file's gigabytes
    fails fast instead of taking the machine's memory."""
    restore = cap_address_space(8 * 2**30)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as caught:
            read(path)
        return tracemalloc.get_traced_memory()[1], str(caught.value)
    finally:
        tracemalloc.stop()
        restore()


@pytest.mark.parametrize("header_length, why", [
    (100, "malformed header"),  # a hole where the header should be
    (SPARSE - 100, "malformed header"),  # fits the file: read no further than the hole
    (SPARSE, "truncated"),
    (2**64 - 1, "truncated"),
], ids=["small", "huge", "past-the-end", "max"])
def test_sparse_file_is_refused_unread(tmp_path, header_length, why):
    """load read a model file whole, then copied it three times, before checking anything: a
    sparse file of 8 GiB with a valid prefix filled the memory. Lengths are now checked against
    the file's size and the header as it is read, so such a file is refused having read a
    chunk at most."""
    path = tmp_path / "sparse"
    _sparse_file(path, header_length)
    for read in (fastgen.load, fastgen.load_metadata):
        peak, message = _peak(read, path)
        assert why in message and peak < 8 << 20


@pytest.mark.parametrize("move, why", [(0, "bytes of array data"),
                                       (SPARSE, "arrays past the end|does not fit the data")])
def test_arrays_the_data_cannot_hold_are_refused_unread(saved, tmp_path, move, why):
    """A valid header followed by gigabytes (a hole) that its arrays do not account for, or
    arrays that end past the file (the last one grown by ``move`` bytes): refused before the
    data is read."""
    blob = saved.read_bytes()
    length = struct.unpack_from("<8sIQ", blob)[2]
    header = json.loads(blob[20:20 + length])
    last = header["arrays"][-1]
    more = move // np.dtype(last["dtype"]).itemsize
    last.update(shape=[math.prod(last["shape"]) + more],
                nbytes=last["nbytes"] + more * np.dtype(last["dtype"]).itemsize)
    encoded = json.dumps(header).encode()
    path = tmp_path / "sparse"
    _sparse_file(path, len(encoded), encoded)
    peak, message = _peak(fastgen.load, path)
    assert re.search(why, message) and peak < 8 << 20


@pytest.mark.parametrize("move", [1, -1])
def test_the_arrays_fill_the_data_exactly(saved, move):
    """The writer lays the arrays end to end from offset 0 (every model of CASES loads, in
    test_round_trip_is_exact): the data ends where the last array ends, to the byte, and each
    array begins where the one before it ends."""
    blob = saved.read_bytes()
    n = len(blob) - 20 - struct.unpack_from("<8sIQ", blob)[2] - 32  # bytes of array data
    path = saved.with_name("data")
    path.write_bytes(blob)
    _rewrite(path, data=lambda data: data + b"\0" if move > 0 else data[:-1])
    why = f"its arrays fill {n} of the {n + 1} bytes of array data" if move > 0 else \
        r"truncated \(arrays past the end\)"
    with pytest.raises(ValueError, match=why):
        fastgen.load(path)

    def shift(header):  # (a gap before the last array, or an overlap)
        header["arrays"][-1]["offset"] += move

    _rewrite(saved, mutate_header=shift)
    with pytest.raises(ValueError, match="an array entry does not fit the data"):
        fastgen.load(saved)


def test_array_entries_are_checked_before_the_data_is_read(saved, tmp_path):
    """An entry that nothing refers to, or that two nodes refer to (each reference decodes to a
    copy: an outside attack made 1,000 copies of one array), a dtype that is not a string
    (``null`` is float64 to NumPy: int64 classes came back as 5e-324), or a size its shape does
    not hold, is refused before the array data is read: a forged entry of 3 GiB that nothing
    used was read (and hashed) first, 13 s and 3 GiB for a file of 4 KiB on disk."""
    blob = saved.read_bytes()
    length = struct.unpack_from("<8sIQ", blob)[2]
    header = json.loads(blob[20:20 + length])
    end = sum(entry["nbytes"] for entry in header["arrays"])
    header["arrays"].append({"dtype": "|u1", "shape": [SPARSE], "offset": end,
                             "nbytes": SPARSE})
    encoded = json.dumps(header).encode()
    path = tmp_path / "unused"
    _sparse_file(path, len(encoded), encoded)
    for read in (fastgen.load, fastgen.load_metadata):
        peak, message = _peak(read, path)
        assert "an array entry is not referenced exactly once" in message and peak < 8 << 20
    twice = tmp_path / "twice"  # (each reference decodes to a copy of its own)
    twice.write_bytes(blob)
    _rewrite(twice, mutate_header=lambda h: h["params"]["dict"].append(["copy", {"array": 0}]))
    with pytest.raises(ValueError, match="an array entry is not referenced exactly once"):
        fastgen.load(twice)
    for forge in (lambda h: h["arrays"][0].update(dtype=None),
                  lambda h: h["arrays"][0].update(nbytes=h["arrays"][0]["nbytes"] + 8),
                  lambda h: h["arrays"][0].update(extra=1)):
        forged = tmp_path / "forged"
        forged.write_bytes(blob)
        _rewrite(forged, mutate_header=forge)
        with pytest.raises(ValueError, match="an array entry (is malformed|does not fit)"):
            fastgen.load(forged)


@pytest.mark.parametrize("cut", [40, 32, 1])
def test_a_file_that_shrinks_while_read_is_truncated(saved, monkeypatch, cut):
    """The lengths are checked against the size the file had when opened; if it is shorter
    when read (cut in the data, or in the digest), that is a truncated file, not a short
    buffer read as data."""
    full = saved.stat().st_size
    saved.write_bytes(saved.read_bytes()[:-cut])
    fstat = os.fstat

    def as_it_was(fd):
        status = list(fstat(fd))
        status[stat.ST_SIZE] = full
        return os.stat_result(status)

    with monkeypatch.context() as patched:
        patched.setattr(os, "fstat", as_it_was)
        with pytest.raises(ValueError, match="truncated .it shrank while read"):
            fastgen.load(saved)


def test_corrupted_byte(saved):
    data = bytearray(saved.read_bytes())
    data[len(data) // 2] ^= 0x40
    saved.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupted"):
        fastgen.load(saved)


def test_foreign_files(tmp_path):
    for content in (b"", b"\x80\x04K\x01.", b"PK\x03\x04" + bytes(100), MAGIC[:-1] + bytes(60)):
        path = tmp_path / "foreign"
        path.write_bytes(content)
        with pytest.raises(ValueError, match="not a (valid )?fastgen model file"):
            fastgen.load(path)
    pickled = tmp_path / "pickled"
    pickled.write_bytes(pickle.dumps(fastgen.GaussianNB().fit(DENSE, Y)))
    with pytest.raises(ValueError, match="not a fastgen model file"):
        fastgen.load(pickled)


def test_newer_format_version(saved):
    _rewrite(saved, version=FORMAT_VERSION + 1)
    with pytest.raises(ValueError, match="newer fastgen"):
        fastgen.load(saved)


def test_header_numbers_and_dtypes_python_cannot_take(saved):
    """An integer of more digits than Python converts, and a dtype of zero itemsize, are the
    file's fault, said as such (Python's and NumPy's own messages escaped)."""
    _rewrite(saved, mutate_header=lambda h: h["arrays"][0].update({"dtype": "<U0",
                                                                    "shape": [3, 3],
                                                                    "nbytes": 0}))
    with pytest.raises(ValueError, match="not a valid fastgen model file"):
        fastgen.load(saved)
    blob = saved.read_bytes()[:-32]
    length = struct.unpack_from("<8sIQ", blob)[2]
    header = blob[20:20 + length].replace(b'"class"', b'"big": ' + b"9" * 5000 + b', "class"', 1)
    body = struct.pack("<8sIQ", MAGIC, FORMAT_VERSION, len(header)) + header + blob[20 + length:]
    saved.write_bytes(body + hashlib.sha256(body).digest())
    for read in (fastgen.load, fastgen.load_metadata):
        with pytest.raises(ValueError, match="malformed header"):
            read(saved)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_only_a_regular_file_is_read_or_replaced(saved, tmp_path):
    """load reads only a regular file (a FIFO blocked it, /dev/zero filled the memory); save
    writes through a symbolic link and never replaces a FIFO or a device."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero", tmp_path):
        for read in (fastgen.load, fastgen.load_metadata):
            with pytest.raises(ValueError, match="not a regular file"):
                read(path)
    model = fastgen.GaussianNB().fit(DENSE[:100], Y[:100])
    with pytest.raises(FileExistsError, match="not a regular file") as caught:
        model.save(fifo)
    assert caught.value.filename == str(fifo) and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    link = tmp_path / "current.fastgen"
    link.symlink_to(saved)
    model.save(link)
    assert link.is_symlink() and link.resolve() == saved.resolve()
    np.testing.assert_array_equal(fastgen.load(link).theta_, model.theta_)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["current.fastgen", "model.fastgen",
                                                            "pipe"]


@pytest.mark.parametrize("mutate, match", [
    (lambda h: h.update({"class": "os.system"}), "unknown estimator"),
    (lambda h: h["arrays"][0].update({"shape": [10**6]}), "does not fit"),
    (lambda h: h["arrays"][0].update({"dtype": "|O"}), "does not fit|not a valid"),
    (lambda h: h["fitted"]["dict"].append([{"tuple": []}, 1]), "not a scalar"),
    (lambda h: h["fitted"]["dict"].append(["more", 1]), "must have the entries"),
    (lambda h: h["params"]["dict"].append(["shell", "rm -rf /"]), "hyperparameters must be"),
    (lambda h: h.pop("fitted"), "malformed header"),
    (lambda h: h.pop("fastgen"), "malformed header"),
    # json writes these as the non-standard tokens Infinity and NaN
    (lambda h: h["params"]["dict"].__setitem__(
        [k for k, _ in h["params"]["dict"]].index("var_smoothing"),
        ["var_smoothing", float("inf")]), "var_smoothing"),
    (lambda h: h["fitted"]["dict"].__setitem__(1, ["n_features", float("nan")]),
     "not a valid fastgen model file"),
    (lambda h: h["arrays"][0].update({"shape": [float("inf")]}), "does not fit"),
    (lambda h: h["fitted"]["dict"].append(
        ["deep", [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]),
     "nested too deeply"),
])
def test_hand_edited_headers(saved, mutate, match):
    _rewrite(saved, mutate_header=mutate)
    with pytest.raises(ValueError, match=match):
        fastgen.load(saved)


def test_inconsistent_statistics_are_refused(tmp_path):
    """A file whose checksum is valid but whose statistics do not match their declaration (the
    classes and features, each other) never reaches the kernels: a ValueError naming the field."""
    model = fastgen.GaussianNB().fit(DENSE, Y)
    model._fitted.stats["m2"] = model._fitted.stats["m2"][:, :2]  # wrong number of features
    model.save(tmp_path / "bad")
    with pytest.raises(ValueError, match="GaussianNB: .*'m2' has shape"):
        fastgen.load(tmp_path / "bad")
    model = fastgen.CategoricalNB().fit(CODES, Y)
    model._fitted.stats["n_categories_"] = model._fitted.stats["n_categories_"] + 1
    model.save(tmp_path / "bad2")
    with pytest.raises(ValueError, match="CategoricalNB: .*'category_count' has shape"):
        fastgen.load(tmp_path / "bad2")
    # document lengths that leave a class without documents: sample could not draw its
    # lengths (the file loaded, and sample failed later)
    counts = sp.csr_matrix(np.abs(DENSE).round())
    model = fastgen.MultinomialNB().fit(counts, Y)
    model._fitted.stats.update(length_class=np.array([0]), length=np.array([3]),
                               length_weight=np.array([1e-300]))
    model.save(tmp_path / "bad3")
    with pytest.raises(ValueError, match="MultinomialNB: .*class 1 has documents .* but no "
                                         "document lengths"):
        fastgen.load(tmp_path / "bad3")
    # class weights and their documents' weights summed in other orders differ by rounding,
    # as much as 1e-9 for 10**7 documents beside one of 2**53: such a file loads
    model = fastgen.MultinomialNB().fit(counts, Y)
    model._fitted.stats["class_count_"] = model._fitted.stats["class_count_"] * (1 + 1e-7)
    model.save(tmp_path / "rounded")
    np.testing.assert_array_equal(fastgen.load(tmp_path / "rounded").class_count_,
                                  model.class_count_)


def test_old_format_is_a_clear_error(saved):
    _rewrite(saved, version=1)
    with pytest.raises(ValueError, match="format 1 .* not supported"):
        fastgen.load(saved)


def test_save_unfitted_or_unknown():
    with pytest.raises(fastgen.NotFittedError):
        fastgen.GaussianNB().save("never-written")


def test_save_replaces_atomically(saved):
    before = saved.read_bytes()
    fastgen.GaussianNB().fit(DENSE[:100], Y[:100]).save(saved)
    assert saved.read_bytes() != before
    assert list(saved.parent.glob("*.tmp*")) == []
    fastgen.load(saved)


def test_a_failed_save_names_the_path_and_leaves_nothing(tmp_path):
    """Saving onto a directory fails naming the path asked for, not a temporary file, and
    leaves no temporary file behind."""
    model = fastgen.GaussianNB().fit(DENSE[:100], Y[:100])
    target = tmp_path / "taken"
    target.mkdir()
    with pytest.raises(OSError) as caught:
        model.save(target)
    assert caught.value.filename == str(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
