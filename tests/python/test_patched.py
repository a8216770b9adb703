# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""daxlease on the patched kernel (kernel-headers/patches/linux-6.1),
through ctypes, one test per behaviour, on ext4 and xfs where the file
system matters (test names end in _ext4 / _xfs).

A registered FS-DAX file holds the exclusive layout lease (LEASE line in
/proc/locks, lease_held) and the pin (/proc/self/file_pins); RDMA WRITE
and READ reach the file's blocks; ibv_dax_mr_persist() checks its range;
another process cannot truncate it (ETXTBSY), the holder gets EDEADLOCK;
after ibv_dax_mr_release_lease() the lease is gone and the pins still
refuse the truncate; ibv_dereg_dax_mr() releases everything and a second
one fails with EINVAL; device DAX registers PLAIN; register/deregister
cycles leave nothing behind.
"""
import errno
import mmap
import os
import unittest

import base
import daxlease_ctypes as dl

MiB = 1 << 20
FILE_LEN = 8 * MiB
MR_LEN = 2 * MiB
IO_OFF = 12 << 10
IO_LEN = 128 << 10
CYCLES = int(os.environ.get("DAXLEASE_CYCLES", "50"))
FILESYSTEMS = (("ext4", "DAXLEASE_EXT4"), ("xfs", "DAXLEASE_XFS"))


def pattern(seed, n):
    return bytes((i * 131 + seed * 7 + (i >> 8)) & 0xFF for i in range(n))


def lease_pids(path):
    """pids of the LEASE lines of /proc/locks on path's inode."""
    st = os.stat(path)
    want = "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev),
                             st.st_ino)
    pids = []
    with open("/proc/locks") as f:
        for line in f:
            w = line.split()
            if "LEASE" in w and "->" not in w and want in w:
                pids.append(int(w[w.index(want) - 1]))
    return pids


def pinned_paths(pid="self"):
    """The file paths of /proc/PID/file_pins (the tab-indented lines)."""
    with open(f"/proc/{pid}/file_pins") as f:
        return [l.strip() for l in f if l.startswith("\t")]


def truncate_in_child(path, size):
    """truncate(2) from a forked child: 0 or its errno."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.truncate(path, size)
        except OSError as ex:
            code = ex.errno
        os._exit(code)
    _, st = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(st)


def count_fds():
    return len(os.listdir("/proc/self/fd"))


def count_maps():
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


class PatchedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dev = base.need_env("DAXLEASE_RDMA_DEV")
        cls.gid = int(base.env("DAXLEASE_GID_INDEX", "0"))
        if base.env("DAXLEASE_KERNEL", "stock") != "patched":
            raise unittest.SkipTest("patched-kernel tests on a stock kernel")
        cls.dax = dl.Daxlease()
        cls.rc = base.RCPair(cls.dev, cls.gid, IO_LEN)

    @classmethod
    def tearDownClass(cls):
        cls.rc.close()

    def setUp(self):
        self.note = ""
        self.files = []
        self.mrs = []

    def tearDown(self):
        for mr in self.mrs:
            try:
                self.dax.dereg(mr)
            except OSError:
                pass
        for f in self.files:
            try:
                os.unlink(f)
            except OSError:
                pass

    def make_file(self, fs):
        d = base.need_env(dict(FILESYSTEMS)[fs])
        path = os.path.join(d, f"py-{os.getpid()}-{self._testMethodName}.dat")
        with open(path, "wb") as f:
            f.write(bytes(range(256)) * (FILE_LEN // 256))
            os.fsync(f.fileno())
        self.files.append(path)
        return path

    def reg(self, path, flags=None, length=MR_LEN):
        mr = self.dax.reg(self.rc.pd_ptr, path, length, base.REMOTE_ACCESS,
                          flags=flags)
        self.mrs.append(mr)
        return mr

    def dereg(self, mr):
        self.mrs.remove(mr)
        self.dax.dereg(mr)

    # ---- once ----------------------------------------------------------

    def test_device_pointers(self):
        self.note = base.check_device(self, self.rc)

    def test_caps(self):
        c = self.dax.caps(self.rc.ctx_ptr)
        both = dl.IBV_DAX_CAP_LAYOUT_LEASE | dl.IBV_DAX_CAP_EXT_REG_MR
        self.assertEqual(c.cap_flags & both, both,
                         "patched kernel: layout lease and extended REG_MR")
        self.assertEqual((c.strategy_fsdax, c.strategy_devdax),
                         (dl.STRATEGY_LEASE_PIN, dl.STRATEGY_PLAIN))
        self.note = (f"cap_flags={c.cap_flags:#x} (LAYOUT_LEASE|EXT_REG_MR"
                     f"{'|ODP' if c.cap_flags & dl.IBV_DAX_CAP_ODP else ''}"
                     "); fsdax LEASE_PIN, devdax PLAIN")

    def test_double_dereg_einval(self):
        mr = self.reg(self.make_file("ext4"))
        self.dereg(mr)
        with self.assertRaises(dl.DaxError) as cm:
            self.dax.dereg(mr)
        self.assertEqual(cm.exception.errno, errno.EINVAL, str(cm.exception))
        self.note = f"second ibv_dereg_dax_mr: EINVAL: {self.dax.errmsg()}"

    def test_devdax_plain(self):
        path = base.need_env("DAXLEASE_DEVDAX")
        mr = self.reg(path)
        a = self.dax.query(mr)
        self.assertEqual((a.kind, a.strategy, a.lease_held),
                         (dl.FILE_DEVDAX, dl.STRATEGY_PLAIN, 0))
        data = pattern(0x42, IO_LEN)
        self.rc.write(data, mr.contents.addr + IO_OFF, mr.contents.rkey)
        fd = os.open(path, os.O_RDONLY)
        try:
            with mmap.mmap(fd, MR_LEN, mmap.MAP_SHARED, mmap.PROT_READ) as m:
                seen = m[IO_OFF:IO_OFF + IO_LEN]
        finally:
            os.close(fd)
        self.assertTrue(seen == data, "RDMA WRITE not seen through mmap")
        self.dereg(mr)
        self.note = f"{path}: PLAIN, no lease; RDMA WRITE seen through mmap"

    # ---- per file system ------------------------------------------------

    def do_reg_query(self, fs):
        path = self.make_file(fs)
        mr = self.reg(path)
        a = self.dax.query(mr)
        self.assertEqual((a.kind, a.strategy, a.lease_held, a.offset,
                          a.length),
                         (dl.FILE_FSDAX, dl.STRATEGY_LEASE_PIN, 1, 0, MR_LEN))
        self.assertEqual(os.path.realpath(a.path.decode()),
                         os.path.realpath(path))
        self.assertEqual(mr.contents.length, MR_LEN)
        self.note = f"{path}: FSDAX, LEASE_PIN, lease held, {MR_LEN} bytes"

    def do_rdma_write(self, fs):
        path = self.make_file(fs)
        mr = self.reg(path)
        data = pattern(0x21, IO_LEN)
        self.rc.write(data, mr.contents.addr + IO_OFF, mr.contents.rkey)
        fd = os.open(path, os.O_RDONLY)
        try:
            seen = os.pread(fd, IO_LEN, IO_OFF)
        finally:
            os.close(fd)
        self.assertTrue(seen == data,
                        "RDMA WRITE not seen by a separate pread")
        self.note = "128 KiB RDMA WRITE seen by pread of another descriptor"

    def do_rdma_read(self, fs):
        path = self.make_file(fs)
        mr = self.reg(path)
        data = pattern(0x22, IO_LEN)
        fd = os.open(path, os.O_RDWR)
        try:
            self.assertEqual(os.pwrite(fd, data, IO_OFF), IO_LEN)
        finally:
            os.close(fd)
        seen = self.rc.read(IO_LEN, mr.contents.addr + IO_OFF,
                            mr.contents.rkey)
        self.assertTrue(seen == data,
                        "RDMA READ does not return the pwrite's bytes")
        self.note = "RDMA READ returns the bytes of a separate pwrite"

    def do_persist(self, fs):
        mr = self.reg(self.make_file(fs))
        self.dax.persist(mr, IO_OFF, IO_LEN)
        self.dax.persist(mr, 0, MR_LEN)
        with self.assertRaises(dl.DaxError) as cm:
            self.dax.persist(mr, MR_LEN - 4096, 8192)
        self.assertEqual(cm.exception.errno, errno.ERANGE)
        self.note = "persist in range ok, past the end ERANGE"

    def do_lease_in_proc_locks(self, fs):
        path = self.make_file(fs)
        self.assertEqual(lease_pids(path), [])
        mr = self.reg(path)
        held = lease_pids(path)
        self.assertEqual(held, [os.getpid()],
                         "want exactly one LEASE line, of this process")
        self.dereg(mr)
        self.assertEqual(lease_pids(path), [], "LEASE line after dereg")
        self.note = f"one LEASE line of pid {held[0]} while registered, none after"

    def do_file_pins(self, fs):
        path = os.path.realpath(self.make_file(fs))
        mr = self.reg(path)
        pins = pinned_paths()
        self.assertIn(path, pins, "/proc/self/file_pins while registered")
        self.dereg(mr)
        self.assertNotIn(path, pinned_paths(), "file_pins after dereg")
        self.note = f"/proc/self/file_pins lists {path} while registered only"

    def do_truncate_other_etxtbsy(self, fs):
        path = self.make_file(fs)
        self.reg(path)
        res = truncate_in_child(path, MiB)
        self.assertEqual(res, errno.ETXTBSY, os.strerror(res) if res else "ok")
        self.assertEqual(os.stat(path).st_size, FILE_LEN)
        self.note = "truncate by another process: ETXTBSY, size unchanged"

    def do_truncate_holder_edeadlock(self, fs):
        path = self.make_file(fs)
        self.reg(path)
        with self.assertRaises(OSError) as cm:
            os.truncate(path, MiB)
        self.assertEqual(cm.exception.errno, errno.EDEADLOCK)
        self.assertEqual(os.stat(path).st_size, FILE_LEN)
        self.note = "truncate by the lease holder itself: EDEADLOCK"

    def do_release_lease_keeps_pins(self, fs):
        path = self.make_file(fs)
        mr = self.reg(path)
        self.dax.release_lease(mr)
        self.assertEqual(self.dax.query(mr).lease_held, 0)
        self.assertEqual(lease_pids(path), [], "LEASE line after release")
        res = truncate_in_child(path, MiB)
        self.assertEqual(res, errno.ETXTBSY,
                         "the pins must refuse the truncate: "
                         + (os.strerror(res) if res else "it succeeded"))
        data = pattern(0x23, IO_LEN)
        self.rc.write(data, mr.contents.addr + IO_OFF, mr.contents.rkey)
        fd = os.open(path, os.O_RDONLY)
        try:
            self.assertTrue(os.pread(fd, IO_LEN, IO_OFF) == data)
        finally:
            os.close(fd)
        self.note = ("after release: no lease, truncate ETXTBSY (pins), "
                     "RDMA WRITE still lands")

    def do_dereg_releases(self, fs):
        path = self.make_file(fs)
        mr = self.reg(path)
        self.dereg(mr)
        self.assertEqual(lease_pids(path), [])
        res = truncate_in_child(path, MiB)
        self.assertEqual(res, 0, os.strerror(res) if res else "")
        self.assertEqual(os.stat(path).st_size, MiB)
        self.note = "after dereg: no lease, truncate by another process ok"

    def do_leak_cycles(self, fs):
        path = self.make_file(fs)
        snap = lambda: (count_fds(), count_maps(), len(lease_pids(path)))
        before = snap()
        for _ in range(CYCLES):
            self.dereg(self.reg(path))
        after = snap()
        self.assertEqual(after, before, "(fds, maps lines, leases)")
        self.assertEqual(pinned_paths(), [], "file_pins after the cycles")
        self.note = (f"{CYCLES} register/deregister cycles: (fds, maps lines, "
                     f"leases) {before} -> {after}, no file_pins")


for _fs, _ in FILESYSTEMS:
    for _b in ("reg_query", "rdma_write", "rdma_read", "persist",
               "lease_in_proc_locks", "file_pins", "truncate_other_etxtbsy",
               "truncate_holder_edeadlock", "release_lease_keeps_pins",
               "dereg_releases", "leak_cycles"):
        def _t(self, b=_b, fs=_fs):
            getattr(self, "do_" + b)(fs)
        setattr(PatchedTest, f"test_{_b}_{_fs}", _t)


if __name__ == "__main__":
    unittest.main()
