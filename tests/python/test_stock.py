# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""daxlease on the stock Debian 6.1 kernel, through pyverbs and ctypes.

The device side (context, PD, RC loopback pair, local buffer MR) comes
from libdl-pyhelper.so, pyverbs checks the device from its side, and
ibv_reg_dax_mr() and friends are called through ctypes with the helper's
PD pointer.  Same contract as tests/guest/stock/stock.c:
caps without lease/extended REG_MR/ODP (writable page-cache pins before
Linux 6.5, ATOMIC WRITE from 6.2); devdax and tmpfs register PLAIN
and carry RDMA WRITE/READ that a separate pread (devdax: mmap) sees;
FS-DAX on ext4 and xfs fails with EOPNOTSUPP and the reason; no leak
after 1,000 register/deregister cycles.
"""
import ctypes
import errno
import mmap
import os
import subprocess
import unittest

import base
import daxlease_ctypes as dl

MiB = 1 << 20
MR_LEN = 2 * MiB
FILE_OFF = 64 << 10
IO_OFF = 12 << 10
IO_LEN = 128 << 10
CYCLES = int(os.environ.get("DAXLEASE_CYCLES", "1000"))


def pattern(seed, n):
    return bytes((i * 131 + seed * 7 + (i >> 8)) & 0xFF for i in range(n))


def count_fds():
    return len(os.listdir("/proc/self/fd"))


def count_maps():
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def count_mrs(dev):
    """The device's MR count from `rdma resource show`, or None."""
    try:
        out = subprocess.run(["rdma", "resource", "show"], check=True,
                             capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        words = line.split()
        if len(words) > 1 and words[1] == f"{dev}:" and "mr" in words:
            return int(words[words.index("mr") + 1])
    return None


class StockTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dev = base.need_env("DAXLEASE_RDMA_DEV")
        cls.gid = int(base.env("DAXLEASE_GID_INDEX", "0"))
        if base.env("DAXLEASE_KERNEL", "stock") != "stock":
            raise unittest.SkipTest("stock-kernel suite on a patched kernel")
        cls.dax = dl.Daxlease()
        cls.rc = base.RCPair(cls.dev, cls.gid, IO_LEN)
        cls.tmpdir = base.env("DAXLEASE_TMPFS", "/tmp")

    @classmethod
    def tearDownClass(cls):
        cls.rc.close()

    def setUp(self):
        self.note = ""
        self.files = []

    def tearDown(self):
        for f in self.files:
            try:
                os.unlink(f)
            except OSError:
                pass

    def make_file(self, d, size):
        path = os.path.join(d, f"py-{os.getpid()}-{self._testMethodName}.dat")
        with open(path, "wb") as f:
            os.posix_fallocate(f.fileno(), 0, size)
        self.files.append(path)
        return path

    def reg(self, path, offset=0, flags=None):
        return self.dax.reg(self.rc.pd_ptr, path, MR_LEN,
                            base.REMOTE_ACCESS, offset=offset, flags=flags)

    def test_device_pointers(self):
        self.note = base.check_device(self, self.rc)

    def test_caps(self):
        c = self.dax.caps(self.rc.ctx_ptr)
        rel = os.uname().release
        ver = tuple(int(x) for x in rel.split("-")[0].split(".")[:2])
        # writable page-cache pins before Linux 6.5; ATOMIC WRITE and
        # FLUSH on rxe from 6.2.  FLUSH_POST says what the library was
        # built against (rdma-core 45+), not the kernel: left out.
        want = ((dl.IBV_DAX_CAP_PAGECACHE_WRITE_PIN if ver < (6, 5) else 0) |
                (dl.IBV_DAX_CAP_ATOMIC_WRITE | dl.IBV_DAX_CAP_FLUSH
                 if ver >= (6, 2) else 0))
        self.assertEqual(c.cap_flags & ~dl.IBV_DAX_CAP_FLUSH_POST, want,
                         f"stock {rel} + rxe: no lease, no extended REG_MR, "
                         f"no ODP; cap_flags {c.cap_flags:#x}, want {want:#x}")
        pc = dl.STRATEGY_PLAIN if ver < (6, 5) else dl.STRATEGY_NONE
        self.assertEqual((c.strategy_fsdax, c.strategy_devdax,
                          c.strategy_pagecache),
                         (dl.STRATEGY_NONE, dl.STRATEGY_PLAIN, pc))
        self.note = (f"{rel}: cap_flags={c.cap_flags:#x}; fsdax NONE, "
                     f"devdax PLAIN, pagecache "
                     f"{'PLAIN' if pc == dl.STRATEGY_PLAIN else 'NONE'}")

    def check_rdma(self, path, offset, kind, devdax):
        mr = self.reg(path, offset)
        try:
            a = self.dax.query(mr)
            self.assertEqual((a.kind, a.strategy, a.lease_held, a.length),
                             (kind, dl.STRATEGY_PLAIN, 0, MR_LEN))
            raddr = mr.contents.addr + IO_OFF
            rkey = mr.contents.rkey
            data = pattern(kind, IO_LEN)
            self.rc.write(data, raddr, rkey)
            seen = self.read_source(path, offset + IO_OFF, IO_LEN, devdax)
            self.assertTrue(seen == data,
                            "RDMA WRITE not seen by a separate read of the file")
            data2 = pattern(kind + 50, IO_LEN)
            self.write_source(path, offset + IO_OFF, data2, devdax)
            self.assertTrue(self.rc.read(IO_LEN, raddr, rkey) == data2,
                            "RDMA READ does not return the file's bytes")
            self.dax.persist(mr, IO_OFF, IO_LEN)
        finally:
            self.dax.dereg(mr)
        self.note = (f"{path}: PLAIN; 128 KiB RDMA WRITE seen by a separate "
                     f"{'mmap' if devdax else 'pread'}, RDMA READ returns a "
                     f"separate {'mmap' if devdax else 'pwrite'}'s bytes")

    @staticmethod
    def read_source(path, off, n, devdax):
        fd = os.open(path, os.O_RDONLY)
        try:
            if not devdax:
                return os.pread(fd, n, off)
            with mmap.mmap(fd, MR_LEN, mmap.MAP_SHARED, mmap.PROT_READ) as m:
                return m[off:off + n]
        finally:
            os.close(fd)

    @staticmethod
    def write_source(path, off, data, devdax):
        fd = os.open(path, os.O_RDWR)
        try:
            if not devdax:
                assert os.pwrite(fd, data, off) == len(data)
                return
            with mmap.mmap(fd, MR_LEN, mmap.MAP_SHARED) as m:
                m[off:off + len(data)] = data
        finally:
            os.close(fd)

    def test_devdax_rdma(self):
        self.check_rdma(base.need_env("DAXLEASE_DEVDAX"), 0,
                        dl.FILE_DEVDAX, True)

    def test_tmpfs_rdma(self):
        path = self.make_file(self.tmpdir, FILE_OFF + MR_LEN)
        self.check_rdma(path, FILE_OFF, dl.FILE_PAGECACHE, False)

    def check_fsdax_refused(self, mnt):
        path = self.make_file(base.need_env(mnt), MR_LEN)
        with self.assertRaises(dl.DaxError) as cm:
            mr = self.reg(path)
            self.dax.dereg(mr)
        e = cm.exception
        self.assertEqual(e.errno, errno.EOPNOTSUPP, str(e))
        msg = self.dax.errmsg()
        for phrase in ("FS-DAX", "layout lease", "REG_MR",
                       "daxlease-kernel-patches", "daxlease(7)", "no ODP"):
            self.assertIn(phrase, msg)
        self.note = f"EOPNOTSUPP: {msg}"

    def test_ext4_fsdax_refused(self):
        self.check_fsdax_refused("DAXLEASE_EXT4")

    def test_xfs_fsdax_refused(self):
        self.check_fsdax_refused("DAXLEASE_XFS")

    def test_leak_cycles(self):
        path = self.make_file(self.tmpdir, MR_LEN)
        snap = lambda: (count_fds(), count_maps(), count_mrs(self.dev))
        before = snap()
        mr = self.reg(path)
        live = snap()
        self.dax.dereg(mr)
        self.assertGreater(live[0], before[0], "live MR: no extra fd seen")
        self.assertGreater(live[1], before[1], "live MR: no extra mapping")
        if before[2] is not None:
            self.assertEqual(live[2], before[2] + 1, "live MR: MR count")
        for i in range(CYCLES):
            self.dax.dereg(self.reg(path))
        after = snap()
        self.assertEqual(after, before, "(fds, maps lines, MRs) before/after")
        self.note = (f"{CYCLES} tmpfs register/deregister cycles: (fds, maps "
                     f"lines, MRs) {before} -> {after}")


if __name__ == "__main__":
    unittest.main()
