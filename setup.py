"""Build the optional C scanner of TREC runs (gainscope._scan); everything else is in pyproject.toml.

The extension is optional: where no C compiler exists the package installs without it and reads runs with
the polars readers (same results, slower). ``GAINSCOPE_REQUIRE_NATIVE=1`` makes a failed build an error.
"""

import os

from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "gainscope._scan", ["src/gainscope/_scan.c"],
    extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                        "-Wno-cast-function-type", "-Wno-unused-parameter"],
    optional=os.environ.get("GAINSCOPE_REQUIRE_NATIVE") != "1",
)])
