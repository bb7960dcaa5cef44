"""The type stub shoal/_shoal.pyi against the compiled module it describes:
the same public names, properties where the module has properties, static
methods where it has them, and each function's parameters (names, order,
keyword-only, which have defaults) as the module's own signatures say
(Cython writes each one as its docstring's first line). Then mypy, where
python3-mypy is installed (CI installs it): its stubtest on the module, and a
type check of a script that uses the package as docs/python.md does."""
import ast
import inspect
import os
import subprocess
import sys
import textwrap
import types

import pytest

import shoal
from shoal import _shoal

STUB = os.path.join(os.path.dirname(_shoal.__file__), "_shoal.pyi")


def _stub():
    with open(STUB) as f:
        return ast.parse(f.read())


def _params(args):
    """(name, kind, has_default) for each parameter of an ast.arguments."""
    out = []
    pos = args.posonlyargs + args.args
    first_default = len(pos) - len(args.defaults)
    for i, a in enumerate(pos):
        out.append((a.arg, "positional", i >= first_default))
    if args.vararg:
        out.append((args.vararg.arg, "*", False))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append((a.arg, "keyword", d is not None))
    if args.kwarg:
        out.append((args.kwarg.arg, "**", False))
    return out


def _runtime_params(obj, name):
    """The parameters of the signature Cython embedded in obj's docstring."""
    doc = (obj.__doc__ or "").lstrip().split("\n", 1)[0]
    head = doc.split("(", 1)
    assert len(head) == 2 and head[0].split(".")[-1] == name, f"{name}: no signature in its docstring: {doc!r}"
    tree = ast.parse(f"def f({head[1].rsplit(')', 1)[0]}): pass")
    return _params(tree.body[0].args)


def _decorators(node):
    return {d.id for d in node.decorator_list if isinstance(d, ast.Name)}


def _public_runtime():
    return {n for n, v in vars(_shoal).items()
            if not n.startswith("_") and not isinstance(v, types.ModuleType)}


def test_stub_names_match_the_module():
    stub = _stub()
    names = set()
    for node in stub.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    names = {n for n in names if not n.startswith("_")}
    assert names == _public_runtime(), (names ^ _public_runtime())
    # the package exports what the stub types
    assert _public_runtime() <= set(shoal.__all__)


def test_stub_functions_match_the_signatures():
    checked = 0
    for node in _stub().body:
        if isinstance(node, ast.FunctionDef):
            assert _params(node.args) == _runtime_params(getattr(_shoal, node.name), node.name), node.name
            checked += 1
    assert checked >= 6


def test_stub_classes_match_the_module():
    checked = 0
    for node in _stub().body:
        if not isinstance(node, ast.ClassDef) or node.name not in ("World", "Recorder"):
            continue
        cls = getattr(_shoal, node.name)
        stub_members = set()
        for item in node.body:
            if isinstance(item, ast.AnnAssign):
                stub_members.add(item.target.id)
                continue
            if not isinstance(item, ast.FunctionDef):
                continue
            stub_members.add(item.name)
            where = f"{node.name}.{item.name}"
            assert hasattr(cls, item.name), f"{where} is in the stub, not in the module"
            static = inspect.getattr_static(cls, item.name)
            decorators = _decorators(item)
            is_property = inspect.isgetsetdescriptor(static) or isinstance(static, property) or \
                inspect.ismemberdescriptor(static)
            assert ("property" in decorators) == is_property, f"{where}: property in one, not the other"
            assert ("staticmethod" in decorators) == isinstance(static, staticmethod), \
                f"{where}: static method in one, not the other"
            if is_property or item.name in ("__len__", "__repr__", "__enter__", "__exit__"):
                continue
            if item.name == "__init__":
                if node.name == "World":  # its signature heads the class's docstring
                    expected = _runtime_params(cls, "World")
                    assert _params(item.args)[1:] == expected, where
                    checked += 1
                continue
            expected = _runtime_params(getattr(cls, item.name), item.name)
            if "staticmethod" not in decorators:
                assert expected[0][0] == "self", where
            assert _params(item.args) == expected, where
            checked += 1
        # every public member of the class is typed
        public = {n for n in dir(cls) if not n.startswith("_")}
        assert public <= stub_members, (node.name, public - stub_members)
    assert checked >= 50, checked


def test_stub_recorder_init(tmp_path):
    # Recorder's parameters come from __cinit__, which has no embedded
    # signature: call it with the stub's names as keywords instead.
    w = shoal.World(threads=1)
    w.add_agents([[0.0, 0.0]])
    with shoal.Recorder(world=w, path=str(tmp_path / "r.rec"), every=2) as r:
        r.step(n=2, dt=None)
        assert r.every == 2 and r.frames == 2


def _mypy():
    try:
        import mypy  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("python3-mypy is not installed (.ci/run installs it)")
        pytest.skip("python3-mypy is not installed: the stub is checked against the module above only")


def _mypy_env(tmp_path):
    config = tmp_path / "mypy.ini"
    # numpy is typed; matplotlib (shoal.plot) is not
    config.write_text("[mypy]\nignore_missing_imports = True\ncache_dir = " + str(tmp_path / "cache") + "\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(_shoal.__file__))
    env["MYPYPATH"] = env["PYTHONPATH"]
    return str(config), env


def test_stubtest(tmp_path):
    _mypy()
    config, env = _mypy_env(tmp_path)
    allow = tmp_path / "allow.txt"
    allow.write_text("shoal._shoal.__test__\n")  # Cython's doctest table
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "--mypy-config-file", config,
                        "--allowlist", str(allow), "shoal._shoal"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_checks_a_user_script(tmp_path):
    _mypy()
    config, env = _mypy_env(tmp_path)
    script = tmp_path / "use.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import shoal

        w = shoal.World(dimensions=2, threads=0, seed=3)
        ids = w.add_agents(np.zeros((4, 2)), behaviors={"seek": 1}, crowd="pedestrian")
        w.step(10)
        xy = w.positions
        n: int = w.agent_count + len(ids)
        h: int = w.state_hash
        goal: int = w.add_nav_goal(point=(1.0, 2.0))
        t: shoal.World = shoal.World.from_scenario("tiny.json")
        pop = shoal.population(10, {"shape": "circle", "radius": 5.0}, seed=1)
        rec = shoal.read_recording("x.rec")
        with w.record("x.rec", every=2) as r:
            r.step(4)
        page: str = shoal.view("x.rec")
        names = shoal.scenarios()
        """))
    bad = tmp_path / "bad.py"
    bad.write_text("import shoal\nw = shoal.World()\nw.step('ten')\nh: str = w.state_hash\n")
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", config, str(script)],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    # and the stub is strict enough to catch misuse
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", config, str(bad)],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 1 and r.stdout.count("error:") == 2, r.stdout + r.stderr


def test_mypy_checks_the_package(tmp_path):
    # the package's own annotations agree with the stub
    _mypy()
    config, env = _mypy_env(tmp_path)
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", config, "-p", "shoal"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
