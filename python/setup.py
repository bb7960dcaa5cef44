"""Build and install the shoal Python package offline from Debian's packages.

    python3 -m venv --system-site-packages .venv
    .venv/bin/pip install --no-build-isolation ./python

The extension module is built by the project's CMake (python/CMakeLists.txt,
target shoal_python) in a build directory of its own, configured for the
interpreter running this script, and linked with the static library, so the
installed module needs no libshoal.so at run time; shoal.export and
shoal.view compile the command's writers (cli/export/export_*.c, view_page.c)
and the viewer page in, with SQLite and GEOS where pkg-config finds them. Needs cmake, a C compiler, the library's -dev
packages (README), python3-dev, python3-numpy and cython3. SHOAL_CMAKE_ARGS adds configure arguments (for example
"-DSHOAL_NATIVE=ON" for a module built for this CPU alone)."""
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not os.path.exists(os.path.join(ROOT, "CMakeLists.txt")):
            sys.exit("shoal: build the package from the project's source tree (python/ inside it)")
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        os.makedirs(build, exist_ok=True)
        configure = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                     "-DSHOAL_BUILD_TESTS=OFF", "-DSHOAL_BUILD_TOOLS=OFF", "-DSHOAL_INSTALL=OFF",
                     "-DSHOAL_WITH_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
        configure += shlex.split(os.environ.get("SHOAL_CMAKE_ARGS", ""))
        subprocess.check_call(configure)
        jobs = str(os.cpu_count() or 2)
        subprocess.check_call(["cmake", "--build", build, "--target", "shoal_python", "-j", jobs])
        built = os.path.join(build, "python", "shoal", os.path.basename(self.get_ext_filename(ext.name)))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)
        # the license and the shipped scenarios travel with the installed package
        shutil.copyfile(os.path.join(ROOT, "LICENSE"), os.path.join(os.path.dirname(target), "LICENSE"))
        if os.path.isdir(os.path.join(ROOT, "scenarios")):
            shutil.copytree(os.path.join(ROOT, "scenarios"), os.path.join(os.path.dirname(target), "scenarios"),
                            dirs_exist_ok=True)


setup(
    name="shoal",
    version="0.1.0",
    description="Crowds and fleets of autonomous agents: a data-oriented, multithreaded simulator",
    license="MIT",
    classifiers=["License :: OSI Approved :: MIT License"],
    packages=["shoal"],
    package_dir={"shoal": "shoal"},
    # the compiled module's types (PEP 561)
    package_data={"shoal": ["_shoal.pyi", "py.typed"]},
    ext_modules=[Extension("shoal._shoal", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
)
