"""The C target in-process: emit, compile into a per-user cache, load with ctypes, call with arrays.

The compiler is ``$CC``, else ``cc``, else ``gcc``. Shared objects are cached
under ``$GRADC_CACHE_DIR`` (default ``$XDG_CACHE_HOME/gradc/c`` or
``~/.cache/gradc/c``), keyed by the hash of the source, compiler, flags and CPU (and,
for the extension wrapper, the Python and NumPy it is built for). The cache is
private: see ``cache`` for what is trusted.

The cached objects are built for this machine: ``-march=native`` (when the
compiler takes it) plus ``-fno-math-errno``, so loops over ``sqrt`` and friends
vectorise. Set ``$GRADC_CFLAGS`` to replace those tuning flags (``""`` for none);
the emitted source itself is portable C99 and never depends on them.

>>> find_compiler() is None or isinstance(find_compiler(), str)
True
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.machinery
import importlib.util
import inspect
import logging
import os
import re
import subprocess
import sys
import sysconfig
import tempfile

import numpy as np

from gradc.backends.c import pyglue as c_pyglue
from gradc.backends.c.blas import connect as connect_blas
from gradc.backends.c.bounds import check_max_trips, too_large
from gradc.backends.c.cache import cache_dir, cache_writes, make_private, trusted_file
from gradc.backends.c.compiler_run import FLAGS, compile_shared, optimisation  # noqa: F401 (FLAGS: public here)
from gradc.backends.c.control import loop_limits
from gradc.backends.c.emit import emit_c
from gradc.backends.c.names import assign, fresh, symbol
from gradc.backends.c.threads import find_compiler, uses_openmp  # noqa: F401 (find_compiler: public here)
from gradc.backends.checks import sized_checker
from gradc.backends.display import source_html
from gradc.errors import EmitError
from gradc.ir.dims import is_dim_expr, substitute, symbols_of
from gradc.passes import optimize
from gradc.stages import stage
from gradc.transforms import reverse as ad

# ELF: a shared object's references to its own functions bind to them at link time, never through the dynamic
# linker to a symbol of that name loaded earlier (the extension's table of entry points takes their addresses)
LINK_FLAGS = ("-Wl,-Bsymbolic",) if sys.platform.startswith(("linux", "freebsd")) else ()
SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1


def tuning_flags(cc: str) -> tuple:
    """Machine-specific flags for the in-process build (``$GRADC_CFLAGS`` overrides).

    >>> os.environ["GRADC_CFLAGS"] = "-O2"; tuning_flags("cc"); del os.environ["GRADC_CFLAGS"]
    ('-O2',)
    """
    override = os.environ.get("GRADC_CFLAGS")
    if override is not None:
        return tuple(override.split())
    return _default_tuning(cc)


@functools.lru_cache(maxsize=None)
def _default_tuning(cc: str) -> tuple:
    flags = ("-fno-math-errno",)
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.c")
        with open(probe, "w") as fh:
            fh.write("int main(void) { return 0; }\n")
        try:
            ok = subprocess.run([cc, "-march=native", "-o", os.path.join(tmp, "probe"), probe],
                                capture_output=True).returncode == 0
        except OSError:
            ok = False
    return (("-march=native",) if ok else ()) + flags


@functools.lru_cache(maxsize=None)
def cpu_identity() -> str:
    """What ``-march=native`` depends on: the CPU's model and feature flags (so a shared cache stays safe)."""
    try:
        with open("/proc/cpuinfo") as fh:
            text = fh.read()
        wanted = [line for line in text.splitlines() if line.startswith(("model name", "flags", "Features"))]
        return "\n".join(sorted(set(wanted)))
    except OSError:
        import platform

        return platform.machine() + platform.processor()



def build(source: str, name: str, glue: str | None = None) -> str:
    """Path of the shared object for ``source`` (compiled once per source, glue, compiler and flags).

    With ``glue`` (see ``c_pyglue``) the object is also a Python extension module.
    """
    cc = find_compiler()
    if cc is None:
        raise EmitError("no C compiler found for target='c' (set $CC or install cc/gcc)", where="",
                        hint="the source is still available from gradc.backends.c.build.emit_sources")
    flags = optimisation(source) + tuning_flags(cc) + (("-fopenmp",) if uses_openmp(source) else ())
    # an extension module is built against one Python's and one NumPy's headers: key it by them too
    # (the cache is shared by every Python of the user; loading another's object fails or worse)
    python_abi = (sysconfig.get_config_var("EXT_SUFFIX") or "", sys.version, np.__version__) if glue else ()
    parts = (source, glue or "", cc, cpu_identity()) + flags + LINK_FLAGS + python_abi
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]
    directory = cache_dir()
    so_path = os.path.join(directory, f"{re.sub(r'[^A-Za-z0-9_]', '_', name)}-{key}.so")
    if trusted_file(so_path):  # else rebuilt: a cached object is loaded only if only we could have written it
        logging.getLogger("gradc.backends.c").info("%s: found in the cache (%s)", name, so_path)
        return so_path
    what = f"building C {'extension' if glue else 'library'} {name} with {cc}"
    with stage("gradc.backends.c", what, lambda: f"{source.count(chr(10))} lines of C, {' '.join(flags[:2])}"), \
            cache_writes(directory), tempfile.TemporaryDirectory(dir=directory) as tmp:  # full, read-only: exit 2
        c_path = os.path.join(tmp, "module.c")
        with open(c_path, "w") as fh:
            fh.write(source)
        tmp_so = os.path.join(tmp, "module.so")
        glue_path = None
        if glue is not None:
            glue_path = os.path.join(tmp, "glue.c")
            with open(glue_path, "w") as fh:
                fh.write(glue)
        includes = (f"-I{c_pyglue.python_include()}", f"-I{c_pyglue.numpy_include()}") if glue is not None else ()
        command = list(flags)
        proc = compile_shared(cc, command, tmp_so, c_path, [*LINK_FLAGS, "-lm"], glue_path, includes)
        if proc.returncode != 0 and "internal compiler error" in proc.stderr and "-O3" in command:
            # the compiler crashed, not the source: GCC 12.2's -O3 vectoriser crashes on some selects of
            # booleans (tests/fuzz/test_selects.py); -O2 builds the same C
            logging.getLogger("gradc.backends.c").warning(
                "%s: %s crashed at -O3 (an internal compiler error); built at -O2 instead", name, cc)
            command = ["-O2" if f == "-O3" else f for f in command]
            proc = compile_shared(cc, command, tmp_so, c_path, [*LINK_FLAGS, "-lm"], glue_path, includes)
        if proc.returncode != 0:
            raise EmitError(f"the C compiler {cc} failed on the generated source:\n{proc.stderr}", where="")
        make_private(tmp_so)
        os.replace(tmp_so, so_path)
    return so_path


def function_names(name: str) -> tuple:
    """The C symbols of the function ``name`` and its gradient: names gradc owns (``names.symbol``).

    >>> function_names("loss"), function_names("system")
    (('gradc_fn_loss', 'gradc_fn_loss_grad'), ('gradc_fn_system', 'gradc_fn_system_grad'))
    """
    forward = symbol(name)
    return forward, forward + "_grad"


def output_names(graph, wrt_names) -> tuple:
    """``(value, [x_bar, ...])``: generated names, so they yield to the inputs' (an input ``value`` is kept).

    >>> from gradc.trace import trace
    >>> output_names(trace(lambda value, x: value * x, 1.0, 2.0), ["value", "x"])
    ('value_', ['value_bar', 'x_bar'])
    """
    inputs = assign([v.name for v in graph.inputs])
    taken = set(inputs.values())
    value = fresh("value", taken)
    taken.add(value)
    bars = []
    for w in wrt_names:
        bars.append(fresh(f"{inputs[w]}_bar", taken))
        taken.add(bars[-1])
    return value, bars


def header_guard(symbol_name: str) -> str:
    """The include guard of the header declaring ``symbol_name`` (a ``gradc_fn_`` symbol): upper-case ``GRADC``
    then the symbol's own case, so it is never a function's symbol and two functions never share one.

    >>> header_guard("gradc_fn_loss_grad")
    'GRADC_fn_loss_grad_H'
    """
    return "GRADC" + symbol_name[len("gradc"):] + "_H"


def emit_sources(graph, value_and_grad_graph, wrt_names, header=None, max_trips=None):
    """``(source, header)`` of the forward function ``NAME`` and ``NAME_grad``.

    ``header``: the first lines of the opening comment (default: where the code came from); the
    emitter escapes them. ``max_trips``: rows of a tape whose length is known only at run time
    (``control.DEFAULT_MAX_TRIPS`` when None).
    """
    max_trips = check_max_trips(max_trips)
    name, _ = function_names(graph.name)
    value, bars = output_names(graph, wrt_names)
    wrt_text = ", ".join(wrt_names)
    header = (header or [f"Generated by gradc from {graph.origin} (reverse mode, wrt {wrt_text}). Do not edit."]) + [
              "",
              "ABI: arrays are row-major, contiguous, of the dtype and shape traced (listed below);",
              "scalars are passed as pointers to one element. Outputs must not overlap inputs.",
              f"  {name}(inputs..., {value}) writes the value;",
              f"  {name}_grad(inputs..., {value}, {', '.join(bars)}) writes the value and the gradient",
              f"  with respect to ({wrt_text}), one buffer per name, shaped like that input.",
              f"Symbols: gradc_fn_ then the function's name (escaped when not plain ASCII words): {name},",
              f"  {name}_grad, and each one's FUNCTION_work_size; no other symbol is defined.",
              "Functions are re-entrant: no heap allocation and no mutable static state. Work arrays up to",
              "65536 bytes per function live on the stack; beyond that the function takes a last argument",
              "`double *work` of NAME_work_size() bytes (0 when no such argument exists).",
              "Inputs: " + ", ".join(f"{v.name}: {v.type}" for v in graph.inputs),
              "Outputs: " + ", ".join(f"{p}: {o.type}" for p, o in zip([value] + bars, value_and_grad_graph.outputs))]
    functions = [(graph, name, [value], f"Value of {graph.name}."),
                 (value_and_grad_graph, function_names(graph.name)[1], [value] + bars,
                  f"Value and gradient of {graph.name} with respect to ({wrt_text}).")]
    guard = header_guard(function_names(graph.name)[1])
    return emit_c(functions, header, guard, max_trips)


def emit_sources_for(f, *example_args, wrt=0, **example_kwargs):
    """``(source, header)`` for ``f`` without compiling (works with no C compiler installed)."""
    from gradc.trace import trace
    from gradc.transforms.reverse import resolve_wrt

    graph = trace(f, *example_args, **example_kwargs)
    names, _ = resolve_wrt(graph, wrt)
    vg = optimize(ad.value_and_grad_graph(graph, names, name=f"{graph.name}_value_and_grad"))
    return emit_sources(optimize(graph), vg, names)


class _CFunction:
    """A loaded C function called with NumPy arrays; returns its outputs as arrays / NumPy scalars."""

    def __init__(self, lib, fname, graph, work, limits=(), display=None):
        """``fname``: the C symbol; ``display``: the name errors give (the user's, ``fname`` by default)."""
        self.fn = getattr(lib, fname)
        symbol_name, fname = fname, display or fname
        # a function with bounded loops returns a status: 0, or the number of the loop that hit its bound
        self.limits = {lim.code: lim for lim in limits}
        self.fn.restype = ctypes.c_int if self.limits else None
        self.graph, self.fname, self.work = graph, fname, work
        self._kept: list = []  # the work buffer kept between calls (see _take_work)
        self.inputs = [(v.name, v.type) for v in graph.inputs]
        self.params, self.static = graph.params, graph.static
        # named sizes (f64[n,3]): the C function takes them first, as long, in the order of their names
        self.sizes = [s.name for s in symbols_of([d for _, t in self.inputs for d in getattr(t, "shape", ())])]
        if self.sizes:
            self.work_size = getattr(lib, f"{symbol_name}_work_size")
            self.work_size.restype = ctypes.c_size_t
            self.work_size.argtypes = [ctypes.c_long] * len(self.sizes)
        # per call, without SymPy: an axis is an int, the name of a size, or (rarely) an expression to substitute
        self.sized = {name: tuple(d.name if getattr(d, "is_Symbol", False) else d for d in t.shape)
                      for name, t in self.inputs if any(is_dim_expr(d) for d in getattr(t, "shape", ()))}
        self.out_shapes = [tuple(d.name if getattr(d, "is_Symbol", False) else d for d in o.type.shape)
                           for o in graph.outputs]

    def _take_work(self, words):
        """A work buffer of at least ``words`` float64s: the one kept from an earlier call (its pages already
        mapped), else a new one. ``list.pop``/``append`` are atomic: two threads never share a buffer."""
        try:
            work = self._kept.pop()
        except IndexError:
            return np.empty(words, np.float64)
        return work if work.size >= words else np.empty(words, np.float64)

    def _give_work(self, work):
        """Keep ``work`` for the next call (the larger when another thread gave one back meanwhile)."""
        if not self._kept:
            self._kept.append(work)
        elif self._kept[-1].size < work.size:
            self._kept[-1] = work

    def __call__(self, *args):
        if len(args) != len(self.params):
            raise TypeError(f"{self.fname} takes {len(self.params)} arguments, got {len(args)}")
        by_name = dict(zip(self.params, args))
        for name, expected in self.static.items():
            if by_name[name] != expected:
                raise ValueError(f"{self.fname}: argument {name!r} was {expected!r} when this code was compiled, "
                                 f"got {by_name[name]!r}; recompile for the new value")
        keep, ptrs, sizes = [], [], {}
        for name, t in self.inputs:
            value = by_name[name]
            if name in self.sized:
                _check_sized(self.fname, name, value, t, self.sized[name], sizes)
            elif t.shape == () and not isinstance(value, np.ndarray):
                if isinstance(value, (bool, str)) or getattr(value, "shape", ()) != ():
                    raise ValueError(f"{self.fname}: argument {name!r} must be a scalar, got {type(value).__name__}")
                value = np.array(value, dtype=t.np_dtype)
            elif type(value) is not np.ndarray or value.shape != t.shape or value.dtype != t.np_dtype:
                raise ValueError(f"{self.fname}: argument {name!r} must be {t.np_dtype} array of shape {t.shape}, "
                                 f"got {type(value).__name__} {getattr(value, 'dtype', '')} "
                                 f"{getattr(value, 'shape', '')}; recompile for other shapes or dtypes")
            value = np.ascontiguousarray(value)
            keep.append(value)
            ptrs.append(value.ctypes.data)
        outs = [np.empty(tuple(d if type(d) is int else sizes[d] if type(d) is str else substitute(d, sizes)
                               for d in shape), o.type.np_dtype)
                for shape, o in zip(self.out_shapes, self.graph.outputs)]
        ptrs += [o.ctypes.data for o in outs]
        work_bytes = self.work_size(*(sizes[s] for s in self.sizes)) if self.sizes else self.work
        if work_bytes == SIZE_MAX:  # the sizes would make the buffer pass 2**62 bytes (see bounds)
            raise too_large(self.fname, {s: sizes[s] for s in self.sizes})
        work = None
        if work_bytes:
            work = self._take_work(work_bytes // 8)
            ptrs.append(work.ctypes.data)
        status = self.fn(*(ctypes.c_long(sizes[s]) for s in self.sizes), *(ctypes.c_void_p(p) for p in ptrs))
        if work is not None:
            self._give_work(work)
        if status:
            limit = self.limits.get(status)
            raise limit.error(self.fname) if limit else ValueError(f"{self.fname} returned status {status}")
        # scalars as the NumPy target and the fast path give them: Python floats for float64, else NumPy scalars
        return [o if o.ndim else float(o[()]) if o.dtype == np.float64 else o[()] for o in outs]


def _check_sized(fname, name, value, t, dims, sizes):
    """Raise a clear ValueError unless ``value`` is an array of type ``t`` whose named sizes are at least 1 and
    agree with ``sizes`` (name -> size, read from the earlier arguments; the new names are added). ``dims``:
    ``t.shape`` with each name as a string. The check is the NumPy target's ``_check_sized``."""
    if not isinstance(value, np.ndarray):  # C reads the array's memory: a NumPy array, not another library's
        raise ValueError(f"{fname}: argument {name!r} must be a NumPy array of dtype {t.np_dtype}, got "
                         f"{type(value).__name__}")
    sizes.update(sized_checker()(fname, name, value, tuple(dims), t.np_dtype, sizes))


def _raiser(errors: dict):
    """What the extension calls when a C function returns a nonzero status: raise its error (``errors``: status ->
    a function making it: the user's exception for a check, else a ``ValueError``)."""
    def overflow(status):
        make = errors.get(status)
        raise make() if make else ValueError(f"status {status}")
    return overflow


def _work_bytes(source, fname):
    """The bytes of work ``fname`` needs: an int, or for a function of named sizes the name of its C function
    ``NAME_work_size`` (the extension's entry points call it: it also says when the sizes are too large).

    >>> _work_bytes("size_t f_work_size(long m, long n)\\n{\\n    (void)m;\\n    return 0;\\n}", "f")
    0
    >>> _work_bytes("size_t f_work_size(long n)\\n{\\n    if (n < 1)\\n        return (size_t)-1;\\n", "f")
    'f_work_size'
    """
    found = re.search(rf"size_t {fname}_work_size\(([^)]*)\)\n{{\n(?:    \(void\)\w+;\n)*    return (\d+);", source)
    if found:
        return int(found.group(2))
    return f"{fname}_work_size"


def call_signature(params, defaults) -> inspect.Signature:
    """The signature of the user's def as the emitted functions keep it: ``params`` positional or keyword, the
    trailing ones with a default (``defaults``: name -> value, see ``api.defaults_left``) keeping it.

    >>> str(call_signature(["x", "s", "n"], {"s": 2.0, "n": 3})), str(call_signature(["x", "s", "n"], {"s": 2.0}))
    ('(x, s=2.0, n=3)', '(x, s, n)')
    """
    kept, trailing = [], True
    for p in reversed(params):  # as the NumPy target: a default before a parameter without one is dropped
        trailing = trailing and p in (defaults or {})
        kept.insert(0, inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                         default=defaults[p] if trailing else inspect.Parameter.empty))
    return inspect.Signature(kept)


class CCompiled:
    """``compile(..., target="c")``: C source and header, and callables shaped like the NumPy target's.

    ``source`` is the C source (``c_source`` is the same text, its older name), ``header`` the
    declarations. ``forward``, ``grad`` and ``value_and_grad`` are the extension module's entry
    points when Python's headers are available (``fast`` is True), else ctypes calls.

    It pickles by its source, graphs and names: unpickling (in any process) loads the shared
    object from the C build cache, building it again when it is not there.
    """

    def __init__(self, graph, wrt_names, wrt_is_tuple, max_trips=None, defaults=None):
        self.name = graph.name
        # calls with keywords or defaults left out go to the slow path (the extension's entry points send them
        # there), which binds them as the user's def does: as the NumPy target's functions take them
        self.signature, self.n_params = call_signature(graph.params, defaults), len(graph.params)
        self.wrt = tuple(wrt_names)
        self.wrt_is_tuple = wrt_is_tuple
        self.max_trips = max_trips
        with stage("gradc.transforms", f"differentiating {self.name} (reverse mode, wrt {', '.join(wrt_names)})"):
            value_and_grad_graph = ad.value_and_grad_graph(graph, wrt_names, name=f"{graph.name}_value_and_grad")
        with stage("gradc.passes", f"optimising {self.name} and its gradient"):
            self.graph = optimize(graph)
            self.value_and_grad_graph = optimize(value_and_grad_graph)
        with stage("gradc.backends.c", f"emitting C for {self.name}") as timer:
            self.source, self.header = emit_sources(self.graph, self.value_and_grad_graph, wrt_names,
                                                    max_trips=max_trips)
            timer.note = f"{self.source.count(chr(10))} lines"
        self._load()

    @property
    def c_source(self) -> str:
        """The C source: the older name of :attr:`source`, kept as an alias."""
        return self.source

    def _load(self) -> None:
        """Build (or find in the cache) and load the shared object; set ``forward``, ``grad``, ``value_and_grad``."""
        max_trips, wrt_is_tuple = self.max_trips, self.wrt_is_tuple
        limits = [loop_limits(g, max_trips) for g in (self.graph, self.value_and_grad_graph)]
        name, grad_name = function_names(self.name)
        work = [_work_bytes(self.source, n) for n in (name, grad_name)]
        n = len(self.wrt)
        grads = tuple(range(1, n + 1)) if wrt_is_tuple else 1
        shown = (self.name, f"{self.name}_grad")  # errors name the user's function, not its C symbol
        raisers = [_raiser({lim.code: functools.partial(lim.error, n) for lim in lims}) if lims else None
                   for n, lims in zip(shown, limits)]
        entries = [("forward", name, self.graph, 0, work[0], raisers[0]),
                   ("grad", grad_name, self.value_and_grad_graph, grads, work[1], raisers[1]),
                   ("value_and_grad", grad_name, self.value_and_grad_graph, (0, grads), work[1], raisers[1])]
        glue = objs = None
        source = self.source
        self.fast = bool(c_pyglue.python_include()) and all(c_pyglue.supported(g) for g in
                                                             (self.graph, self.value_and_grad_graph))
        if self.fast:
            module = "_gradc_" + hashlib.sha256(self.source.encode()).hexdigest()[:16]
            glue, objs = c_pyglue.glue_source(module, entries)
            source += c_pyglue.entry_table(c_pyglue.c_functions(entries)) + "\n"
        self.library_path = build(source, self.name, glue)
        try:
            lib = ctypes.CDLL(self.library_path)
        except OSError as exc:
            raise EmitError(f"could not load the compiled C ({exc})", where="",
                            hint=f"delete {self.library_path} (or the cache {cache_dir()}) and compile again") from None
        self.blas = connect_blas(lib, name)  # where the BLAS of large products comes from (None: gradc's kernels)
        self._forward = _CFunction(lib, name, self.graph, work[0], limits[0], shown[0])
        self._vg = _CFunction(lib, grad_name, self.value_and_grad_graph, work[1], limits[1], shown[1])
        slow = {"forward": self._slow_forward, "grad": self._slow_grad, "value_and_grad": self._slow_value_and_grad}
        if self.fast:
            loader = importlib.machinery.ExtensionFileLoader(module, self.library_path)
            spec = importlib.util.spec_from_file_location(module, self.library_path, loader=loader)
            ext = importlib.util.module_from_spec(spec)
            loader.exec_module(ext)
            items = list(objs.items)
            for i, key in enumerate(objs.keys):
                if isinstance(key, tuple) and key[0] == "fallback":
                    items[i] = slow[key[1]]
            ext.setup(tuple(items))
            self.forward = ext.forward
            self.grad = ext.grad
            self.value_and_grad = ext.value_and_grad
        else:
            self.forward, self.grad, self.value_and_grad = slow["forward"], slow["grad"], slow["value_and_grad"]

    def __reduce__(self) -> tuple:
        # what _load needs; the library, its handles and entry points are made again by the process that loads it
        return _rebuilt, (type(self), {k: getattr(self, k) for k in _PICKLED})

    def _repr_html_(self) -> str:
        return source_html(repr(self)[1:-1], self.source, "c")

    def _grads(self, outs):
        return tuple(outs) if self.wrt_is_tuple else outs[0]

    def _bind(self, args, kwargs) -> tuple:
        if kwargs or len(args) != self.n_params:
            bound = self.signature.bind(*args, **kwargs)  # TypeError as for the user's def
            bound.apply_defaults()
            return bound.args
        return args

    def _slow_forward(self, *args, **kwargs):
        return self._forward(*self._bind(args, kwargs))[0]

    def _slow_grad(self, *args, **kwargs):
        return self._grads(self._vg(*self._bind(args, kwargs))[1:])

    def _slow_value_and_grad(self, *args, **kwargs):
        outs = self._vg(*self._bind(args, kwargs))
        return outs[0], self._grads(outs[1:])

    def __call__(self, *args, **kwargs):
        return self.value_and_grad(*args, **kwargs)

    def __repr__(self):
        return f"<gradc.CCompiled {self.name} wrt {', '.join(self.wrt)}>"


_PICKLED = ("name", "signature", "n_params", "wrt", "wrt_is_tuple", "max_trips", "graph", "value_and_grad_graph",
            "source", "header")


def _rebuilt(cls: type, state: dict) -> CCompiled:
    """A pickled :class:`CCompiled` (or :class:`gradc.backends.c.unit.CUnit`) loaded: its shared object from the
    cache, or built again."""
    obj = object.__new__(cls)  # not __init__: that would trace and emit again
    obj.__dict__.update(state)
    obj._load()
    return obj
