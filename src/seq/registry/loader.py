"""Load a registered class from its reference: a module path (built-ins) or a stored file."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import linecache
import os
import sys
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from seq.errors import SeqInputError

_importing: list[Path] = []  # user files being imported right now (innermost last)

# Policy objects evaluated in the process that holds them (`seq.evaluate`); dropped with the caller's.
IN_MEMORY: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def importing_user_file() -> Path | None:
    """The user file whose top-level code is running now, if any."""
    return _importing[-1] if _importing else None


def module_name_for(sha256: str) -> str:
    return f"seq_user_{sha256[:16]}"


def import_file(
    path: Path, module_name: str, search_dir: str | None = None, shown_as: str | None = None
) -> Any:
    """Import a Python file as `module_name`; `search_dir` (the file's original folder) goes on
    `sys.path` so the file can import its neighbours. `shown_as` (the user's own file, of which
    `path` is the copy kept by hash) is the file its tracebacks name, with the lines of this copy."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    if search_dir and search_dir not in sys.path:
        sys.path.insert(0, search_dir)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise SeqInputError(f"{path}: cannot be imported as a Python module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    _importing.append(path)
    try:
        with _exits_refused():
            if shown_as is None:
                spec.loader.exec_module(module)
            else:
                source = path.read_text()
                exec(compile(source, _shown_name(shown_as, source), "exec"), module.__dict__)
    except (SystemExit, _ExitCalled) as exit_:
        del sys.modules[module_name]
        how = "os._exit" if isinstance(exit_, _ExitCalled) else "sys.exit"
        raise ExitsOnImport(
            f"{shown_as or path}: it exits when imported ({how}({exit_.code!r})); seq imports a "
            'deployed file to find its classes, so put that call under `if __name__ == "__main__":`.'
        ) from None
    except BaseException:
        del sys.modules[module_name]
        raise
    finally:
        _importing.pop()
    return module


class ExitsOnImport(SeqInputError):
    """A user file that ends the process when imported (`sys.exit`, `os._exit`)."""


class _ExitCalled(Exception):
    def __init__(self, code: Any) -> None:
        super().__init__(code)
        self.code = code


@contextmanager
def _exits_refused() -> Iterator[None]:
    """While a user file's top-level code runs in this thread, `os._exit` raises instead of ending
    the process (other threads keep the real one)."""
    real, importer, importing = os._exit, threading.get_ident(), [True]

    def refused(status: int) -> NoReturn:
        if not importing[0] or threading.get_ident() != importer:  # kept by `from os import _exit`
            real(status)
        raise _ExitCalled(status)

    os._exit = refused
    try:
        yield
    finally:
        importing[0] = False
        os._exit = real


def check_syntax(path: Path, data: bytes) -> None:
    """Refuse a file that is not Python, naming it and the line."""
    try:
        compile(data, str(path), "exec")
    except SyntaxError as error:
        raise SeqInputError(f"{path}:{error.lineno}: syntax error: {error.msg}.") from None


def import_user_file(path: Path, data: bytes, runs: Path, module_name: str) -> Any:
    """Import the user's file `path` (its bytes `data`, run from `runs`: the file itself or the copy
    kept by hash); one that does not import is refused in one sentence naming the file: a syntax
    error with its line, or what its top-level code raised."""
    check_syntax(path, data)
    try:
        return import_file(runs, module_name, str(path.parent.resolve()), str(path.resolve()))
    except ExitsOnImport:
        raise
    except SeqInputError as error:
        raise SeqInputError(f"{path}: {error}") from None
    except Exception as error:  # the user's module failed at import: say what, without a traceback
        raise SeqInputError(f"{path}: importing it raised {type(error).__name__}: {error}") from None


def _shown_name(shown_as: str, source: str) -> str:
    """The file name a module's code carries: the user's file, its lines those of the copy that
    runs (kept in `linecache`, so a traceback shows the code that ran even after the file changed).
    Where another version of that file is loaded in this process already, the name says which."""
    lines = source.splitlines(keepends=True)
    name = shown_as
    held = linecache.cache.get(name)
    if held is not None and len(held) == 4 and held[1] is None and held[2] != lines:
        name = f"{shown_as} (as deployed, sha256 {_sha(source)[:12]})"
    linecache.cache[name] = (len(source), None, lines, name)  # mtime None: never reread from disk
    return name


def _sha(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def user_file(ref: dict[str, Any]) -> str | None:
    """The user's own file a version was deployed from (its absolute path), where the ref says."""
    if "file" not in ref or "origin_dir" not in ref:
        return None
    return str(Path(ref["origin_dir"]) / Path(ref["file"]).name)


def load_class(ref: dict[str, Any], label: str | None = None) -> type:
    """The class a version's `ref` points to: `{module, qualname}` or `{path, sha256, qualname}`;
    `label` (`kind NAME@vN`) names the version where its kept code is gone or changed."""
    if "in_memory" in ref:
        if not ref["in_memory"] or ref["in_memory"] not in IN_MEMORY:
            raise SeqInputError(
                f"{ref['qualname']} was evaluated from the memory of another process; only that process "
                "can run it (an eval of an in-memory policy cannot be resumed elsewhere)."
            )
        return type(IN_MEMORY[ref["in_memory"]])
    if "module" in ref:
        module = importlib.import_module(ref["module"])
    else:
        path = _kept_code(ref, label or ref["qualname"])
        module = import_file(path, module_name_for(ref["sha256"]), ref.get("origin_dir"), user_file(ref))
    target: Any = module
    for part in ref["qualname"].split("."):
        target = getattr(target, part)
    return target


def _kept_code(ref: dict[str, Any], label: str) -> Path:
    """The file holding a version's code: where the ref says, else (a record merged from another
    workspace) the copy kept here by hash; it must hold what was deployed. Else one sentence naming
    the version and how to keep its code again."""
    from seq.record.paths import seq_home

    kept = seq_home() / "code" / f"{ref['sha256']}.py"
    problem = f"its code {kept} is gone"
    for path in dict.fromkeys([Path(ref["path"]), kept]):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as error:
            problem = f"its code {path} cannot be read ({error.strerror})"
            continue
        if hashlib.sha256(data).hexdigest() == ref["sha256"]:
            return path
        problem = f"its code {path} is not what was deployed (its sha256 differs)"
    again = user_file(ref) or "its file"
    raise SeqInputError(f"{label}: {problem}; run `seq deploy {again}` to keep it again.")
