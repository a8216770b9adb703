# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""ctypes binding of <infiniband/verbs_dax.h> (libdaxlease.so.1).

ibv_reg_dax_mr() takes a struct ibv_pd *.  pyverbs 44 (Debian 12) hands
out no usable C pointer of its objects (PD.pd and Context.context cast
the pointer to a Python object and crash the interpreter), so the device
side comes from a small C library built with the project,
libdl-pyhelper.so (tests/guest/pyhelper): it opens the device, allocates
the PD and connects an RC loopback pair on it, and returns the pointers
(class Verbs).  The returned struct ibv_mr is read through the leading
fields of rdma-core's struct ibv_mr.
"""
import ctypes
import os

IBV_DAX_MR_INIT_IOVA = 1 << 0
IBV_DAX_MR_INIT_FLAGS = 1 << 1
IBV_DAX_MR_RELEASE_LEASE = 1 << 0
IBV_DAX_MR_ALLOW_ODP = 1 << 1
IBV_DAX_MR_NO_FALLBACK = 1 << 2
IBV_DAX_MR_CREATE = 1 << 3
IBV_DAX_CAP_LAYOUT_LEASE = 1 << 0
IBV_DAX_CAP_EXT_REG_MR = 1 << 1
IBV_DAX_CAP_ODP = 1 << 2
IBV_DAX_CAP_PAGECACHE_WRITE_PIN = 1 << 3
IBV_DAX_CAP_ATOMIC_WRITE = 1 << 4
IBV_DAX_CAP_FLUSH = 1 << 5
IBV_DAX_CAP_FLUSH_POST = 1 << 6

FILE_UNKNOWN, FILE_FSDAX, FILE_DEVDAX, FILE_PAGECACHE = 0, 1, 2, 3
STRATEGY_NONE, STRATEGY_LEASE_PIN, STRATEGY_PLAIN, STRATEGY_ODP = 0, 1, 2, 3


class InitAttr(ctypes.Structure):
    _fields_ = [("comp_mask", ctypes.c_uint64),
                ("path", ctypes.c_char_p),
                ("fd", ctypes.c_int),
                ("offset", ctypes.c_uint64),
                ("length", ctypes.c_size_t),
                ("access", ctypes.c_uint),
                ("flags", ctypes.c_uint32),
                ("iova", ctypes.c_uint64)]


class MrAttr(ctypes.Structure):
    _fields_ = [("comp_mask", ctypes.c_uint64),
                ("kind", ctypes.c_int),
                ("strategy", ctypes.c_int),
                ("granularity", ctypes.c_int),
                ("lease_held", ctypes.c_int),
                ("path", ctypes.c_char_p),
                ("offset", ctypes.c_uint64),
                ("length", ctypes.c_size_t)]


class Caps(ctypes.Structure):
    _fields_ = [("comp_mask", ctypes.c_uint64),
                ("cap_flags", ctypes.c_uint64),
                ("strategy_fsdax", ctypes.c_int),
                ("strategy_devdax", ctypes.c_int),
                ("strategy_pagecache", ctypes.c_int)]


class IbvMr(ctypes.Structure):
    """The stable head of rdma-core's struct ibv_mr."""
    _fields_ = [("context", ctypes.c_void_p),
                ("pd", ctypes.c_void_p),
                ("addr", ctypes.c_void_p),
                ("length", ctypes.c_size_t),
                ("handle", ctypes.c_uint32),
                ("lkey", ctypes.c_uint32),
                ("rkey", ctypes.c_uint32)]


class IbvPd(ctypes.Structure):
    _fields_ = [("context", ctypes.c_void_p),
                ("handle", ctypes.c_uint32)]


class DaxError(OSError):
    """A failed daxlease call: errno plus ibv_dax_errmsg()."""


def _lib_path():
    if os.environ.get("DAXLEASE_LIB"):
        return os.environ["DAXLEASE_LIB"]
    prefix = os.environ.get("DAXLEASE_PREFIX", "/opt/daxlease")
    return os.path.join(prefix, "lib", "libdaxlease.so.1")


class Daxlease:
    def __init__(self, path=None):
        self.path = path or _lib_path()
        lib = ctypes.CDLL(self.path, use_errno=True)
        MrP = ctypes.POINTER(IbvMr)
        lib.ibv_reg_dax_mr.restype = MrP
        lib.ibv_reg_dax_mr.argtypes = [ctypes.c_void_p,
                                       ctypes.POINTER(InitAttr)]
        lib.ibv_dereg_dax_mr.argtypes = [MrP]
        lib.ibv_query_dax_mr.argtypes = [MrP, ctypes.POINTER(MrAttr),
                                         ctypes.c_uint32]
        lib.ibv_dax_mr_persist.argtypes = [MrP, ctypes.c_uint64,
                                           ctypes.c_size_t]
        lib.ibv_dax_mr_release_lease.argtypes = [MrP]
        lib.ibv_dax_query_caps.argtypes = [ctypes.c_void_p,
                                           ctypes.POINTER(Caps),
                                           ctypes.c_uint32]
        lib.ibv_dax_errmsg.restype = ctypes.c_char_p
        lib.ibv_dax_errmsg.argtypes = []
        self.lib = lib

    def errmsg(self):
        return (self.lib.ibv_dax_errmsg() or b"").decode("utf-8", "replace")

    def _fail(self, what):
        err = ctypes.get_errno()
        raise DaxError(err, f"{what}: {os.strerror(err)}: {self.errmsg()}")

    def reg(self, pd_ptr, path, length, access, offset=0, flags=None):
        """ibv_reg_dax_mr(); returns the MR pointer or raises DaxError."""
        a = InitAttr(path=os.fsencode(path), fd=-1, offset=offset,
                     length=length, access=access)
        if flags is not None:
            a.comp_mask |= IBV_DAX_MR_INIT_FLAGS
            a.flags = flags
        ctypes.set_errno(0)
        mr = self.lib.ibv_reg_dax_mr(ctypes.c_void_p(pd_ptr),
                                     ctypes.byref(a))
        if not mr:
            self._fail(f"ibv_reg_dax_mr({path})")
        return mr

    def dereg(self, mr):
        ctypes.set_errno(0)
        if self.lib.ibv_dereg_dax_mr(mr):
            self._fail("ibv_dereg_dax_mr")

    def query(self, mr):
        attr = MrAttr()
        if self.lib.ibv_query_dax_mr(mr, ctypes.byref(attr),
                                     ctypes.sizeof(attr)):
            self._fail("ibv_query_dax_mr")
        return attr

    def persist(self, mr, offset, length):
        if self.lib.ibv_dax_mr_persist(mr, offset, length):
            self._fail("ibv_dax_mr_persist")

    def release_lease(self, mr):
        ctypes.set_errno(0)
        if self.lib.ibv_dax_mr_release_lease(mr):
            self._fail("ibv_dax_mr_release_lease")

    def caps(self, ctx_ptr):
        caps = Caps()
        if self.lib.ibv_dax_query_caps(ctypes.c_void_p(ctx_ptr),
                                       ctypes.byref(caps),
                                       ctypes.sizeof(caps)):
            self._fail("ibv_dax_query_caps")
        return caps


def _helper_path():
    if os.environ.get("DAXLEASE_PYHELPER"):
        return os.environ["DAXLEASE_PYHELPER"]
    prefix = os.environ.get("DAXLEASE_PREFIX", "/opt/daxlease")
    return os.path.join(prefix, "libexec", "daxlease", "tests",
                        "libdl-pyhelper.so")


class Verbs:
    """Context, PD, local buffer and RC loopback pair of libdl-pyhelper.so.

    ctx_ptr and pd_ptr are the struct ibv_context * and struct ibv_pd * (as
    ints) to pass to ibv_dax_query_caps() and ibv_reg_dax_mr(); write() and
    read() move bytes into and out of a registered MR by RDMA WRITE / READ
    from the pair's requester QP, whose responder shares the PD.
    """

    def __init__(self, dev, gid_index, buf_len, path=None):
        lib = ctypes.CDLL(path or _helper_path(), use_errno=True)
        lib.dlpy_open.restype = ctypes.c_void_p
        lib.dlpy_open.argtypes = [ctypes.c_char_p, ctypes.c_int,
                                  ctypes.c_size_t]
        lib.dlpy_close.argtypes = [ctypes.c_void_p]
        lib.dlpy_context.restype = ctypes.c_void_p
        lib.dlpy_context.argtypes = [ctypes.c_void_p]
        lib.dlpy_pd.restype = ctypes.c_void_p
        lib.dlpy_pd.argtypes = [ctypes.c_void_p]
        for f in (lib.dlpy_write, lib.dlpy_read):
            f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                          ctypes.c_uint64, ctypes.c_uint32]
        lib.dlpy_errmsg.restype = ctypes.c_char_p
        lib.dlpy_errmsg.argtypes = []
        self.lib = lib
        self.buf_len = buf_len
        ctypes.set_errno(0)
        self.h = lib.dlpy_open(os.fsencode(dev), gid_index, buf_len)
        if not self.h:
            self._fail("dlpy_open")
        self.ctx_ptr = lib.dlpy_context(self.h)
        self.pd_ptr = lib.dlpy_pd(self.h)

    def _fail(self, what):
        err = ctypes.get_errno()
        msg = (self.lib.dlpy_errmsg() or b"").decode("utf-8", "replace")
        raise OSError(err, f"{what}: {os.strerror(err)}: {msg}")

    def write(self, data, remote_addr, rkey):
        """RDMA WRITE data (bytes) to remote_addr/rkey."""
        if self.lib.dlpy_write(self.h, data, len(data), remote_addr, rkey):
            self._fail("RDMA WRITE")

    def read(self, length, remote_addr, rkey):
        """RDMA READ length bytes from remote_addr/rkey."""
        out = ctypes.create_string_buffer(length)
        if self.lib.dlpy_read(self.h, out, length, remote_addr, rkey):
            self._fail("RDMA READ")
        return out.raw

    def close(self):
        if self.h:
            self.lib.dlpy_close(self.h)
            self.h = None
