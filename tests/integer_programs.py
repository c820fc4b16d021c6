"""Random programs of integer arithmetic, index arithmetic in loops and branches on integers
(for ``test_random_integer_programs``).

A program is ``def prog(x, y, k, m)``: ``x`` and ``y`` float64 arrays of length ``n`` (3 to 6), ``k``
an int64 array of length ``n`` with negative entries, ``m`` a 0-d int64 array (a traced integer:
``if m > 2:`` is a branch of the program). Statements are drawn from the forms below (loops: elementwise
writes, accumulators, branches on the counter or on data, recurrences, scattered ``+=``, updates of a
copy, nested and while loops) and checked by running them: a draw the Python function itself refuses is drawn again.

>>> prog = generate(np.random.default_rng(0), 0)
>>> prog.source.splitlines()[0], prog.float_args
('def prog(x, y, k, m):', (0, 1))
"""
import numpy as np

# integer values from integers: {a}, {b} integer arrays, {c} a small int, {d} a nonzero divisor
INT_FORMS = [
    "({a} + {c}) % {d}", "({a} * {c}) // {d}", "{a} // {d} % {e}", "-{a} // {d}", "{a} % {b}", "{a} // {b}",
    "({a} << {s})", "({a} >> {s})", "({a} & {c})", "({a} | {c})", "({a} ^ {c})", "(~{a})", "np.abs({a})", "-{a}",
    "np.maximum({a}, {c})", "np.minimum({a}, {b})", "{a} * {b} - {c}", "{a} + m", "{a} * m % {d}",
    "np.where({a} > {c}, {a}, {b})", "{a} - ({a} // {d}) * {d}", "np.fmod({a}, {d})", "({a} ^ {b}) & 7",
    "np.sign({a}) * {c}", "({a} >= {b}) + {a}", "{a} % -{d}", "np.floor_divide({a}, {d})", "np.mod({b}, {d})",
    "(m << 1) + {a}", "{a} * (m > {c})", "np.right_shift({a}, {s}) | 1",
]
# float values from a float array {X} and an integer array {J}
MIXED_FORMS = [
    "{X} * ({J} % 3)", "{X} * {J}", "{X} + {J} / 2", "{X} * ({J} > {c})", "np.where({J} % 2 == 0, {X}, -{X})",
    "{X} ** 2 * ({J} // 2)", "{X} / (1.0 + np.abs({J}))", "np.sin({X}) * ({J} & 1)", "{X} * m", "{X} * (m % 3)",
    "{X}[{J} % n]", "{X}[({J} * 3) // 2 % n]", "{X} * ({J} == m)", "{X} + {J} * 0.5 - m", "{X} % 0.75 + {J}",
    "np.tanh({X}) * ({J} // -2)", "({X} * 2.0) // 1.0 + {X}", "{X}[n - 1 - ({J} % n)]", "{X} * (({J} << 2) ^ 3)",
]
# an index of a length-n array from the loop counter i ({c} small)
INDEX_FORMS = [
    "i", "(i + {c}) % n", "(i * 3) // 2 % n", "n - 1 - i", "-1 - i", "(n + i - {c}) % n", "i // 2", "(i ^ 1) % n",
    "(i << 1) % n", "(i * {c}) % n", "k[i] % n", "(i + m) % n", "(k[i] * i) % n", "abs(i - {c}) % n",
]
# a float value of iteration i: {A} and {B} are reads X[index]
BODY_FORMS = [
    "{A} ** 2 * {B}", "{A} * (i % 3)", "{A} + {B} * 0.5", "np.sin({A}) * k[i]", "{A} * (k[i] % 3)", "{A} - {B}",
    "{A} * {B} + i", "{A} * (i // 2 - 1)", "np.tanh({A}) * (i & 1) + {B}", "{A} / (1.0 + abs(k[i]))",
]


class Program:
    """Source text of ``def prog(...)`` and its example arguments; ``value`` is what Python computes."""

    def __init__(self, source, args, key, float_args=None):
        self.source, self.args, self.key = source, list(args), key
        self.float_args = tuple(i for i, a in enumerate(self.args) if np.asarray(a).dtype.kind == "f") \
            if float_args is None else float_args
        namespace = {"np": np}
        exec(source, namespace)  # noqa: S102 (the generator's own text)
        with np.errstate(all="ignore"):
            self.value = float(namespace["prog"](*self.args))

    def __repr__(self):
        return f"Program({self.source!r}, args={self.args!r})"


class _Draw:
    def __init__(self, rng):
        self.rng = rng
        self.n = int(rng.integers(3, 7))
        self.ints = ["k"]  # integer arrays so far
        self.floats = ["x", "y"]  # float arrays so far
        self.lines = ["n = x.shape[0]"]
        self.count = 0

    def pick(self, names):
        newest = names[-1] if self.rng.integers(0, 2) else names[int(self.rng.integers(0, len(names)))]
        return newest

    def small(self):
        return int(self.rng.integers(-3, 6))

    def fill(self, form, **extra):
        r = self.rng
        return form.format(a=self.pick(self.ints), b=self.pick(self.ints), c=self.small(), d=int(r.integers(2, 6)),
                           e=int(r.integers(2, 5)), s=int(r.integers(0, 4)), X=self.pick(self.floats),
                           J=self.pick(self.ints), **extra)

    def name(self):
        self.count += 1
        return f"v{self.count}"

    def int_statement(self):
        v = self.name()
        self.lines.append(f"{v} = {self.fill(self.rng.choice(INT_FORMS))}")
        self.ints.append(v)

    def mixed_statement(self):
        v = self.name()
        self.lines.append(f"{v} = {self.fill(self.rng.choice(MIXED_FORMS))}")
        self.floats.append(v)

    def read(self):
        return f"{self.pick(self.floats)}[{self.fill(self.rng.choice(INDEX_FORMS))}]"

    def body(self):
        return self.fill(self.rng.choice(BODY_FORMS), A=self.read(), B=self.read())

    def loop_statement(self):
        r, v = self.rng, self.name()
        kind = int(r.integers(0, 5))
        start = "range(n)" if r.integers(0, 4) else "range(n - 1, -1, -1)"
        if kind == 3:  # an accumulator
            self.lines += [f"{v} = 0.0", f"for i in {start}:", f"    {v} = {v} + {self.body()}"]
            self.floats.append(f"({v} + np.zeros(n))")
            return
        self.lines += [f"{v} = np.zeros(n)", f"for i in {start}:"]
        target = "i" if kind != 1 else self.fill(r.choice(INDEX_FORMS[:10]))
        op = "+=" if kind == 1 or r.integers(0, 3) == 0 else "="
        if kind == 2:  # a branch on the counter, or on data
            test = r.choice(["i % 2 == 0", f"k[i] > {self.small()}", f"(i & 1) == {int(r.integers(0, 2))}",
                             f"i * 2 < n + {self.small()}", "k[i] % 3 == m % 3"])
            self.lines += [f"    if {test}:", f"        {v}[{target}] {op} {self.body()}", "    else:",
                           f"        {v}[{target}] {op} {self.body()}"]
        else:
            self.lines.append(f"    {v}[{target}] {op} {self.body()}")
        self.floats.append(v)

    def recurrence_statement(self):
        """Loops whose iterations depend on each other or on data: a recurrence, a scattered ``+=``, an update
        of a copy, a nested loop, a while loop."""
        r, v = self.rng, self.name()
        kind = int(r.integers(0, 5))
        if kind == 0:
            self.lines += [f"{v} = {self.pick(self.floats)} * 1.0", "for i in range(1, n):",
                           f"    {v}[i] = {v}[i - 1] * 0.5 + {self.read()} * (i % 3)"]
        elif kind == 1:
            self.lines += [f"{v} = np.zeros(n)", "for i in range(n):", f"    {v}[k[i] % n] += {self.body()}"]
        elif kind == 2:
            self.lines += [f"{v} = {self.pick(self.floats)}.copy()", "for i in range(n):",
                           f"    {v}[{self.fill(r.choice(INDEX_FORMS[:10]))}] += {self.read()} * 0.5"]
        elif kind == 3:
            self.lines += [f"{v} = np.zeros(n)", "for i in range(n):", "    for j in range(i + 1):",
                           f"        {v}[i] += {self.pick(self.floats)}[(i + j) % n] * ((i ^ j) % 3)"]
        else:
            self.lines += [f"{v} = np.zeros(n)", "i = 0", "while i < n:",
                           f"    {v}[i] = {self.body()}", f"    i += {int(r.integers(1, 3))}"]
        self.floats.append(v)

    def branch_statement(self):
        v = self.name()
        test = self.rng.choice([f"m > {self.small()}", f"m % 2 == {int(self.rng.integers(0, 2))}",
                                f"k[{int(self.rng.integers(0, 3))}] > {self.small()}", f"(m & 3) == {self.small()}"])
        self.lines += [f"if {test}:", f"    {v} = {self.fill(self.rng.choice(MIXED_FORMS))}", "else:",
                       f"    {v} = {self.pick(self.floats)} * {self.small()}.5"]
        self.floats.append(v)

    def program(self, key):
        r = self.rng
        steps = [self.int_statement, self.mixed_statement, self.loop_statement, self.loop_statement,
                 self.branch_statement, self.int_statement, self.mixed_statement, self.recurrence_statement]
        for _ in range(int(r.integers(2, 6))):
            steps[int(r.integers(0, len(steps)))]()
        if len(self.floats) == 2:
            self.mixed_statement()
        finals = self.floats[2:][-int(r.integers(1, 3)):]
        terms = [f"np.sum({f})" for f in finals] + (["np.sum(x) * 0.25"] if r.integers(0, 2) else [])
        self.lines.append("return " + " + ".join(terms))
        source = "def prog(x, y, k, m):\n    " + "\n    ".join(self.lines) + "\n"
        n = self.n
        args = [r.uniform(-1.5, 1.5, n), r.uniform(-1.5, 1.5, n), r.integers(-7, 8, n).astype(np.int64),
                np.array(int(r.integers(-4, 6)), dtype=np.int64)]
        return Program(source, args, key)


def generate(rng, key):
    """A random program (``key`` names it), or None when the Python function itself raises or gives a
    value that is not finite or is large (then the caller draws again)."""
    try:
        prog = _Draw(rng).program(key)
    except (IndexError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        return None
    if not np.isfinite(prog.value) or abs(prog.value) > 1e6:
        return None
    return prog
