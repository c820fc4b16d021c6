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
    'default_array_param/jvp': ('idioms-api', 'jvp asks a tangent for a parameter left at its default'),
    'default_function_param/grad': ('idioms-api', 'a parameter whose default is a function (np.tanh) is taken for an argument'),
    'default_function_param/jvp': ('idioms-api', 'a parameter whose default is a function (np.tanh) is taken for an argument'),
    'default_function_param/value_and_grad': ('idioms-api', 'a parameter whose default is a function (np.tanh) is taken for an argument'),
    'default_function_param/vjp': ('idioms-api', 'a parameter whose default is a function (np.tanh) is taken for an argument'),
    'fabs_array/jvp': ('missing function, not issue 26', 'np.fabs is not supported by gradc'),
    'fabs_array/vjp': ('missing function, not issue 26', 'np.fabs is not supported by gradc'),
    'fabs_sum/grad': ('missing function, not issue 26', 'np.fabs is not supported by gradc'),
    'fabs_sum/hessian': ('missing function, not issue 26', 'np.fabs is not supported by gradc'),
    'fabs_sum/jvp': ('missing function, not issue 26', 'np.fabs is not supported by gradc'),
    'fabs_sum/value_and_grad': ('missing function, not issue 26', 'np.fabs is not supported by gradc'),
    'fabs_sum/vjp': ('missing function, not issue 26', 'np.fabs is not supported by gradc'),
    'index_real/jvp': ('missing function, not issue 26', 'np.real is not supported by gradc'),
    'index_real/vjp': ('missing function, not issue 26', 'np.real is not supported by gradc'),
    'nested_closure_outer/grad': ('idioms-api', "a nested grad closing over the outer traced value ('a value computed inside a traced loop or branch')"),
    'nested_closure_outer/jvp': ('idioms-api', "a nested grad closing over the outer traced value ('a value computed inside a traced loop or branch')"),
    'nested_closure_outer/value_and_grad': ('idioms-api', "a nested grad closing over the outer traced value ('a value computed inside a traced loop or branch')"),
    'nested_closure_outer/vjp': ('idioms-api', "a nested grad closing over the outer traced value ('a value computed inside a traced loop or branch')"),
    'nested_perturbation_confusion/grad': ('idioms-api', "a nested grad closing over the outer traced value ('a value computed inside a traced loop or branch')"),
    'nested_perturbation_confusion/jvp': ('idioms-api', "a nested grad closing over the outer traced value ('a value computed inside a traced loop or branch')"),
    'nested_perturbation_confusion/value_and_grad': ('idioms-api', "a nested grad closing over the outer traced value ('a value computed inside a traced loop or branch')"),
    'nested_perturbation_confusion/vjp': ('idioms-api', "a nested grad closing over the outer traced value ('a value computed inside a traced loop or branch')"),
    'numpy_function_direct/grad': ('idioms-api', 'np.sum given directly: its keepdims default (<no value>) is taken for an argument'),
    'numpy_function_direct/jvp': ('idioms-api', 'np.sum given directly: its keepdims default (<no value>) is taken for an argument'),
    'numpy_function_direct/value_and_grad': ('idioms-api', 'np.sum given directly: its keepdims default (<no value>) is taken for an argument'),
    'numpy_function_direct/vjp': ('idioms-api', 'np.sum given directly: its keepdims default (<no value>) is taken for an argument'),
    'partial_keywords/jvp': ('idioms-api', 'jvp asks a tangent for a functools.partial keyword'),
    'partial_positional/jvp': ('idioms-api', "functools.partial(np.multiply, 3.0): a TypeError from inside gradc ('cannot specify both signature and dtype')"),
    'partial_positional/vjp': ('idioms-api', "functools.partial(np.multiply, 3.0): a TypeError from inside gradc ('cannot specify both signature and dtype')"),
}
