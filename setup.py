"""The compiled page walks (warcdeboil/page/_walk.c and the files beside it) and the quality
filters' word codes (warcdeboil/corpus/_words.c), built where a C compiler is found.

Everything else is in pyproject.toml. The extensions are optional: without a compiler the build
goes on and warcdeboil takes its Python paths (``warcdeboil clean -v`` says which).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "warcdeboil.page._walk",
            sources=["warcdeboil/page/_walk.c", "warcdeboil/page/walk_tree.c",
                     "warcdeboil/page/walk_text.c", "warcdeboil/page/walk_content.c"],
            depends=["warcdeboil/page/_walk.h"],
            optional=True,
            # its doubles must be Python's to the last bit: no fused multiply-add
            extra_compile_args=["-O2", "-ffp-contract=off"],
        ),
        Extension(
            "warcdeboil.corpus._words",
            sources=["warcdeboil/corpus/_words.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
    ]
)
