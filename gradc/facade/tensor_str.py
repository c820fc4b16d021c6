"""Text of a tensor: the layout rules of torch's ``repr`` (by default precision 4, 80 columns, summaries over 1000
elements; ``torch.set_printoptions`` changes them).

One formatter serves the whole tensor; it is chosen from the nonzero finite values
(only the shown edge values when the tensor is summarised).

>>> import numpy as np
>>> body(np.array([1.5, 2.0], np.float32))
'[1.5000, 2.0000]'
"""
from __future__ import annotations

import math

import numpy as np

# torch.set_printoptions's settings (its "default" profile); sci_mode None chooses per tensor
_PROFILES = {"default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
             "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
             "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80}}
OPTIONS = dict(_PROFILES["default"], sci_mode=None)
# the dtypes a repr does not name: the default float dtype and its complex (``torch.set_default_dtype`` sets them)
DEFAULT_NAMES = {"float": "float32", "complex": "complex64"}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """``torch.set_printoptions``: a ``profile`` ('default', 'short', 'full') first, then each option given.

    >>> set_printoptions(precision=2); body(np.array([1.0 / 3.0], np.float32)); set_printoptions(profile="default")
    '[0.33]'
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, not {profile!r}")
        OPTIONS.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            OPTIONS[name] = value
    OPTIONS["sci_mode"] = sci_mode  # torch: None (the automatic choice) unless given


def get_printoptions() -> dict:
    """The current print options (``torch.get_printoptions``)."""
    return dict(OPTIONS)


class _Formatter:
    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci, self.width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            self.width = max((len(self._plain(v)) for v in flat), default=1)
            return
        finite = [float(v) for v in flat if math.isfinite(float(v)) and float(v) != 0.0]
        if not finite:
            return
        mags = [abs(v) for v in finite]
        self.int_mode = all(v == math.ceil(v) for v in finite)
        hi, lo = max(mags), min(mags)
        self.sci = hi / lo > 1000.0 or hi > 1e8 or lo < 1e-4
        if OPTIONS["sci_mode"] is not None:
            self.sci = bool(OPTIONS["sci_mode"])
        self.width = max(len(self.text(v)) for v in finite)

    @staticmethod
    def _plain(v):
        return str(v.item() if hasattr(v, "item") else v)

    def text(self, v) -> str:
        if not self.floating:
            return self._plain(v)
        v = float(v)
        if not math.isfinite(v):
            return "nan" if v != v else ("inf" if v > 0 else "-inf")
        p = OPTIONS["precision"]
        if self.sci:
            return f"{v:.{p}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{p}f}"

    def cell(self, v) -> str:
        return self.text(v).rjust(self.width)


class _ComplexFormatter:
    """torch's two formatters of a complex tensor: one for the real parts, one for the imaginary parts; a value
    is its real part (padded) joined to its signed imaginary part (unpadded) and ``j``."""

    def __init__(self, values: np.ndarray):
        self.re, self.im = _Formatter(values.real), _Formatter(values.imag)
        self.width = self.re.width + self.im.width + 1  # + "j"; the cells' ", " is counted by ``_vector``

    @staticmethod
    def _join(re: str, im: str) -> str:
        im = (im + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im

    def text(self, v) -> str:
        return self._join(self.re.text(v.real), self.im.text(v.imag))

    def cell(self, v) -> str:
        return self._join(self.re.cell(v.real), self.im.cell(v.imag))


def _formatter(values: np.ndarray):
    return _ComplexFormatter(values) if values.dtype.kind == "c" else _Formatter(values)


def _edges(values: np.ndarray, summarize: bool) -> np.ndarray:
    if not summarize or values.ndim == 0:
        return values
    edge = OPTIONS["edgeitems"]
    if values.shape[0] > 2 * edge:
        values = np.concatenate([values[:edge], values[-edge:]])
    if values.ndim == 1:
        return values
    return np.stack([_edges(row, True) for row in values])


def _vector(values, fmt, indent, summarize):
    cells = [fmt.cell(v) for v in values]
    edge = OPTIONS["edgeitems"]
    if summarize and len(values) > 2 * edge:
        cells = cells[:edge] + [" ..."] + cells[-edge:]
    per_line = max(1, (OPTIONS["linewidth"] - indent) // (fmt.width + 2))
    lines = [", ".join(cells[i:i + per_line]) for i in range(0, len(cells), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _render(values, fmt, indent, summarize):
    if values.ndim == 0:
        return fmt.cell(values)
    if values.ndim == 1:
        return _vector(values, fmt, indent, summarize)
    rows = range(values.shape[0])
    edge = OPTIONS["edgeitems"]
    if summarize and values.shape[0] > 2 * edge:
        parts = [_render(values[i], fmt, indent + 1, summarize) for i in rows[:edge]] + ["..."] + \
                [_render(values[i], fmt, indent + 1, summarize) for i in rows[-edge:]]
    else:
        parts = [_render(values[i], fmt, indent + 1, summarize) for i in rows]
    sep = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def body(values: np.ndarray, indent: int = 7) -> str:
    """The bracketed numbers of a tensor's text (without ``tensor(`` and suffixes)."""
    if values.size == 0:
        return "[]"
    summarize = values.size > OPTIONS["threshold"]
    fmt = _formatter(_edges(values, summarize))
    if values.ndim == 0:
        return fmt.text(values.item())
    return _render(values, fmt, indent, summarize)


def tensor_repr(t) -> str:
    values = t._data
    text = "tensor(" + body(values)
    suffixes = []
    default = t.dtype.name in (DEFAULT_NAMES["float"], "int64", "bool", DEFAULT_NAMES["complex"])
    if values.size == 0:
        if values.ndim != 1:
            suffixes.append("size=" + str(tuple(values.shape)))
        if t.dtype.name != DEFAULT_NAMES["float"]:
            suffixes.append("dtype=" + repr(t.dtype))
    elif not default:
        suffixes.append("dtype=" + repr(t.dtype))
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > OPTIONS["linewidth"]:
            text += ",\n" + " " * 7 + s
            last = 7 + len(s)
        else:
            text += ", " + s
            last += len(s) + 2
    return text + ")"
