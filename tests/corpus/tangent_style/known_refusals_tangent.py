# ruff: noqa: E501 - one refusal a line
"""Cases of the corpus gradc refuses today: ``name/transform`` -> (part of issue 26, what fails[, exception]).

Generated from a run of the corpus and classified by hand; each is a strict xfail (tests fail once fixed).
A third entry names the exception when it is not a gradc error (a defect of its own: no gradc message).
"""

KNOWN: dict[str, tuple] = {
    'while_traced_collect_0/grad': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_0/jvp': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_0/value_and_grad': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_0/vjp': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_1/grad': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_1/jvp': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_1/value_and_grad': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
    'while_traced_collect_1/vjp': ('lists', 'a list appended in a `while` on traced values (a data-dependent number of items; the error is clear)'),
}
