"""The compiled walks of pass 1 (warcdeboil/page/_walk.c), built where a C compiler is found.

Everything else is in pyproject.toml. The extension is optional: without a compiler the build
goes on and warcdeboil takes its Python path (``warcdeboil --version -v`` says which).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "warcdeboil.page._walk",
            sources=["warcdeboil/page/_walk.c"],
            optional=True,
            # its doubles must be Python's to the last bit: no fused multiply-add
            extra_compile_args=["-O2", "-ffp-contract=off"],
        )
    ]
)
