"""C identifiers for the user's names: symbols gradc owns, and parameters kept unless C or libc has them.

**Functions** (symbols with linkage): the user's function ``NAME`` is the C symbol ``gradc_fn_NAME``,
its gradient ``gradc_fn_NAME_grad`` (a derivative mode ``M``: ``gradc_fn_NAME_M``), and their work sizes
``gradc_fn_NAME_work_size`` and ``gradc_fn_NAME_grad_work_size`` (``symbol``). No user-chosen name
can then be a symbol gradc did not emit: a function called ``system``, ``printf`` or ``main`` is
``gradc_fn_system``, never libc's (gradc's own helpers are ``static`` and never start with
``gradc_fn_``). ``NAME`` is kept when it is ASCII letters and digits in words joined by single
underscores (and does not end like an escaped one); any other name (``_private``, ``a__b``, ``λ``)
is written as its ASCII words plus ``_h`` and 8 hex digits of the SHA-256 of its UTF-8, so names
differing by case or by ``_`` stay different symbols.

>>> symbol("loss"), symbol("system"), symbol("_loss"), symbol("λ")
('gradc_fn_loss', 'gradc_fn_system', 'gradc_fn_loss_hf97d426e', 'gradc_fn_h6bb5604c')

**Parameters and sizes** (no linkage, but they could shadow what the body calls or be a macro):
a user's name is *plain* when it is an ASCII identifier that no keyword (C99 to
C23, C++), no identifier of the headers the unit includes (``math.h``,
``stddef.h``, ``stdint.h``, ``string.h``, and glibc's extras such as ``j0``),
no name libc or libm exports (``system``, ``rand``: ``libc_names``), no reserved
form (``_x``, ``x__y``, ``x_t``, ``E...``/``INT..._MAX`` macros) and no generated name
(``k``, ``acc``, ``i0``, ``j0``, ``q3``, ``C0``, ``G1``, ``gradc_*``)
can be. Plain names are kept; the others get a trailing ``_`` (``int`` ->
``int_``), then a number, until free. The generated names the ABI adds
(``value``, ``x_bar``) yield to the user's inputs the same way.

>>> assign(["x", "int", "int_", "NULL", "value"])
{'x': 'x', 'int_': 'int_', 'value': 'value', 'int': 'int_1', 'NULL': 'NULL_'}
>>> fresh("value", {"value", "value_"})
'value_1'
"""
from __future__ import annotations

import hashlib
import re

from gradc.backends.c.libc_names import LIBC_NAMES

_KEYWORDS = """auto break case char const continue default do double else enum extern float for goto if inline int
long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
bool true false nullptr alignas alignof constexpr static_assert thread_local typeof typeof_unqual noreturn asm
fortran complex imaginary and and_eq bitand bitor compl not not_eq or or_eq xor xor_eq catch class const_cast
co_await co_return co_yield concept consteval constinit decltype delete dynamic_cast explicit export friend mutable
namespace new noexcept operator private protected public reinterpret_cast requires static_cast template this throw
try typeid typename using virtual wchar_t char8_t char16_t char32_t main unix linux i386""".split()

# math.h functions (each also with an f and an l suffix), glibc's extra ones among them
_MATH = """acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 exp10 expm1 frexp ilogb ldexp
log log10 log1p log2 logb modf scalbn scalbln cbrt fabs hypot pow pow10 sqrt erf erfc lgamma tgamma gamma ceil floor
nearbyint rint lrint llrint round lround llround roundeven trunc fmod remainder remquo copysign nan nextafter
nexttoward nextup nextdown fdim fmax fmin fmaxmag fminmag fma j0 j1 jn y0 y1 yn drem finite significand scalb sincos
isinf isnan canonicalize fromfp ufromfp totalorder getpayload setpayload llogb fadd fsub fmul fdiv fsqrt ffma""".split()

_LIBRARY = """fpclassify isfinite isgreater isgreaterequal isless islessequal islessgreater isnormal isunordered
signbit math_errhandling signgam offsetof errno assert memccpy memchr memcmp memcpy memmove memset memmem mempcpy
strcat strchr strcmp strcoll strcpy strcspn strerror strlen strncat strncmp strncpy strpbrk strrchr strspn strstr
strtok strxfrm strdup strndup strnlen stpcpy bcmp bcopy bzero index rindex ffs strcasecmp strncasecmp NULL
INFINITY NAN HUGE_VAL HUGE_VALF HUGE_VALL DOMAIN SING OVERFLOW UNDERFLOW TLOSS PLOSS""".split()

# names the C emitter generates: loop indices (j<depth>: a program loop's counter), temporaries, statics,
# accumulators, the work argument
_GENERATED = re.compile(r"^((i|j|q|C|G|a)\d+|k|acc|best|aik|work|gradc_\w*)$")
_MACRO_LIKE = re.compile(r"^(E[0-9A-Z]|(FP|M|U?INT[0-9A-Z_]*|PTRDIFF|SIZE|WCHAR|WINT|SIG_ATOMIC|MATH|DBL|FLT|LDBL|"
                         r"DECIMAL|U?CHAR|SCHAR|U?SHRT|U?LONG|U?LLONG)_)")
_TAKEN = frozenset(_KEYWORDS) | frozenset(_LIBRARY) | LIBC_NAMES | frozenset(
    name + suffix for name in _MATH for suffix in ("", "f", "l"))
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


# the prefix of the symbols of the user's functions (see the module's docstring)
SYMBOL_PREFIX = "gradc_fn_"
_WORDS = re.compile(r"^[A-Za-z0-9]+(_[A-Za-z0-9]+)*$")
_HASHED = re.compile(r"(^|_)h[0-9a-f]{8}$")  # what escaped names end with: a name ending so is escaped too


def symbol(name: str) -> str:
    """The C symbol of the user's function ``name``: ``gradc_fn_`` and ``name`` or an escaped form of it.

    >>> symbol("f"), symbol("F"), symbol("a_b"), symbol("a__b") != symbol("a_b"), symbol("main")
    ('gradc_fn_f', 'gradc_fn_F', 'gradc_fn_a_b', True, 'gradc_fn_main')
    """
    if _WORDS.match(name) and not _HASHED.search(name):
        return SYMBOL_PREFIX + name
    words = "_".join(re.findall(r"[A-Za-z0-9]+", name))
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{SYMBOL_PREFIX}{words + '_' if words else ''}h{digest}"


def is_plain(name: str) -> bool:
    """Whether ``name`` can be a C identifier of the unit as it is.

    >>> [is_plain(n) for n in ("x", "W1", "int", "sin", "size_t", "_x", "i0", "a__b", "EDOM", "INT32_MAX")]
    [True, True, False, False, False, False, False, False, False, False]
    """
    return bool(_IDENTIFIER.match(name)) and "__" not in name and not name.endswith("_t") \
        and name not in _TAKEN and not _GENERATED.match(name) and not _MACRO_LIKE.match(name)


def _base(name: str) -> str:
    """An ASCII identifier close to ``name``: other characters as ``_``, no ``__``, no leading ``_`` or digit."""
    text = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", name)).strip("_") or "v"
    return "v" + text if text[0].isdigit() else text


def fresh(preferred: str, taken) -> str:
    """The first of ``preferred``, ``preferred_``, ``preferred_1``, ... that is plain and not in ``taken``.

    >>> fresh("x_bar", {"x_bar"}), fresh("sin", set()), fresh("_t", set()), fresh("gradc_exp", set())
    ('x_bar_', 'sin_', 't', 'v_gradc_exp')
    """
    base = _base(preferred)
    candidates = [base, base + "_"]
    if not is_plain(base + "_1"):  # a reserved prefix (gradc_, E, INT..._): no suffix helps
        candidates.append("v_" + base)
        base = "v_" + base
    n = 1
    while True:
        for name in candidates:
            if name not in taken and is_plain(name):
                return name
        candidates = [f"{base}_{n}"]
        n += 1


def assign(names) -> dict:
    """C identifiers for the user's ``names`` (one scope): plain ones first, kept; the rest renamed, in order."""
    out: dict = {}
    for name in names:
        if is_plain(name) and name not in out:
            out[name] = name
    taken = set(out.values())
    for name in names:
        if name not in out:
            out[name] = fresh(name, taken)
            taken.add(out[name])
    return out
