"""``gradc`` is the compiler's namespace (issue 23, item 5): ``__all__`` holds only the compiler's
API, every name in it documents itself (a real signature, type annotations, a docstring with an
example), and a torch-style name asked of ``gradc`` says where it went (``gradc.torch``).
"""
import inspect
import os
import pathlib
import pydoc
import subprocess
import sys

import pytest

import gradc
import gradc.torch

ROOT = pathlib.Path(__file__).resolve().parents[1]

CORE = {
    "grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "jacobian", "hessian", "hvp",
    "custom_jvp", "custom_vjp", "checkpoint", "stop_gradient",
    "compile", "check", "trace", "spec", "Compiled", "Graph",
    "cond", "fori_loop", "while_loop", "scan", "binomial",
    "GradcError", "ArgumentError", "CheckError", "EmitError", "EnvironmentProblem", "MissingRuleError",
    "ShapeError", "StaleStateError", "TraceError", "WriteError", "GradcWarning",
}
COMPILER_API = CORE | {"tree_util", "vmap", "jit", "symbolic"}  # the pytree module, the NumPy vmap/jit and the
# symbolic view (gradc.symbolic(f, *args): the derivative as SymPy and LaTeX) join gradc too
CATCH_ALL = {"args", "kwargs"}  # ``(f=None, *args, **kwargs)`` says nothing of what a function takes


def _functions_of(name):
    """The object and the Python functions whose signature ``help(gradc.<name>)`` shows: the function itself,
    or the constructor a class defines or inherits (none for a class on a builtin's, such as a Warning)."""
    obj = getattr(gradc, name)
    if not inspect.isclass(obj):
        return obj, [obj]
    init = next(vars(c)["__init__"] for c in obj.__mro__ if "__init__" in vars(c))
    return obj, [init] if inspect.isfunction(init) else []


def test_all_holds_the_compilers_names_only():
    names = set(gradc.__all__)
    assert len(gradc.__all__) == len(names), "a name listed twice"
    assert CORE <= names, sorted(CORE - names)
    assert names <= COMPILER_API, sorted(names - COMPILER_API)
    assert len(gradc.__all__) <= 45  # short enough to read
    # nothing of the facade's (torch.compile, torch.vmap and torch.trace, the matrix trace, share a name with it)
    assert not names & set(gradc.torch.__all__) - {"compile", "vmap", "trace"}


def test_star_import_gives_the_compilers_names_and_no_torch():
    namespace = {}
    exec("from gradc import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(gradc.__all__)
    assert "torch" not in namespace and "dask" not in namespace and "tensor" not in namespace


@pytest.mark.parametrize("name", sorted(set(gradc.__all__)))
def test_every_exported_name_has_a_signature_annotations_and_an_example(name):
    obj, functions = _functions_of(name)
    if inspect.ismodule(obj):  # gradc.tree_util: documented by its module docstring
        assert ">>>" in (obj.__doc__ or ""), f"gradc.{name}'s docstring has no example"
        return
    assert ">>>" in (inspect.getdoc(obj) or ""), f"gradc.{name}'s docstring has no example"
    if inspect.isclass(obj) and not functions:
        assert issubclass(obj, Warning), f"gradc.{name}: a class on a builtin constructor"
        return  # Warning's own constructor: warnings.warn(message, gradc.GradcWarning)
    signature = inspect.signature(obj)  # a class: its constructor's, as help() shows
    params = [p for p in signature.parameters.values() if p.name not in ("self", "cls")]
    variadic = {p.name for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    assert not variadic & CATCH_ALL, f"gradc.{name}{signature}: name what *args/**kwargs stand for"
    for fn in functions:
        fn = inspect.unwrap(fn)
        annotations = fn.__annotations__
        missing = [p for p in inspect.signature(fn).parameters if p not in ("self", "cls") and p not in annotations]
        assert not missing, f"gradc.{name}: parameters without a type annotation: {missing}"
        if not inspect.isclass(obj):
            assert "return" in annotations, f"gradc.{name} has no return annotation"


def test_help_of_compile_shows_the_compilers_parameters():
    assert gradc.compile is gradc.api.compile
    text = pydoc.render_doc(gradc.compile, renderer=pydoc.plaintext)
    for parameter in ("example_args", "target", "mode", "checkpoint", "max_trips"):
        assert parameter in text, parameter
    assert "fullgraph" not in text  # torch.compile's, at gradc.torch.compile
    assert "fullgraph" in inspect.signature(gradc.torch.compile).parameters


# every torch-style name gradc used to export, and a generator's worth: all of the facade's top-level names
# (less the compiler's own subpackages: gradc.backends holds its targets, gradc.torch.backends is torch's)
FACADE_NAMES = sorted(n for n in set(gradc.torch.__all__) - set(gradc.__all__) - {"vmap", "jit", "tree_util"}
                      if not (ROOT / "gradc" / n).exists())


@pytest.mark.parametrize("name", FACADE_NAMES)
def test_a_torch_style_name_asked_of_gradc_names_gradc_torch(name):
    with pytest.raises(AttributeError) as info:
        getattr(gradc, name)
    assert str(info.value).startswith(f"gradc.{name} is the Tensor facade's: import gradc.torch as torch"), info.value
    assert hasattr(gradc.torch, name)


def test_the_facades_names_are_all_asked():
    assert {"tensor", "Tensor", "nn", "optim", "autograd", "no_grad", "manual_seed", "float32", "utils", "func",
            "save", "load", "cuda", "accelerator"} <= set(FACADE_NAMES)


def test_vmap_is_not_the_facades():
    # the compiler's vmap (NumPy code) joins gradc separately; the facade's stays at gradc.torch.vmap / torch.func
    assert getattr(gradc, "vmap", None) is not gradc.torch.vmap
    assert gradc.torch.vmap is gradc.torch.func.vmap


def test_unknown_names_are_plain_attribute_errors():
    with pytest.raises(AttributeError, match="module 'gradc' has no attribute 'no_such_name'"):
        gradc.no_such_name  # noqa: B018
    assert not hasattr(gradc, "_private_probe") and not hasattr(gradc, "__wrapped__")


def _run(code):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


def test_import_gradc_loads_neither_the_facade_nor_dask():
    proc = _run("import sys, gradc\nloaded = [m for m in sys.modules if m.split('.')[:2] in "
                "(['gradc', 'facade'], ['gradc', 'torch'], ['gradc', 'dask']) or m == 'dask']\n"
                "assert not loaded, loaded\nassert gradc.torch.tensor([1.0]).tolist() == [1.0]\n"
                "assert 'gradc.facade' in sys.modules")
    assert proc.returncode == 0, proc.stderr


def test_old_spelling_fails_at_the_first_torch_name_with_the_fix():
    proc = _run("import gradc as torch\nx = torch.tensor([1.0])")
    assert proc.returncode == 1
    assert "AttributeError: gradc.tensor is the Tensor facade's: import gradc.torch as torch" in proc.stderr


@pytest.mark.parametrize("code, fix", [
    ("import gradc.nn.functional as F", "import gradc.torch.nn"),
    ("from gradc.nn import Linear", "import gradc.torch.nn"),
    ("from gradc.autograd.functional import vjp", "import gradc.torch.autograd"),
    ("import gradc.utils.data", "import gradc.torch.utils"),
    ("from gradc.optim import SGD", "import gradc.torch.optim"),
    ("import gradc.backends.mps", "import gradc.torch.backends.mps"),
    ("import sys, gradc\nsys.modules['torch'] = gradc\nimport torch.nn", 'sys.modules["torch"] = gradc.torch'),
])
def test_old_import_paths_fail_with_the_fix(code, fix):
    proc = _run(code)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: No module named ") and "under gradc.torch" in last, last
    assert last.endswith(fix) or fix + " " in last, last


@pytest.mark.parametrize("code", ["import gradc.nnx", "import gradc.backends.nonexistent", "import gradc.torchy"])
def test_other_missing_modules_keep_pythons_message(code):
    proc = _run(code)
    assert proc.returncode == 1 and "under gradc.torch" not in proc.stderr, proc.stderr
