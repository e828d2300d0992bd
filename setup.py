"""The repository root is the package `minimlc`: every folder with an `__init__.py` (outside tests, benchmarks,
examples and docs) is installed as `minimlc.<folder>`, so a new room needs no line here."""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

NOT_INSTALLED = ["tests", "tests.*", "bench", "bench.*", "examples", "examples.*", "docs", "docs.*", "build", "build.*"]


class BuildPackages(build_py):
    """The root's modules are the package's, except this script."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        modules = super().find_package_modules(package, package_dir)
        return [module for module in modules if (module[0], module[1]) != ("minimlc", "setup")]


setup(
    packages=["minimlc", *(f"minimlc.{name}" for name in find_packages(exclude=NOT_INSTALLED))],
    package_dir={"minimlc": "."},
    package_data={"minimlc.runtime": ["c/*.c", "c/*.h"], "minimlc.tools": ["conformance_expected_failures.txt"]},
    cmdclass={"build_py": BuildPackages},
)
