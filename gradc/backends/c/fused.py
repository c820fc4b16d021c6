"""The body of a fused elementwise loop, printed from per-op templates instead of one SymPy expression per loop.

Each op's C spelling is its ``c=`` facet (``gradc.ops.c_spell``): a SymPy expression of its operands. Building
a loop's whole expression in SymPy, simplifying it by ``sympy.cse`` and printing it cost ~30 ms a loop (a
3,000-statement function took minutes). Here SymPy builds and prints each op's spelling once per
``(op, params, types, constant operands, printer)`` with placeholder operands (``template``: the same SymPy
expression, the same printer, so the same C per op); a loop body is those texts with the operands' texts put
in their places, in the program's order of operations. A value used once inside the loop is written inline,
one used more than once (or stored and read again) is a ``const`` temporary ``qN``; SymPy no longer
reassociates across ops (``(x*1.0001)*1.0001`` stays two roundings, as NumPy computes it).

>>> from gradc.ir.types import TensorType
>>> t = template("sin", (), ("f64",), "f64", (0,), False, ("f64", True, False))
>>> t.render([("x[k]", ATOM)])
('gradc_sin(x[k])', 3)
>>> t = template("mul", (), ("f64", "f64"), "f64", (0, 1), False, ("f64", False, False))
>>> t.render([("a + b", ADD), ("c*d", MUL)])
('(a + b)*(c*d)', 2)
"""
from __future__ import annotations

import re

import sympy as sp

from gradc.backends.c.lowering import C_LOWERING
from gradc.backends.c.mathlib import SINCOS_NAMES
from gradc.backends.c.scalar_types import symbol, typed
from gradc.backends.c.values import C_TYPES, printer
from gradc.ir.types import TensorType

# how tightly a C text binds: an operand is bracketed where its place needs more
LOW, ADD, MUL, ATOM = 0, 1, 2, 3

# a placeholder no C name can spell (a user's variable may be called anything an identifier can be)
_SLOT = re.compile(r"@(\d+)@")
_UNARY_BEFORE = set("(,?:=<>!&|*/+-")
# C that evaluates some operand only on a condition
_CONDITIONAL = re.compile(r"\?|&&|\|\|")


class Template:
    """An op's C text with numbered operand slots: ``parts`` alternate literal text and slot numbers."""

    def __init__(self, text: str, limited: list, trig: str | None):
        self.text = text
        pieces = _SLOT.split(text)
        self.parts = [int(p) if n % 2 else p for n, p in enumerate(pieces)]
        self.needs = [_slot_need(text, m.start(), m.end()) for m in _SLOT.finditer(text)]
        self.uses: dict = {}
        for p in self.parts[1::2]:
            self.uses[p] = self.uses.get(p, 0) + 1
        self.identity = len(self.parts) == 3 and self.parts[0] == self.parts[2] == ""
        self.binds = _binding(text)
        self.limited = limited  # Templates of the arguments of the sin, cos and tan calls (gradc's are limited)
        self.trig = trig  # "sin" / "cos" when the text is that function of slot 0 (sin and cos by one call)

    def render(self, operands) -> tuple:
        """``(text, binding)`` with ``operands[n] = (text, binding)`` in slot ``n``."""
        if self.identity:
            return operands[self.parts[1]]
        out = []
        for n, p in enumerate(self.parts):
            if n % 2 == 0:
                out.append(p)
            else:
                text, binds = operands[p]
                out.append(f"({text})" if binds < self.needs[n // 2] else text)
        return "".join(out), self.binds


def _slot_need(text: str, start: int, end: int) -> int:
    """How tightly an operand in ``text[start:end]`` must bind to go in unbracketed (C's precedence and
    left-to-right grouping: ``a + (b + c)`` keeps its brackets, which fix the order of rounding)."""
    before = text[:start].rstrip()
    after = text[end:].lstrip()
    left = before[-1:] or "("
    right = after[:1] or ")"
    if left in "(," and right in "),":
        return LOW
    if left in "+-":
        unary = before[:-1].rstrip()[-1:] in _UNARY_BEFORE or not before[:-1].strip()
        need_left = ATOM if unary else MUL
    elif left in "(,":
        need_left = LOW
    else:  # * / and comparisons, logic, ternaries, casts
        need_left = ATOM
    if right in "),":
        need_right = LOW
    elif right in "+-":
        need_right = ADD
    elif right in "*/":
        need_right = MUL
    else:
        need_right = ATOM
    return max(need_left, need_right)


def _binding(text: str) -> int:
    """How tightly the C expression ``text`` binds: by its operators outside brackets."""
    depth, top = 0, []
    for n, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0:
            top.append((n, ch))
    chars = {ch for _, ch in top}
    if chars & set("?:<>=!&|^"):
        return LOW
    if any(ch in "+-" and n > 0 and text[n - 1] == " " for n, ch in top) or text.startswith("-"):
        return ADD
    if chars & set("*/"):
        return MUL
    return ATOM


_TEMPLATES: dict = {}
_MAX_TEMPLATES = 100_000


def template(op: str, params: tuple, in_dtypes: tuple, out_dtype: str, inputs: tuple, ints: bool,
             printing: tuple) -> Template:
    """The C of ``op`` with ``inputs[n]`` an operand slot (an int) or a SymPy value baked in (a constant).

    ``params``: the equation's params as sorted items; ``ints``: the loop has integer values (each result is
    converted to its C type, ``scalar_types.typed``); ``printing``: ``(dtype, vector, selects)`` of
    ``values.printer``. Built once per key: a pure function of it, so output never depends on the cache.
    """
    return _template((op, params, in_dtypes, out_dtype, tuple(_input_key(i) for i in inputs), ints), inputs,
                     printing)


def _template(key: tuple, inputs: tuple, printing: tuple) -> Template:
    found = _TEMPLATES.get((key, printing))
    if found is None:
        if len(_TEMPLATES) >= _MAX_TEMPLATES:  # (constants are in the keys) a pure cache: dropping it is safe
            _TEMPLATES.clear()
        op, params, in_dtypes, out_dtype, _, ints = key
        found = _TEMPLATES[(key, printing)] = _build(op, dict(params), in_dtypes, out_dtype, inputs, ints, printing)
    return found


def _input_key(value):
    """A slot number, or a constant by its exact value (SymPy calls Float(1.0) and Integer(1) equal)."""
    if isinstance(value, int):
        return value
    if isinstance(value, sp.Float):
        return ("Float", value._mpf_, value._prec)
    if isinstance(value, sp.Rational):
        return ("Rational", value.p, value.q)
    return (type(value).__name__, value)


def _params_key(params: dict) -> tuple:
    items = tuple(sorted(params.items(), key=lambda kv: kv[0]))
    try:
        hash(items)
    except TypeError:  # a list in the params: its text (the params of scalar ops are plain values)
        return (repr(items),)
    return items


# arithmetic NumPy allows on booleans with a boolean result; SymPy has no product of truth values
BOOL_ARITHMETIC = frozenset({"add", "mul", "abs", "square", "maximum", "minimum", "fmax", "fmin", "pow"})


def _build(op, params, in_dtypes, out_dtype, inputs, ints, printing) -> Template:
    args = [symbol(f"@{i}@", dt) if isinstance(i, int) else i for dt, i in zip(in_dtypes, inputs)]
    if op in BOOL_ARITHMETIC and out_dtype == "bool":  # NumPy's bool * bool, abs(bool), ...: as 0/1, then != 0
        ones = [sp.Piecewise((1, a), (0, True)) if dt == "bool" else a for a, dt in zip(args, in_dtypes)]
        in_ints = ["i64" if dt == "bool" else dt for dt in in_dtypes]
        expr = sp.Ne(C_LOWERING[op][1](ones, params, [TensorType((), dt) for dt in in_ints], TensorType((), "i64")), 0)
    else:
        expr = C_LOWERING[op][1](args, params, [TensorType((), dt) for dt in in_dtypes], TensorType((), out_dtype))
    if ints:
        expr = typed(expr, out_dtype)
    pr = printer(*printing)
    trig_nodes = [node for node in sp.preorder_traversal(expr) if isinstance(node, (sp.sin, sp.cos, sp.tan))]
    limited = [Template(pr.doprint(a), [], None) for a in dict.fromkeys(n.args[0] for n in trig_nodes)]
    trig = None
    if isinstance(expr, (sp.sin, sp.cos)) and isinstance(inputs[0], int) and expr.args[0] == args[0]:
        trig = type(expr).__name__
    return Template(pr.doprint(expr), limited, trig)


class FusedRun:
    """One fused loop's equations, their operands and stores, printed as C statements (``lines``).

    ``operands[n]``: per input of equation ``n``, ``("value", m)`` (equation ``m`` of the run), ``("read", text)``
    (C reading it) or ``("const", sympy_value)``; ``stores``: ``(equation index, C target)`` in order;
    ``ctypes[n]``: the C type of a temporary holding equation ``n``'s value; ``compute``: the float type
    (``"f32"``/``"f64"``); ``selects``: ternaries of floats may be ``gradc_select`` (vector loops);
    ``first_temp``: the number of the first temporary ``qN``.
    """

    def __init__(self, eqns, operands, stores, ctypes, ints, compute, selects, first_temp):
        self.eqns, self.operands, self.stores, self.ctypes = eqns, operands, stores, ctypes
        self.ints, self.compute, self.selects = ints, compute, selects
        self.slots = []  # per equation: its template's inputs (slot numbers and constants), slot -> operand
        for ops in operands:
            # every operand its own slot, even the same value twice: SymPy would simplify x - x to 0, which
            # NumPy computes as nan for an inf or nan x (a float zero constant is values.FloatZero)
            inputs, by_slot = [], []
            for kind, what in ops:
                if kind == "const":
                    inputs.append(what)
                    continue
                inputs.append(len(by_slot))
                by_slot.append((kind, what))
            self.slots.append((tuple(inputs), by_slot))
        # per equation and slot, the C type of a value read from memory (the array's element type)
        self.read_types = [[C_TYPES[a.type.dtype] for a, (kind, _) in zip(e.inputs, ops) if kind != "const"]
                           for e, ops in zip(eqns, operands)]
        self.hoisted: dict = {}  # C text of an operand of a conditional -> the temporary loading it first
        self.keys = [(e.op, _params_key(e.params), tuple(a.type.dtype for a in e.inputs), e.out.type.dtype,
                      tuple(_input_key(i) for i in self.slots[n][0]), ints) for n, e in enumerate(eqns)]
        stored = {n for n, _ in stores}
        uses = [0] * len(eqns)
        self.live = [False] * len(eqns)
        plain = self.templates(False)
        for n in reversed(range(len(eqns))):  # a value no live equation reads and no store keeps is not computed
            self.live[n] = n in stored or uses[n] > 0
            if self.live[n]:
                for slot, (kind, what) in enumerate(self.slots[n][1]):
                    if kind == "value":
                        uses[what] += plain[n].uses.get(slot, 0)
        # a value read twice, or stored and read, is computed once into a temporary
        self.temps: dict = {}
        for n in range(len(eqns)):
            if self.live[n] and (uses[n] >= 2 or (n in stored and uses[n] >= 1)):
                self.temps[n] = f"q{first_temp + len(self.temps)}"
        self.next_temp = first_temp + len(self.temps)
        self.sincos: dict = {}  # (sin equation, cos equation) -> their temporaries, in scalar code

    def templates(self, vector: bool) -> list:
        printing = (self.compute, vector, vector and self.selects)
        return [_template(key, self.slots[n][0], printing) if self.live[n] or not vector else None
                for n, key in enumerate(self.keys)]

    def _operand_texts(self, texts, n, tpl) -> list:
        """``(text, binding)`` of each operand slot of equation ``n`` its template uses (SymPy may drop one:
        ``x - x`` is 0 to it)."""
        return [(texts[what] if kind == "value" else (what, ATOM)) if slot in tpl.uses else None
                for slot, (kind, what) in enumerate(self.slots[n][1])]

    def lines(self, vector: bool) -> list:
        """The statements of the loop body: temporaries in the program's order, then the stores."""
        tpls = self.templates(vector)
        pairs = {} if vector or self.compute not in SINCOS_NAMES else self._sincos_pairs(tpls)  # complex: none
        texts: dict = {}
        out = []
        loaded: set = set()  # the hoisted loads this body has made
        for n, tpl in enumerate(tpls):
            if not self.live[n]:
                continue
            if n in pairs:
                first, s_name, c_name, (kind, what) = pairs[n]
                if first:  # the argument's C as this body has it (a value that is itself a sine: its name)
                    arg = texts[what][0] if kind == "value" else what
                    ctype = C_TYPES[self.compute]
                    out.append(f"{ctype} {s_name}, {c_name};")
                    out.append(f"{SINCOS_NAMES[self.compute]}({arg}, &{s_name}, &{c_name});")
                texts[n] = (s_name if tpl.trig == "sin" else c_name, ATOM)
                continue
            ops = self._operand_texts(texts, n, tpl)
            if _CONDITIONAL.search(tpl.text):
                ops = self._hoist_loads(n, ops, out, loaded)
            text = tpl.render(ops)
            if n in self.temps:
                out.append(f"const {self.ctypes[n]} {self.temps[n]} = {text[0]};")
                text = (self.temps[n], ATOM)
            texts[n] = text
        for n, where in self.stores:
            out.append(f"{where} = {texts[n][0]};")
        return out

    def _hoist_loads(self, n, ops, out, loaded) -> list:
        """Operands of equation ``n`` (a conditional: ``?:``, ``&&``, ``||``) that read memory, loaded into
        ``const`` temporaries before it, so that no load is conditional. NumPy computes every operand of every
        element anyway, and a fused loop reads its arrays in bounds, so this changes no value; it keeps GCC
        from masked loads, which GCC 12 at -O3 with AVX-512 miscompiled (a select's mask taken from the
        wrong vector: a copysign gradient of zeros, tests/fuzz/test_selects.py). A text loaded once is
        reused: the body stores only after its last read."""
        hoisted = []
        for slot, op in enumerate(ops):
            if op is None or "[" not in op[0]:
                hoisted.append(op)
                continue
            kind, what = self.slots[n][1][slot]
            name = self.hoisted.get(op[0])
            if name is None:
                name = self.hoisted[op[0]] = f"q{self.next_temp}"
                self.next_temp += 1
            if name not in loaded:
                ctype = self.ctypes[what] if kind == "value" else self.read_types[n][slot]
                out.append(f"const {ctype} {name} = {op[0]};")
                loaded.add(name)
            hoisted.append((name, ATOM))
        return hoisted

    def _sincos_pairs(self, tpls) -> dict:
        """In scalar code, ``sin(a)`` and ``cos(a)`` of one ``a`` by one call: equation -> (whether it is the
        first of its pair, the sine's name, the cosine's name, the C of ``a``)."""
        by_arg: dict = {}
        for n, tpl in enumerate(tpls):
            if self.live[n] and tpl is not None and tpl.trig is not None:
                by_arg.setdefault(self.slots[n][1][0], {}).setdefault(tpl.trig, n)
        found = {}
        for (kind, what), trig in by_arg.items():
            if "sin" in trig and "cos" in trig:
                key = (trig["sin"], trig["cos"])
                if key not in self.sincos:
                    self.sincos[key] = (f"q{self.next_temp}", f"q{self.next_temp + 1}")
                    self.next_temp += 2
                s_name, c_name = self.sincos[key]
                first = min(key)
                for n in key:
                    found[n] = (n == first, s_name, c_name, (kind, what))
        return found

    def limited(self) -> list:
        """The C of each argument of a sin, cos or tan in the vector loop, in terms of the loop's reads only
        (they are tested before a scalar loop recomputes an element), distinct, in order."""
        tpls = self.templates(True)
        full: dict = {}
        found: dict = {}
        for n, tpl in enumerate(tpls):
            if not self.live[n]:
                continue
            ops = self._operand_texts(full, n, tpl)
            full[n] = tpl.render(ops)
            for arg in tpl.limited:
                found[arg.render(ops)[0]] = None
        return list(found)
