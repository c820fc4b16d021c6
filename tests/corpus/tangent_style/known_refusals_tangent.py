# ruff: noqa: E501 - one refusal a line
"""Cases of the corpus gradc refuses today: ``name/transform`` -> (part of issue 26, what fails[, exception]).

Generated from a run of the corpus and classified by hand; each is a strict xfail (tests fail once fixed).
A third entry names the exception when it is not a gradc error (a defect of its own: no gradc message).
"""

KNOWN: dict[str, tuple] = {
    'augmented_0/grad': ('inplace', '`b = a; b += a` with a Python float input is refused as changing the input in place (a float cannot change)'),
    'augmented_0/hessian': ('inplace', '`b = a; b += a` with a Python float input is refused as changing the input in place (a float cannot change)'),
    'augmented_0/jvp': ('inplace', '`b = a; b += a` with a Python float input is refused as changing the input in place (a float cannot change)'),
    'augmented_0/value_and_grad': ('inplace', '`b = a; b += a` with a Python float input is refused as changing the input in place (a float cannot change)'),
    'augmented_0/vjp': ('inplace', '`b = a; b += a` with a Python float input is refused as changing the input in place (a float cannot change)'),
    'fill_method_helper/grad': ('calls', "an array filled in a loop in a method: NumPy's own ValueError ('setting an array element with a sequence'), no gradc message", ValueError),
    'fill_method_helper/hessian': ('calls', "an array filled in a loop in a method: NumPy's own ValueError ('setting an array element with a sequence'), no gradc message", ValueError),
    'fill_method_helper/jvp': ('calls', "an array filled in a loop in a method: NumPy's own ValueError ('setting an array element with a sequence'), no gradc message", ValueError),
    'fill_method_helper/value_and_grad': ('calls', "an array filled in a loop in a method: NumPy's own ValueError ('setting an array element with a sequence'), no gradc message", ValueError),
    'fill_method_helper/vjp': ('calls', "an array filled in a loop in a method: NumPy's own ValueError ('setting an array element with a sequence'), no gradc message", ValueError),
    'while_traced_collect_0/grad': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_0/jvp': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_0/value_and_grad': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_0/vjp': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_1/grad': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_1/jvp': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_1/value_and_grad': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_1/vjp': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
}
