"""``TorchVersion``: ``ember.__version__`` compares as a version with strings, tuples and ``Version`` objects
(``torch.__version__ >= "2.2"``, ``>= (2, 2)``), as torch's does, while staying a ``str``."""
from __future__ import annotations

import re

from .version import __version__ as internal_version

__all__ = ["TorchVersion", "__version__"]

# PEP 440's grammar (https://peps.python.org/pep-0440/), without the leading/trailing whitespace
_PEP440 = re.compile(r"""v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d+)?)?
    (?:-(?P<post_implicit>\d+)|[-_.]?(?P<post>post|rev|r)[-_.]?(?P<post_n>\d+)?)?
    (?:[-_.]?(?P<dev>dev)[-_.]?(?P<dev_n>\d+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?""", re.VERBOSE | re.IGNORECASE)
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc", "rc": "rc"}
_LOW, _HIGH = (-1,), (1 << 62,)  # before / after every real segment


class InvalidVersion(ValueError):
    """Not a PEP 440 version."""


def _key(text: str) -> tuple:
    """A sort key ordering versions as PEP 440 (and the ``packaging`` library) does."""
    m = _PEP440.fullmatch(text.strip())
    if m is None:
        raise InvalidVersion(f"Invalid version: {text!r}")
    release = [int(x) for x in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    pre = (_PRE[m["pre"].lower()], int(m["pre_n"] or 0)) if m["pre"] else None
    post = int(m["post_implicit"] or m["post_n"] or 0) if (m["post_implicit"] or m["post"]) else None
    dev = int(m["dev_n"] or 0) if m["dev"] else None
    if pre is None and post is None and dev is not None:
        pre_key = _LOW  # 1.0.dev0 < 1.0a0
    else:
        pre_key = _HIGH if pre is None else (0, pre[0], pre[1])
    local = () if m["local"] is None else tuple(
        (1, int(s), "") if s.isdigit() else (0, 0, s.lower()) for s in re.split(r"[-_.]", m["local"]))
    return (int(m["epoch"] or 0), tuple(release), pre_key, _LOW if post is None else (post,),
            _HIGH if dev is None else (dev,), (0,) if not local else (1, local))


def _other_key(other) -> tuple:
    if isinstance(other, str):
        return _key(other)
    if isinstance(other, (tuple, list)):
        return _key(".".join(str(v) for v in other))
    if hasattr(other, "release") and hasattr(other, "local"):  # a packaging.version.Version
        return _key(str(other))
    raise InvalidVersion(other)


class TorchVersion(str):
    """A ``str`` that compares to strings, tuples ((2, 2) is 2.2) and ``Version`` objects as versions; a value
    that is no version compares as a string, as torch's."""

    __slots__ = ()

    def _cmp(self, other, op: str):
        try:
            mine, theirs = _key(self), _other_key(other)
        except InvalidVersion:
            return getattr(str, op)(self, other)
        return getattr(tuple, op)(mine, theirs)

    def __lt__(self, other):
        return self._cmp(other, "__lt__")

    def __le__(self, other):
        return self._cmp(other, "__le__")

    def __gt__(self, other):
        return self._cmp(other, "__gt__")

    def __ge__(self, other):
        return self._cmp(other, "__ge__")

    def __eq__(self, other):
        return self._cmp(other, "__eq__")

    __hash__ = str.__hash__


__version__ = TorchVersion(internal_version)
