"""Seeded mutations of a results file (docs/results_format.md) with h5py.

mutate_results_file(path, rng) rewrites one to three objects of a valid results
file in place, as a hand edit or a script would: a dataset replaced by one of
another rank, extent or element type, or with extreme values (NaN, infinities,
negative sizes, row indices past the end); an attribute of the wrong type or
shape; an object deleted or moved; a chunked dataset declaring 2^40 rows; or
(a tenth of the time) the file truncated. Byte flips inside HDF5's own metadata
are left out: they test libhdf5, not distir.
"""

import os

import h5py
import numpy as np

_STR = h5py.string_dtype("utf-8")

_INT_EXTREMES = [0, -1, 1, 2**31, 2**62, 2**63 - 1, -2**63, 10**12]
_FLOAT_EXTREMES = [0.0, -0.0, -1.0, np.nan, np.inf, -np.inf, 1e308, 5e-324, -1e-300]
_STRINGS = ["", "ok", "invalid", "error", "too-large", "gpipe", "1f1b", "bogus",
            "x" * 5000, "\u00e9\u00e8", "ok hidden"]


def _objects(f):
    names = []
    f.visit(names.append)
    return ["/" + n for n in names]


def _datasets(f):
    return [n for n in _objects(f) if isinstance(f[n], h5py.Dataset)]


def _read(ds):
    if ds.size > 10**6:  # a dataset an earlier edit declared huge: read none of it
        raise ValueError("too large to read")
    return ds[()]


def _replace(f, name, data, **kwargs):
    del f[name]
    f.create_dataset(name, data=data, **kwargs)


def _extreme_values(value, rng):
    """`value` (a numpy array) with some elements replaced by extremes of its kind."""
    out = np.array(value, copy=True)
    if out.ndim == 0 or out.size == 0:
        return out
    flat = out.reshape(-1)
    for _ in range(rng.randint(1, max(1, min(4, flat.size)))):
        i = rng.randrange(flat.size)
        if out.dtype.kind in "iu":
            extreme = rng.choice(_INT_EXTREMES + [flat.size, flat.size + 5, -flat.size])
            flat[i] = np.array(extreme).astype(out.dtype)
        elif out.dtype.kind == "f":
            flat[i] = rng.choice(_FLOAT_EXTREMES)
        elif out.dtype.kind == "O":
            flat[i] = rng.choice(_STRINGS)
    return out


def _reshaped(value, rng):
    """The same data as another rank or extent."""
    v = np.asarray(value)
    return rng.choice([
        lambda: np.stack([v, v]),
        lambda: np.stack([v, v], axis=-1),
        lambda: v[:-1] if v.ndim and v.size else v,
        lambda: np.concatenate([v, v]) if v.ndim else np.stack([v, v]),
        lambda: v[:0] if v.ndim else np.zeros((0,), dtype=v.dtype),
        lambda: v.reshape(-1)[:1].reshape(()) if v.size else v,
        lambda: v.reshape(1, -1) if v.size else v,
    ])()


def _retyped(value, rng):
    """The same data with an element type of another class or width."""
    v = np.asarray(value)
    n = max(1, v.size)
    shape = v.shape
    choices = [
        lambda: np.arange(n, dtype=np.int64).reshape(shape) if v.size else np.int64(1),
        lambda: np.full(shape, 1.5, dtype=np.float64),
        lambda: np.full(shape, 7, dtype=np.int8),
        lambda: np.full(shape, 2**64 - 1, dtype=np.uint64),
        lambda: np.full(shape, 1.0, dtype=np.float16),
        lambda: np.array([b"ok"] * n, dtype="S2").reshape(shape) if v.shape else np.bytes_(b"x"),
        lambda: np.array(["x"] * n, dtype=object).reshape(shape) if v.shape else "x",
        lambda: np.zeros(shape, dtype=[("a", "<i8"), ("b", "<f8")]),
        lambda: np.zeros(shape, dtype=bool),
    ]
    return rng.choice(choices)()


def _mutate_dataset(f, name, rng):
    ds = f[name]
    value = _read(ds)
    action = rng.random()
    if action < 0.35:
        data = _extreme_values(value, rng)
        _replace(f, name, data, dtype=ds.dtype if ds.dtype.kind == "O" else None)
    elif action < 0.55:
        data = _reshaped(value, rng)
        _replace(f, name, data, dtype=ds.dtype if ds.dtype.kind == "O" else None)
    elif action < 0.75:
        data = _retyped(value, rng)
        _replace(f, name, data, dtype=_STR if np.asarray(data).dtype.kind in "OU" else None)
    elif action < 0.85:
        del f[name]
        dtype = ds.dtype if ds.dtype.kind != "O" else _STR
        f.create_dataset(name, shape=(rng.choice([2**40, 2**31, 10**6]),), maxshape=(None,),
                         chunks=(1024,), dtype=dtype)
    elif action < 0.92:
        v = np.asarray(value)
        if v.dtype.kind != "O" and v.ndim:
            _replace(f, name, v, compression="gzip", chunks=True)
        else:
            del f[name]
    else:
        f.move(name, name + rng.choice(["_x", "X", "/../x"]).replace("/../", "_"))


def _mutate_attribute(f, rng):
    owners = ["/"] + _objects(f)
    owners = [o for o in owners if len(f[o].attrs)]
    if not owners:
        return
    owner = f[rng.choice(owners)]
    key = rng.choice(list(owner.attrs.keys()))
    value = owner.attrs[key]
    action = rng.random()
    if action < 0.2:
        del owner.attrs[key]
    elif action < 0.5:
        owner.attrs[key] = rng.choice(_INT_EXTREMES + _FLOAT_EXTREMES + [2, 0, "1", "x"])
    elif action < 0.7:
        owner.attrs[key] = np.array([value, value]) if not isinstance(value, str) else [value] * 2
    elif action < 0.85:
        owner.attrs.create(key, rng.choice(["x", "", "\u00e9"]), dtype=_STR)
    else:
        owner.attrs[key] = rng.choice([np.int8(1), np.float32(1.0), np.uint64(2**64 - 1),
                                       np.zeros((0,)), np.array([[1, 2], [3, 4]])])


def _mutate_group(f, rng):
    groups = [n for n in _objects(f) if isinstance(f[n], h5py.Group)]
    if not groups:
        return
    name = rng.choice(groups)
    action = rng.random()
    if action < 0.5:
        del f[name]
    elif action < 0.8:
        f.move(name, name + "_moved")
    else:
        del f[name]
        f.create_dataset(name, data=np.arange(3))


def _truncate(path, rng):
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        fh.truncate(rng.randrange(size))


def mutate_results_file(path, rng):
    """Mutates the results file at `path` in place (1-3 edits, or a truncation)."""
    if rng.random() < 0.1:
        _truncate(path, rng)
        return
    with h5py.File(path, "r+") as f:
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            try:
                _edit(f, rng)
            except (ValueError, TypeError, KeyError, OSError):
                pass  # an edit h5py refuses (e.g. a type it cannot convert): the next one


def _edit(f, rng):
    datasets = _datasets(f)
    # The columns, the ranking and /measured are what the readers check; favour them.
    documented = [d for d in datasets if d.startswith(("/configs/", "/ranking", "/measured/"))]
    action = rng.random()
    if action < 0.65 and datasets:
        pool = documented if documented and rng.random() < 0.7 else datasets
        _mutate_dataset(f, rng.choice(pool), rng)
    elif action < 0.9:
        _mutate_attribute(f, rng)
    else:
        _mutate_group(f, rng)
