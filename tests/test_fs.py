"""ore._fs, the one place files are read, confined to a root, and written: the spec, in order.

1. `os_error_words`: the OS's words, verbatim.
2. `atomic_write`: old content or new, never half; exact modes, or an existing file's kept;
   FIFOs, devices and /proc descriptors written through, never replaced; only this process's
   own temp files ever removed.
3. `open_regular` / `read_regular`: regular files only, and a FIFO or device never blocks.
4. `resolve_inside` / `open_inside`: nothing outside the root, even against a racing swap.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _swap import exchanger

from ore import _fs
from ore._fs import (
    NotRegularFile,
    OutsideRoot,
    atomic_write,
    beneath,
    list_names,
    open_below,
    open_inside,
    open_regular,
    os_error_words,
    read_regular,
    resolve_inside,
    writes_through,
)


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def in_thread(work: Callable[[], object], timeout: float = 10.0) -> object:
    """Run `work` in a daemon thread; fail (instead of hanging the suite) if it blocks."""
    box: list[object] = []

    def run() -> None:
        try:
            box.append(work())
        except BaseException as exc:
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"blocked for more than {timeout}s"
    return box[0]


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


# -- 1. words ------------------------------------------------------------------------------------


def test_os_error_words_quote_the_system_verbatim_else_the_text_else_the_type() -> None:
    assert os_error_words(PermissionError(13, "Permission denied", "f")) == "Permission denied"
    assert os_error_words(OSError("plain text")) == "plain text"
    assert os_error_words(RuntimeError()) == "RuntimeError"
    assert os_error_words(NotRegularFile("f", stat.S_IFIFO)) == ("is not a regular file (a FIFO)")


# -- 2. atomic_write -----------------------------------------------------------------------------


def test_atomic_write_replaces_the_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b"old")
    atomic_write(path, b"new")
    assert path.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["out.json"]


def test_atomic_write_gives_exactly_the_mode_asked_whatever_the_umask(
    tmp_path: Path, umask: Callable[[int], None]
) -> None:
    for mask in (0o000, 0o022, 0o077):
        umask(mask)
        path = tmp_path / f"private-{mask:o}"
        atomic_write(path, b"secret")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        atomic_write(path, b"secret", mode=0o640)
        assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_atomic_write_with_mode_none_gives_normal_permissions(
    tmp_path: Path, umask: Callable[[int], None]
) -> None:
    for mask in (0o022, 0o027):
        umask(mask)
        path = tmp_path / f"normal-{mask:o}"
        atomic_write(path, b"x", mode=None)
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask


@pytest.mark.parametrize("fail_in", ["write", "fsync", "replace"])
def test_a_failed_write_keeps_the_old_content_and_removes_its_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_in: str
) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"old")

    def broken(*args: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, fail_in, broken)
    with pytest.raises(OSError, match="Input/output error"):
        atomic_write(path, b"new")
    monkeypatch.undo()
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out"]


def test_an_interrupted_write_removes_its_temp_file_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"old")

    def interrupt(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, b"new")
    monkeypatch.undo()
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["out"]


def test_a_folder_that_refuses_fsync_does_not_fail_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def no_dir_fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "Invalid argument")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", no_dir_fsync)
    atomic_write(tmp_path / "out", b"new")
    assert (tmp_path / "out").read_bytes() == b"new"


WRITER = """
import sys
from ore._fs import atomic_write
path, size = sys.argv[1], int(sys.argv[2])
print("ready", flush=True)
i = 0
while True:
    i += 1
    atomic_write(path, bytes([i % 251]) * size)
"""


def test_a_writer_killed_mid_write_leaves_old_or_new_content_never_half(tmp_path: Path) -> None:
    path, size = tmp_path / "data", 256 * 1024
    atomic_write(path, b"\xff" * size)
    for round_ in range(12):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(size)], stdout=subprocess.PIPE
        )
        assert writer.stdout is not None and writer.stdout.readline() == b"ready\n"
        time.sleep(0.005 * (round_ % 6))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        data = path.read_bytes()
        assert len(data) == size and data == data[:1] * size, f"half a file in round {round_}"
    left = temps(tmp_path)  # a killed writer's temp file stays: no other process owns it
    atomic_write(path, b"done")
    assert path.read_bytes() == b"done" and temps(tmp_path) == left
    assert all(f".{os.getpid()}." not in name for name in left)


def test_a_directory_at_the_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        atomic_write(tmp_path, b"x")


def _reader(fifo: Path, size: int) -> tuple[threading.Thread, list[bytes]]:
    """A reader holding `fifo` open (so a writer finds it), reading `size` bytes in a thread.

    Until a writer opens the FIFO a read says end-of-file at once: keep reading till `size`.
    """
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO read end opens without a writer
    os.set_blocking(fd, True)
    got: list[bytes] = []

    def read() -> None:
        chunks, deadline = [], time.monotonic() + 10
        while sum(map(len, chunks)) < size and time.monotonic() < deadline:
            chunk = os.read(fd, 1 << 16)
            chunks.append(chunk)
            if not chunk:
                time.sleep(0.001)
        os.close(fd)
        got.append(b"".join(chunks))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, got


@pytest.mark.invariant
def test_a_fifo_at_the_path_is_written_through_never_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    data = os.urandom(300 * 1024)  # more than a pipe holds: the writer must block and resume
    thread, got = _reader(fifo, len(data))
    assert writes_through(fifo)
    in_thread(lambda: atomic_write(fifo, data))
    thread.join(10)
    assert got == [data]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == ["out"]


def test_a_fifo_nobody_reads_is_enxio_at_once_and_left_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    error = in_thread(lambda: atomic_write(fifo, b"x"))
    assert isinstance(error, OSError) and error.errno == errno.ENXIO
    assert "no process is reading" in os_error_words(error)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == ["out"]


@pytest.mark.invariant
def test_a_device_at_the_path_is_written_through_never_replaced(tmp_path: Path) -> None:
    link = tmp_path / "null"  # like /dev/stdout: a symlink that resolves to a device
    link.symlink_to(os.devnull)
    atomic_write(link, b"into the void")
    assert link.is_symlink() and os.readlink(link) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    node = tmp_path / "dev-null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.stat(os.devnull).st_rdev)
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    with contextlib.suppress(PermissionError):  # a nodev mount refuses to open it: fine
        atomic_write(node, b"x")
    assert stat.S_ISCHR(os.lstat(node).st_mode) and temps(tmp_path) == []


def test_a_symlink_to_a_regular_file_is_replaced_as_before(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"old")
    (tmp_path / "link").symlink_to("real")
    atomic_write(tmp_path / "link", b"new")
    assert (tmp_path / "link").read_bytes() == b"new" and not (tmp_path / "link").is_symlink()
    assert (tmp_path / "real").read_bytes() == b"old"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


@pytest.mark.invariant
def test_only_temp_files_this_process_made_are_ever_removed(tmp_path: Path) -> None:
    # Another PID namespace sharing the folder may be writing as a pid this process cannot
    # see (or sees as dead, or as someone else): no pid, no age makes a temp file ours.
    dead, alive = _dead_pid(), os.getppid()
    others = [
        tmp_path / f".out.{dead}.0123456789ab.tmp",
        tmp_path / f".out.{alive}.0123456789ac.tmp",
        tmp_path / f".out.{alive}.0123456789ad.tmp",
        tmp_path / f".other.{dead}.0123456789ab.tmp",
        tmp_path / f".out.{os.getpid()}.0123456789ae.tmp",  # our pid, but not made by us
    ]
    for path in others:
        path.write_bytes(b"half")
    day_ago = time.time() - 86400
    os.utime(others[1], (day_ago, day_ago))
    atomic_write(tmp_path / "out", b"new")
    assert temps(tmp_path) == sorted(p.name for p in others)


def test_a_temp_file_left_by_a_cut_short_write_goes_at_exit(tmp_path: Path) -> None:
    script = """
import os, sys
from ore import _fs
real = os.replace
def cut(*args):
    raise SystemExit(0)  # as if the thread were cut short before its clean-up
os.replace = cut
try:
    _fs.atomic_write(sys.argv[1], b"x")
finally:
    os.replace = real
"""
    # SystemExit is a BaseException: the write's own clean-up removes it; the set is empty.
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "out")], check=True)
    assert temps(tmp_path) == []
    leaked = """
import os, sys
from ore import _fs
path = os.path.join(sys.argv[1], ".out.1.0123456789ab.tmp")
open(path, "w").close()
_fs._OUR_TEMPS.add(path)  # made by this process, never renamed
"""
    subprocess.run([sys.executable, "-c", leaked, str(tmp_path)], check=True)
    assert temps(tmp_path) == []


def test_keep_mode_keeps_an_existing_files_mode_and_gives_a_new_one_the_mode_asked(
    tmp_path: Path, umask: Callable[[int], None]
) -> None:
    umask(0o022)
    secret = tmp_path / "secret"
    secret.write_bytes(b"old")
    secret.chmod(0o600)
    atomic_write(secret, b"new", mode=0o600, keep_mode=True)
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and secret.read_bytes() == b"new"
    shared = tmp_path / "shared"
    shared.write_bytes(b"old")
    shared.chmod(0o640)
    atomic_write(shared, b"new", mode=0o600, keep_mode=True)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    fresh = tmp_path / "fresh"
    atomic_write(fresh, b"new", mode=0o600, keep_mode=True)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600


def test_keep_mode_keeps_the_owner_when_root_writes_another_users_file(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    path = tmp_path / "theirs"
    path.write_bytes(b"old")
    os.chown(path, 12345, 12345)
    path.chmod(0o604)
    atomic_write(path, b"new", keep_mode=True)
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (12345, 12345, 0o604)


@pytest.mark.invariant
def test_a_proc_fd_path_is_written_into_its_descriptor_never_replaced(tmp_path: Path) -> None:
    # /dev/stdout -> /proc/self/fd/1: on a regular file, stat says "regular file", and a
    # rename would replace the symlink itself (as root) instead of writing to stdout.
    script = """
import os, sys
from ore._fs import atomic_write, writes_through
os.write(1, b"before\\n")
for path in sys.argv[1:]:
    assert writes_through(path), path
    atomic_write(path, path.encode() + b"\\n")
os.write(1, b"after\\n")
"""
    link = tmp_path / "stdout-link"
    link.symlink_to("/dev/stdout")
    paths = ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", str(link)]
    dev_stdout = os.readlink("/dev/stdout")
    out = tmp_path / "out.txt"
    with out.open("wb") as sink:
        subprocess.run([sys.executable, "-c", script, *paths], stdout=sink, check=True)
    assert out.read_text().splitlines() == ["before", *paths, "after"]
    assert os.readlink("/dev/stdout") == dev_stdout and link.is_symlink()
    assert temps(tmp_path) == [] and temps(Path("/dev")) == []


def test_another_processs_fd_on_a_file_is_appended_to_never_replaced(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_bytes(b"kept\n")
    with log.open("ab") as handle:
        holder = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.stdin.read()"],
            stdin=subprocess.PIPE,
            stdout=handle,
        )
    try:
        path = f"/proc/{holder.pid}/fd/1"
        assert writes_through(path)
        atomic_write(path, b"added\n")
        assert log.read_bytes() == b"kept\nadded\n" and os.path.islink(path)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)


# -- 3. reading regular files --------------------------------------------------------------------


def test_read_regular_reads_at_most_one_byte_over_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "ten"
    path.write_bytes(b"0123456789")
    assert read_regular(path, limit=4) == b"01234"
    assert read_regular(path, limit=10) == b"0123456789"
    assert read_regular(path, limit=100) == b"0123456789"
    big = tmp_path / "big"
    big.write_bytes(b"x" * (3 << 20))
    assert len(read_regular(big, limit=(2 << 20) + 7)) == (2 << 20) + 8


def test_a_fifo_is_refused_at_once_never_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    error = in_thread(lambda: read_regular(fifo, limit=10))
    assert isinstance(error, NotRegularFile) and error.kind == "FIFO"
    assert error.strerror == "is not a regular file (a FIFO)"


def test_a_device_and_a_directory_are_refused(tmp_path: Path) -> None:
    device = in_thread(lambda: read_regular(os.devnull, limit=10, follow_symlinks=True))
    assert isinstance(device, NotRegularFile) and not device.is_dir
    assert device.strerror == "is not a regular file (a character device)"
    with pytest.raises(NotRegularFile, match="is a directory") as info:
        read_regular(tmp_path, limit=10)
    assert info.value.is_dir and info.value.errno == errno.EISDIR


def test_a_final_symlink_is_followed_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"data")
    (tmp_path / "link").symlink_to("real")
    assert read_regular(tmp_path / "link", limit=10, follow_symlinks=True) == b"data"
    with pytest.raises(OSError) as info:
        read_regular(tmp_path / "link", limit=10)
    assert info.value.errno == errno.ELOOP


def test_open_regular_leaves_no_descriptor_behind_when_it_refuses(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        with pytest.raises(NotRegularFile):
            open_regular(tmp_path)
    assert len(os.listdir("/proc/self/fd")) == before


# -- 4. confinement to a root --------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """`tmp/root` with `sub/inside.txt`; `tmp/outside/inside.txt` holds a secret."""
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "sub" / "inside.txt").write_text("INSIDE")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "inside.txt").write_text("OUTSIDE")
    (tmp_path / "root" / "out").symlink_to(tmp_path / "outside")
    (tmp_path / "root" / "alias.txt").symlink_to("sub/inside.txt")
    return tmp_path / "root"


@pytest.mark.parametrize(
    "path", ["../outside/inside.txt", "{outside}/inside.txt", "out/inside.txt", "sub/../.."]
)
def test_resolve_inside_refuses_what_leaves_the_root(root: Path, path: str) -> None:
    with pytest.raises(OutsideRoot) as info:
        resolve_inside(root, path.format(outside=root.parent / "outside"))
    assert info.value.root == root.resolve() and "resolves outside" in os_error_words(info.value)


def test_resolve_inside_follows_symlinks_that_stay_inside(root: Path) -> None:
    assert resolve_inside(root, "alias.txt") == root / "sub" / "inside.txt"
    assert resolve_inside(root, str(root / "sub")) == root / "sub"
    assert resolve_inside(root, "sub/new.txt", strict=False) == root / "sub" / "new.txt"
    with pytest.raises(FileNotFoundError):
        resolve_inside(root, "sub/new.txt")


def test_resolve_inside_refuses_a_nul(root: Path) -> None:
    with pytest.raises(ValueError, match="NUL"):
        resolve_inside(root, "sub/inside.txt\0.png")


def test_open_inside_opens_files_inside_and_nothing_else(root: Path) -> None:
    for path in ("sub/inside.txt", "alias.txt", str(root / "sub" / "inside.txt")):
        fd = open_inside(root, path)
        assert os.read(fd, 100) == b"INSIDE"
        os.close(fd)
    with pytest.raises(OutsideRoot):
        open_inside(root, "out/inside.txt")
    for path in ("sub", "."):
        with pytest.raises(NotRegularFile, match="is a directory"):
            open_inside(root, path)


def _swap_to_outside(root: Path) -> None:
    (root / "sub").rename(root / "sub.real")
    (root / "sub").symlink_to(root.parent / "outside")


@pytest.mark.invariant
def test_open_inside_never_follows_a_folder_swapped_for_a_symlink_after_the_check(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = beneath._lstat_at

    def check_then_swap(fd: int, name: str, path: str) -> os.stat_result:
        info = real(fd, name, path)
        if name == "sub":
            _swap_to_outside(root)  # the attacker wins the race every time
        return info

    monkeypatch.setattr(beneath, "_lstat_at", check_then_swap)
    with pytest.raises(OSError) as info:
        open_inside(root, "sub/inside.txt")
    assert info.value.errno in (errno.ELOOP, errno.ENOTDIR)
    assert "changed while being opened" in str(info.value)


def _exchanger(root: Path) -> Callable[[], None]:
    """Swap `sub` (a folder) and `sub.link` (a symlink to the outside folder) in one step."""
    (root / "sub.link").symlink_to(root.parent / "outside")
    return exchanger(os.fsencode(root / "sub"), os.fsencode(root / "sub.link"))


@pytest.mark.invariant
def test_open_inside_never_reads_outside_while_a_folder_is_swapped_for_a_symlink(
    root: Path,
) -> None:
    swap, swaps, stop = _exchanger(root), [0], threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            swap()
            swaps[0] += 1

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    seen: dict[str, int] = {}
    try:
        for _ in range(3000):
            try:
                fd = open_inside(root, "sub/inside.txt")
            except OSError as exc:
                seen[type(exc).__name__] = seen.get(type(exc).__name__, 0) + 1
                continue
            try:
                data = os.read(fd, 100)
            finally:
                os.close(fd)
            assert data == b"INSIDE", f"read {data!r} from outside the root"
            seen["inside"] = seen.get("inside", 0) + 1
    finally:
        stop.set()
        thread.join(10)
        sys.setswitchinterval(old_interval)
    assert swaps[0] >= 200 and seen.get("inside", 0) > 0, (swaps, seen)


# -- open_below: the many paths of a listing -----------------------------------------------------


def test_open_below_opens_what_is_inside_and_refuses_the_rest(root: Path) -> None:
    for path in ("sub/inside.txt", "alias.txt", "sub/../sub/inside.txt", "./alias.txt"):
        fd = open_below(root, path)
        assert os.read(fd, 100) == b"INSIDE"
        os.close(fd)
    outside = ("out/inside.txt", "../outside/inside.txt", "sub/../../outside/inside.txt")
    for path in (*outside, str(root.parent / "outside" / "inside.txt")):
        with pytest.raises(OutsideRoot):
            open_below(root, path)
    os.mkfifo(root / "sub" / "pipe.py")
    for path in ("sub/pipe.py", "sub"):
        assert isinstance(in_thread(lambda path=path: open_below(root, path)), NotRegularFile)
    with pytest.raises(FileNotFoundError):
        open_below(root, "sub/missing.txt")
    with pytest.raises(NotADirectoryError):
        open_below(root, "sub/inside.txt/x")


@pytest.mark.invariant
def test_open_below_never_reads_outside_while_a_folder_is_swapped_for_a_symlink(
    root: Path,
) -> None:
    swap, stop, seen = _exchanger(root), threading.Event(), {"inside": 0, "refused": 0}

    def swapper() -> None:
        while not stop.is_set():
            swap()

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    try:
        for _ in range(2000):
            try:
                fd = open_below(root, "sub/inside.txt")
            except OSError:
                seen["refused"] += 1
                continue
            try:
                assert os.read(fd, 100) == b"INSIDE", "read from outside the root"
            finally:
                os.close(fd)
            seen["inside"] += 1
    finally:
        stop.set()
        thread.join(10)
    assert seen["inside"] > 0, seen


def test_list_names_walks_any_depth_without_following_symlinked_folders(tmp_path: Path) -> None:
    folder = tmp_path / "top"
    where = folder
    for _ in range(sys.getrecursionlimit() + 50):
        where /= "d"
        where.mkdir(parents=True)
    (where / "deep.txt").write_text("x")
    (folder / "a.txt").write_text("x")
    (folder / ".hidden").write_text("x")
    (folder / "link").symlink_to(tmp_path, target_is_directory=True)
    try:
        names = list_names(tmp_path, ["top", "missing"], limit=10)
        assert names[0] == "top/a.txt" and names[1].endswith("/d/deep.txt") and len(names) == 2
        assert list_names(tmp_path, ["top"], limit=1) == ["top/a.txt"]
    finally:  # shutil.rmtree recurses too: pytest could not remove this folder later
        subprocess.run(["rm", "-rf", str(folder / "d")], check=True)


def test_a_walk_beneath_a_pinned_folder_is_bounded_in_length_and_steps(tmp_path: Path) -> None:
    """`..` walks again from the root (a folder it left may have moved), so a path of many
    folders and as many `..` would cost the square of its length: past PATH_MAX it is refused
    at once, and a walk of more steps than any real path takes is refused, not finished."""
    fd = os.open(tmp_path, os.O_RDONLY)
    for _ in range(400):
        os.mkdir("d", dir_fd=fd)
        deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.close(fd)
    (tmp_path / "a.txt").write_text("inside", encoding="utf-8")
    root = _fs.pin_folder(str(tmp_path))
    try:
        found, shown = _fs.open_beneath(root, "d/" * 20 + "../" * 20 + "a.txt")
        os.close(found)
        assert shown == "a.txt"
        for path in ("d/" * 2100 + "a.txt", "d/" * 400 + "../" * 400 + "a.txt"):
            started = time.monotonic()
            with pytest.raises(OSError) as info:
                _fs.open_beneath(root, path)
            assert info.value.errno == errno.ENAMETOOLONG
            assert time.monotonic() - started < 2
    finally:
        os.close(root.fd)
