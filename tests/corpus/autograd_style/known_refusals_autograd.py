# ruff: noqa: E501 - one refusal a line
"""Cases of the corpus gradc refuses today: ``name/transform`` -> (part of issue 26, what fails[, exception]).

Generated from a run of the corpus and classified by hand; each is a strict xfail (tests fail once fixed).
A third entry names the exception when it is not a gradc error (a defect of its own: no gradc message).
"""

KNOWN: dict[str, tuple] = {
    'builtin_max_pair/grad': ('outside issue 26', 'builtin max() compares traced values: bool() of a traced value'),
    'builtin_max_pair/jvp': ('outside issue 26', 'builtin max() compares traced values: bool() of a traced value'),
    'builtin_max_pair/value_and_grad': ('outside issue 26', 'builtin max() compares traced values: bool() of a traced value'),
    'builtin_max_pair/vjp': ('outside issue 26', 'builtin max() compares traced values: bool() of a traced value'),
}
