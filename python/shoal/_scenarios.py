"""The scenario files shipped with the package (the project's scenarios/,
copied beside the module when it is built or installed)."""
import difflib
import os
from typing import List

_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")


def scenarios() -> List[str]:
    """The names of the shipped scenario files, sorted ("default.json",
    "tiny.json", ...): World.from_scenario takes any of them by name."""
    try:
        return sorted(f for f in os.listdir(_DIR) if f.endswith(".json"))
    except OSError:
        return []


def scenario_path(name: str) -> str:
    """The path of the shipped scenario `name` ("tiny" or "tiny.json", also
    as "scenarios/tiny.json"). FileNotFoundError names the shipped ones, and
    the nearest when the name is close to one."""
    base = os.path.basename(os.fspath(name))
    if not base.endswith(".json"):
        base += ".json"
    path = os.path.join(_DIR, base)
    if os.path.isfile(path):
        return path
    names = scenarios()
    near = difflib.get_close_matches(base, names, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise FileNotFoundError(f"no scenario file {os.fspath(name)!r}, and none of that name is shipped "
                            f"with shoal (shoal.scenarios(): {', '.join(names) or 'none'}){hint}")
