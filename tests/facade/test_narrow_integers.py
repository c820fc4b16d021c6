"""torch's narrow integer dtypes (int8, int16, uint8) on the facade, against real torch 2.13.0: promotion
(uint8 with int8 is int16; a Python int never widens a tensor), overflow that wraps, sums in int64, printing,
the legacy names, and indexing rules. A seeded generator runs random expressions on random narrow tensors."""
import warnings

import numpy as np
import pytest

import gradc.torch as facade

torch = pytest.importorskip("torch")

NARROW = ("int8", "int16", "uint8")
WIDE = ("int32", "int64", "float32", "float64", "bool")
BINARY = ("+", "-", "*", "//", "%", "&", "|", "^", "<", ">=", "==", "/")
UNARY = ("neg", "abs", "sum", "prod", "max", "min", "cumsum", "float", "sort", "sq", "shl", "clamp", "tolist", "str")


def _tensor(module, values, name):
    return module.tensor(values, dtype=getattr(module, name))


def _apply_binary(op, x, y):
    return eval(f"x {op} y")  # noqa: S307 - op is one of BINARY


def _apply_unary(op, x):
    return {"neg": lambda: -x, "abs": lambda: x.abs(), "sum": lambda: x.sum(), "prod": lambda: x.prod(),
            "max": lambda: x.max(), "min": lambda: x.min(), "cumsum": lambda: x.cumsum(0), "float": lambda: x.float(),
            "sort": lambda: x.sort().values, "sq": lambda: x * x, "shl": lambda: x << 1,
            "clamp": lambda: x.clamp(0, 50), "tolist": lambda: x.tolist(), "str": lambda: str(x)}[op]()


def _outcome(f, *args):
    try:
        r = f(*args)
    except Exception as e:  # compared below: both raise the same type
        return type(e).__name__
    if isinstance(r, (list, str)):
        return r
    return (str(r.dtype).replace("torch.", ""), r.tolist())


def _values(rng, name, n):
    if name == "bool":
        return rng.integers(0, 2, n).astype(bool).tolist()
    if name.startswith("float"):
        return (rng.standard_normal(n) * 50).round(2).tolist()
    info = np.iinfo(np.dtype(name))
    lo, hi = max(int(info.min), -40000), min(int(info.max), 40000)
    return rng.integers(lo, hi + 1, n).tolist()


def _cases(count, seed):
    rng = np.random.default_rng(seed)
    for i in range(count):
        n = int(rng.integers(1, 7))
        a = str(rng.choice(NARROW))
        b = str(rng.choice(NARROW + WIDE + ("scalar", "0-d")))
        yield i, a, _values(rng, a, n), b, n, rng, str(rng.choice(BINARY)), str(rng.choice(UNARY))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # torch and NumPy both divide by zero in some draws
@pytest.mark.parametrize("seed", range(6))
def test_random_expressions_match_torch(seed):
    for _, a, va, b, n, rng, bop, uop in _cases(40, 1000 + seed):
        if b == "scalar":
            vb = int(rng.integers(-300, 301))
            pair = [(m, _tensor(m, va, a), vb) for m in (torch, facade)]
        elif b == "0-d":
            vb = int(rng.integers(-300, 301))
            pair = [(m, _tensor(m, va, a), m.tensor(vb)) for m in (torch, facade)]
        else:
            vb = _values(rng, b, n)
            pair = [(m, _tensor(m, va, a), _tensor(m, vb, b)) for m in (torch, facade)]
        (_, ta, tb), (_, fa, fb) = pair
        context = f"{a}{va} {bop} {b}:{vb}"
        assert _outcome(_apply_binary, bop, fa, fb) == _outcome(_apply_binary, bop, ta, tb), context
        assert _outcome(_apply_unary, uop, fa) == _outcome(_apply_unary, uop, ta), f"{uop} {a}{va}"


def test_promotion_table_matches_torch():
    for a in NARROW:
        for b in NARROW + WIDE:
            expected = str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch.", "")
            got = (facade.ones(2, dtype=getattr(facade, a)) + facade.ones(2, dtype=getattr(facade, b))).dtype
            assert str(got) == "torch." + expected, (a, b)


def test_overflow_wraps_as_torch_does():
    u = facade.tensor([200, 0, 255], dtype=facade.uint8)
    assert (u + 300).tolist() == [244, 44, 43]  # 300 is cast to uint8 (44) first, as torch does
    assert (-u).tolist() == [56, 0, 1]
    assert (facade.tensor([-128], dtype=facade.int8).abs()).tolist() == [-128]
    assert facade.tensor([1.7, -2.5, 300.0]).to(facade.int8).tolist() == [1, -2, 44]


def test_printing_names_and_legacy_types():
    x = facade.tensor([[1, 2], [3, 4]], dtype=facade.uint8)
    assert str(x) == str(torch.tensor([[1, 2], [3, 4]], dtype=torch.uint8))
    assert str(facade.arange(2000, dtype=facade.int16)) == str(torch.arange(2000, dtype=torch.int16))
    for name, legacy in [("int8", "torch.CharTensor"), ("int16", "torch.ShortTensor"), ("uint8", "torch.ByteTensor")]:
        assert facade.zeros(1, dtype=getattr(facade, name)).type() == legacy
    assert facade.tensor([1.5]).byte().dtype is facade.uint8
    assert facade.tensor([1.5]).char().dtype is facade.int8
    assert facade.tensor([1.5]).short().dtype is facade.int16
    assert facade.short is facade.int16 and facade.int is facade.int32
    assert [facade.uint8.is_signed, facade.int8.is_signed, facade.int16.itemsize] == [False, True, 2]
    assert (facade.iinfo(facade.int8).max, facade.iinfo(facade.uint8).min) == (127, 0)


def test_mean_of_narrow_integers_is_refused_in_torchs_words():
    with pytest.raises(RuntimeError, match="Got: Char"):
        facade.tensor([1, 2], dtype=facade.int8).mean()


def test_integer_matmul_stays_in_its_dtype_and_wraps():
    a = facade.tensor([[100, -100], [127, 5]], dtype=facade.int8)
    t = torch.tensor([[100, -100], [127, 5]], dtype=torch.int8)
    assert (a @ a).dtype is facade.int8
    assert (a @ a).tolist() == (t @ t).tolist()
    b = facade.tensor([[7, 8], [9, 10]], dtype=facade.int32)
    assert (b @ b).tolist() == [[121, 136], [153, 172]] and (b @ b).dtype is facade.int32


def test_indexing_with_narrow_integers_as_torch():
    x = facade.arange(5.0)
    for name in ("int8", "int16"):
        with pytest.raises(IndexError, match="must be long, int, byte or bool"):
            x[facade.tensor([1, 3], dtype=getattr(facade, name))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert x[facade.tensor([1, 0, 1, 0, 1], dtype=facade.uint8)].tolist() == [0.0, 2.0, 4.0]
    assert any("torch.uint8 is now deprecated" in str(w.message) for w in caught)


def test_numpy_arrays_keep_their_narrow_dtype():
    assert facade.from_numpy(np.array([1, 2], np.uint8)).dtype is facade.uint8
    assert facade.tensor(np.array([1, 2], np.int16)).dtype is facade.int16


@pytest.mark.parametrize("pair", ["bt-bt", "it-bt", "bt-it", "bt-1", "1-bt", "ft-True", "bt-True", "it-True"])
def test_subtraction_with_a_bool_is_refused_in_torchs_words(pair):
    def operand(m, spec):
        return {"bt": m.tensor([True, False]), "it": m.tensor([1, 2], dtype=m.int8), "ft": m.tensor([1.0, 2.0]),
                "1": 1, "True": True}[spec]

    def run(m):
        a, b = (operand(m, s) for s in pair.split("-"))
        try:
            return (a - b).tolist()
        except RuntimeError as e:
            return str(e)
    assert run(facade) == run(torch)
