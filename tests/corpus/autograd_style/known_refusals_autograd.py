# ruff: noqa: E501 - one refusal a line
"""Cases of the corpus gradc refuses today: ``name/transform`` -> (part of issue 26, what fails[, exception]).

Generated from a run of the corpus and classified by hand; each is a strict xfail (tests fail once fixed).
A third entry names the exception when it is not a gradc error (a defect of its own: no gradc message).
"""

KNOWN: dict[str, tuple] = {
}
