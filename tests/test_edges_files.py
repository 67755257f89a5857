"""Model files at the edges (issue #23): atomic saves, and no crafted file gets past load.

Saves are killed (SIGKILL in forked writers), fail on a full disk (an ``OSError`` injected
at write time) and race (two writer processes); the file on disk must always be one whole
model.  Loads face flipped bytes, forged headers (digests recomputed), and members that
inflate far beyond what the header allows; every one must be a ``ModelFileError`` naming
the file and the field.
"""

import errno
import hashlib
import json
import os
import random
import select
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest
from deflate_bomb import write_repeated

from frankwolfe import History
from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, model_io
from frankwolfe.applications.structured_svm.model_io import ModelFileError

_COLS = ("passes", "primal", "gap", "test_error")


def _est(seed: int, n_states: int = 3, n_features: int = 5, lam: float = 0.1) -> StructuredSVM:
    """A 'fitted' estimator without a fit: the file format is all that matters here."""
    svm = StructuredSVM(ChainModel(n_states, n_features), lam=lam, random_state=0)
    rng = np.random.default_rng(seed)
    svm.w_ = rng.normal(size=svm.model.size_joint_feature)
    svm.lam_ = lam
    svm.n_train_ = 10
    svm.history_ = History(_COLS)
    for p in range(3):
        svm.history_.append(passes=float(p), primal=1.0 / (p + 1), gap=0.5 / (p + 1),
                            test_error=np.nan)
    return svm


def _temps(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _w(path):
    return StructuredSVM.load(path).w_


# -- atomic saves ----------------------------------------------------------------------
def _fork_writer(svm, path, ready_w, go_r=None, times=None):
    """A forked child that saves ``svm`` to ``path`` ``times`` times (forever when None),
    writing a byte to ``ready_w`` after each save.  Fork: the parent has everything
    imported, so a child starts in a millisecond (a fresh interpreter takes seconds)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            if go_r is not None:
                os.read(go_r, 1)
            k = 0
            while times is None or k < times:
                svm.save(path)
                os.write(ready_w, b"s")
                k += 1
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    return pid


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_sigkill_during_saves_leaves_the_old_or_the_new_model(tmp_path):
    old, new = _est(1, n_features=4000), _est(2, n_features=4000)  # 12 k weights: ~5 ms saves
    path = tmp_path / "m.npz"
    old.save(path)
    good = path.read_bytes()
    t0 = time.perf_counter()
    new.save(tmp_path / "timing.npz")
    save_time = time.perf_counter() - t0
    rng = random.Random(0)
    outcomes = {"old": 0, "new": 0}
    saves = 0
    for trial in range(50):
        path.write_bytes(good)
        r, w = os.pipe()
        pid = _fork_writer(new, path, w)
        if trial % 10 == 9:
            # every tenth writer is killed during a later save than its first (a loaded
            # machine can make a save outlast every random wait: then no kill would fall
            # between saves); a deadline, never a hang
            ready, _, _ = select.select([r], [], [], 30.0)
            assert ready, "a writer finished no save in 30 s"
            saves += len(os.read(r, 1))
        time.sleep(rng.uniform(0.0, 3 * save_time))  # before, inside or after a save
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(w)
        saves += len(os.read(r, 1 << 16))
        os.close(r)
        got = _w(path)  # always loadable
        if got.tobytes() == old.w_.tobytes():
            outcomes["old"] += 1
        else:
            assert got.tobytes() == new.w_.tobytes()
            outcomes["new"] += 1
    assert outcomes["old"] + outcomes["new"] == 50
    assert saves > 0, "no writer ever finished a save: the kills tested nothing"
    print(f"after 50 SIGKILLs: {outcomes}, {saves} saves completed, save {save_time:.4f} s")
    # killed writers leave temporary files; the next save sweeps those over an hour old
    stale = [p for p in tmp_path.iterdir() if p.name.startswith(".m.npz.")]
    past = time.time() - 2 * 3600
    for p in stale:
        os.utime(p, (past, past))
    old.save(path)
    assert _temps(tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_concurrent_writers_leave_one_whole_model(tmp_path):
    a, b = _est(3, n_features=2000), _est(4, n_features=2000)
    path = tmp_path / "m.npz"
    for _ in range(20):
        go_r, go_w = os.pipe()
        r, w = os.pipe()
        pids = [_fork_writer(m, path, w, go_r, times=3) for m in (a, b)]
        os.write(go_w, b"gg")  # both start at once
        statuses = [os.waitpid(p, 0)[1] for p in pids]
        for fd in (go_r, go_w, w):
            os.close(fd)
        assert len(os.read(r, 64)) == 6
        os.close(r)
        assert statuses == [0, 0]
        got = _w(path).tobytes()
        assert got in (a.w_.tobytes(), b.w_.tobytes())
        assert _temps(tmp_path) == []


@pytest.mark.parametrize("where", ["write", "fsync"])
def test_full_disk_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch, where):
    old, new = _est(5), _est(6)
    path = tmp_path / "m.npz"
    old.save(path)
    good = path.read_bytes()
    full = OSError(errno.ENOSPC, "No space left on device")
    if where == "write":
        real = np.savez_compressed

        def half_then_full(fh, **arrays):  # some bytes reach the file, then the disk is full
            real(fh, **{k: arrays[k] for k in list(arrays)[:2]})
            raise full

        monkeypatch.setattr(model_io.np, "savez_compressed", half_then_full)
    else:
        def fsync(fd):
            raise full

        monkeypatch.setattr("frankwolfe.compiled.atomic_files.os.fsync", fsync)
    with pytest.raises(OSError, match="No space left"):
        new.save(path)
    assert path.read_bytes() == good
    assert _temps(tmp_path) == []
    monkeypatch.undo()
    assert _w(path).tobytes() == old.w_.tobytes()


def test_saved_file_has_the_usual_permissions(tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    _est(7).save(tmp_path / "m.npz")
    assert (tmp_path / "m.npz").stat().st_mode & 0o777 == 0o666 & ~mask


def _unwritable_folder(tmp_path):
    """A folder this process cannot create files in: a read-only one, or /sys for root
    (whom no permission bit stops)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o555)
    if not os.access(ro, os.W_OK):
        return ro
    if os.path.isdir("/sys"):
        return "/sys"
    pytest.skip("no folder this process cannot write to")


def test_an_unwritable_folder_is_an_error_naming_the_destination(tmp_path):
    folder = _unwritable_folder(tmp_path)
    for write in (lambda p: _est(9).save(p), lambda p: _est(9).history_.to_csv(p)):
        dest = os.path.join(folder, "x.npz")
        with pytest.raises(PermissionError) as err:
            write(dest)
        assert err.value.filename == dest and err.value.errno == errno.EACCES
        assert ".tmp" not in str(err.value) and repr(dest) in str(err.value)
    os.chmod(tmp_path / "ro", 0o755)


def test_a_rewrite_keeps_the_file_permissions(tmp_path):
    path = tmp_path / "m.npz"
    _est(10).save(path)
    os.chmod(path, 0o600)
    _est(11).save(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert _w(path).tobytes() == _est(11).w_.tobytes()
    csv = tmp_path / "h.csv"
    _est(10).history_.to_csv(csv)
    os.chmod(csv, 0o640)
    _est(10).history_.to_csv(csv)
    assert csv.stat().st_mode & 0o777 == 0o640


def test_writing_through_a_symlink_rewrites_its_target(tmp_path):
    (tmp_path / "store").mkdir()
    real = tmp_path / "store" / "m.npz"
    _est(12).save(real)
    link = tmp_path / "latest.npz"
    link.symlink_to(real)
    _est(13).save(link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert _w(real).tobytes() == _est(13).w_.tobytes()
    assert _temps(tmp_path) == [] and _temps(tmp_path / "store") == []
    csv_real = tmp_path / "store" / "h.csv"
    csv_real.write_text("old\n")
    (tmp_path / "h.csv").symlink_to(csv_real)
    _est(13).history_.to_csv(tmp_path / "h.csv")
    assert (tmp_path / "h.csv").is_symlink()
    assert csv_real.read_text().splitlines()[0] == ",".join(_COLS)


# -- load: damaged and forged files ----------------------------------------------------
def _members(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _digest(a):
    h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
    h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _forge(path, out, header=None, arrays=None, raw_header=None):
    """Rewrite ``path`` to ``out`` with the header / arrays changed, every digest recomputed
    (the checksums are integrity checks, not signatures: a forger recomputes them)."""
    m = _members(path)
    head = json.loads(m.pop("header").tobytes())
    m.pop("header_sha256")
    if arrays:
        m.update(arrays)
    head["sha256"] = {k: _digest(v) for k, v in m.items()}
    if header is not None:
        header(head)
    text = raw_header if raw_header is not None else json.dumps(head)
    m["header"] = np.frombuffer(text.encode(), dtype=np.uint8)
    m["header_sha256"] = np.frombuffer(hashlib.sha256(m["header"].tobytes()).digest(),
                                       dtype=np.uint8)
    with open(out, "wb") as fh:
        np.savez_compressed(fh, **m)
    return out


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "good.npz"
    _est(8).save(path)
    return path


def test_flipped_bytes_are_model_file_errors(saved, tmp_path):
    raw = saved.read_bytes()
    w = _w(saved)
    bad = tmp_path / "flipped.npz"
    rng = np.random.default_rng(0)
    positions = sorted(set(rng.integers(0, len(raw), 300).tolist()))
    with zipfile.ZipFile(saved) as z:  # the middle of every compressed member
        mids = [info.header_offset + 30 + len(info.filename) + len(info.extra)
                + info.compress_size // 2 for info in z.infolist()]
    refused = []
    for pos in positions + mids:
        data = bytearray(raw)
        data[pos] ^= 0x5A
        bad.write_bytes(bytes(data))
        try:
            back = StructuredSVM.load(bad)
        except ModelFileError as e:
            assert str(bad) in str(e)
            refused.append(pos)
        else:  # a byte the format does not read (a timestamp, an unused field)
            assert back.w_.tobytes() == w.tobytes()
    assert set(mids) <= set(refused)
    assert len(refused) > len(positions) // 2


def _set(*keys, value):
    def edit(h):
        d = h
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value
    return edit


def _forged_cases(path):
    w = _members(path)["w_"]
    nan_w = w.copy()
    nan_w[2] = np.nan
    return {
        "n_states=4, w_ of 3 states": ({"header": _set("model", "params", "n_states", value=4)},
                                       "model"),
        "lam_=-1": ({"header": _set("fitted", "lam_", value=-1)}, "fitted.lam_"),
        "lam_='abc'": ({"header": _set("fitted", "lam_", value="abc")}, "fitted.lam_"),
        "lam_ not the estimator's": ({"header": _set("fitted", "lam_", value=0.2)},
                                     "fitted.lam_"),
        "n_train_=-5": ({"header": _set("fitted", "n_train_", value=-5)}, "fitted.n_train_"),
        "solver='bogus'": ({"header": _set("estimator", "params", "solver", value="bogus")},
                           "'solver'"),
        "w_ too short": ({"arrays": {"w_": w[:-1]}}, "'w_'"),
        "w_ with NaN": ({"arrays": {"w_": nan_w}}, "'w_'"),
        "w_ of strings": ({"arrays": {"w_": w.astype(str)}}, "'w_'"),
        "w_ of 2-D": ({"arrays": {"w_": w.reshape(1, -1)}}, "'w_'"),
        "history column of strings": ({"arrays": {"history/gap": np.array(["a", "b", "c"])}},
                                      "history/gap"),
        "history columns of two lengths": ({"arrays": {"history/gap": np.zeros(5)}},
                                           "history/gap"),
        "a JSON list header": ({"raw_header": "[1, 2, 3]"}, "header"),
        "a deeply nested header": ({"raw_header": "[" * 100_000 + "]" * 100_000}, "header"),
        "a nested header within bounds of JSON": (
            {"raw_header": '{"a": ' * 500 + "1" + "}" * 500}, "header"),
        "an unknown model class": ({"header": _set("model", "class", value="os.system")},
                                   "model.class"),
        "a live executor": ({"header": _set("estimator", "params", "executor", value="x")},
                            "executor"),
        "an extra member": ({"arrays": {"extra": np.zeros(3)}}, "sha256"),
    }


_CASES = ["n_states=4, w_ of 3 states", "lam_=-1", "lam_='abc'", "lam_ not the estimator's",
          "n_train_=-5", "solver='bogus'", "w_ too short", "w_ with NaN", "w_ of strings",
          "w_ of 2-D", "history column of strings", "history columns of two lengths",
          "a JSON list header", "a deeply nested header",
          "a nested header within bounds of JSON", "an unknown model class", "a live executor",
          "an extra member"]


@pytest.mark.parametrize("case", _CASES)
def test_forged_files_are_model_file_errors(saved, tmp_path, case):
    cases = _forged_cases(saved)
    assert set(cases) == set(_CASES)
    forge, field = cases[case]
    out = _forge(saved, tmp_path / "forged.npz", **forge)
    with pytest.raises(ModelFileError) as ei:
        StructuredSVM.load(out)
    assert str(out) in str(ei.value) and field in str(ei.value), str(ei.value)


def _leaves(obj, at=()):
    """Every position in a parsed header: containers and scalars."""
    yield at, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, (*at, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, (*at, i))


def test_every_header_field_forged_is_refused(saved, tmp_path):
    """Each field of the header replaced by a value of the wrong type, digests recomputed:
    every one is a ModelFileError that names the field."""
    header = json.loads(_members(saved)["header"].tobytes())
    positions = [at for at, _ in _leaves(header) if at]
    assert len(positions) > 40  # the estimator's parameters, the model, fitted, digests, ...
    out = tmp_path / "forged.npz"
    for at, value in _leaves(header):
        if not at:
            continue
        wrong = 12345 if isinstance(value, str) else "abc"

        def edit(h, at=at, wrong=wrong):
            d = h
            for k in at[:-1]:
                d = d[k]
            d[at[-1]] = wrong

        _forge(saved, out, header=edit)
        if at[0] == "sha256":  # _forge writes the true digests: forge them after
            m = _members(out)
            h = json.loads(m["header"].tobytes())
            edit(h)
            m["header"] = np.frombuffer(json.dumps(h).encode(), dtype=np.uint8)
            m["header_sha256"] = np.frombuffer(hashlib.sha256(m["header"].tobytes()).digest(),
                                               dtype=np.uint8)
            with open(out, "wb") as fh:
                np.savez_compressed(fh, **m)
        with pytest.raises(ModelFileError) as ei:
            StructuredSVM.load(out)
        msg = str(ei.value)
        assert str(out) in msg
        named = [str(k) for k in at if not isinstance(k, int)]
        assert any(n in msg for n in named[-2:]) or named[0] in msg, (at, msg)


def test_a_forged_model_size_cannot_crash_predict(saved, tmp_path):
    """ChainModel(n_states=3000) named over a 3-state w_: refused at load.  Run in a fresh
    interpreter so that a crash (it segfaulted in predict before) fails the test."""
    out = _forge(saved, tmp_path / "big.npz",
                 header=_set("model", "params", "n_states", value=3000))
    script = textwrap.dedent(f"""
        import numpy as np
        from frankwolfe.applications.structured_svm import StructuredSVM
        from frankwolfe.applications.structured_svm.model_io import ModelFileError
        try:
            svm = StructuredSVM.load({str(out)!r})
        except ModelFileError as e:
            print("refused:", e)
        else:
            print("loaded; predict:", svm.predict([np.ones((4, 5))]))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "refused:" in proc.stdout and "size_joint_feature" not in proc.stderr
    assert "'w_'" in proc.stdout and str(out) in proc.stdout


def _zip_with(path, out, replace):
    """Copy the archive ``path`` to ``out`` with members replaced by ``(npy header, block,
    count)``: the header, then ``count`` times ``block``, streamed (never in memory)."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            name = info.filename[:-4]
            if name not in replace:
                dst.writestr(info.filename, src.read(info), zipfile.ZIP_DEFLATED)
                continue
            head, block, count = replace[name]
            with dst.open(info.filename, "w", force_zip64=True) as fh:
                write_repeated(fh, head, block, count)
    return out


def _npy_head(shape, dtype="<f8"):
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False,
                                              "shape": shape})
    return buf.getvalue()


def test_an_npy_header_announcing_2_40_elements_is_refused(saved, tmp_path):
    n = saved.parent
    out = _zip_with(saved, n / "huge.npz", {"w_": (_npy_head((2 ** 40,)), b"\0" * 64, 1)})
    with pytest.raises(ModelFileError, match=r"huge.npz: member 'w_'"):
        StructuredSVM.load(out)


def test_a_member_inflating_to_gigabytes_is_refused_before_inflating(saved, tmp_path):
    size = 1 << 31  # 2 GiB of zeros: about 2 MB deflated
    block = b"\0" * (16 << 20)
    out = _zip_with(saved, tmp_path / "bomb.npz",
                    {"w_": (_npy_head((size // 8,)), block, size // len(block))})
    assert out.stat().st_size < 3 << 20
    with zipfile.ZipFile(out) as z:  # a true bomb: its first megabyte inflates as announced
        assert z.getinfo("w_.npy").file_size == size + len(_npy_head((size // 8,)))
        with z.open("w_.npy") as fh:
            assert np.lib.format.read_magic(fh) == (1, 0)
            assert np.lib.format.read_array_header_1_0(fh)[0] == (size // 8,)
            assert fh.read(1 << 20) == b"\0" * (1 << 20)
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(ModelFileError, match=r"bomb.npz: member 'w_': announces \d+ bytes "
                                                 r"where the header allows at most 240"):
            StructuredSVM.load(out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - t0 < 2.0
    assert peak < 8 << 20, peak


def test_a_member_lying_about_its_size_is_refused(saved, tmp_path):
    """The zip directory's size is checked against what deflate can produce, and the
    data against the npy header, before allocating."""
    raw = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as z:
        info = z.getinfo("w_.npy")
    # the central directory entry's uncompressed size (offset 24 of the record)
    cd = raw.find(b"PK\x01\x02")
    while raw[cd + 46: cd + 52] != b"w_.npy":
        cd = raw.find(b"PK\x01\x02", cd + 4)
    raw[cd + 24: cd + 28] = (info.compress_size * 5000).to_bytes(4, "little")
    out = tmp_path / "liar.npz"
    out.write_bytes(bytes(raw))
    with pytest.raises(ModelFileError, match=r"liar.npz: member 'w_.npy'.*more than the format"):
        StructuredSVM.load(out)


def test_zlib_is_what_a_flipped_compressed_byte_raised(saved):
    """The independent check of the flipped-byte test: numpy's own reader surfaces the
    same damage as a zlib/zipfile error, which load turns into ModelFileError."""
    raw = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as z:
        info = z.getinfo("w_.npy")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for k in range(8):
        raw[start + info.compress_size // 2 + k] ^= 0xFF
    bad = saved.parent / "bad.npz"
    bad.write_bytes(bytes(raw))
    with pytest.raises((zlib.error, zipfile.BadZipFile, ValueError, EOFError)):
        with np.load(bad) as z:
            z["w_"]
    with pytest.raises(ModelFileError, match=r"bad.npz: .*member 'w_'"):
        StructuredSVM.load(bad)
