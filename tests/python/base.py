# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Device resources for the pyverbs tests: context, PD, CQ and a pair of
RC QPs connected to each other over the RoCE v2 GID of the test VM (rxe
loops the traffic back), plus a local pyverbs MR as the RDMA buffer."""
import os
import time
import unittest

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

import daxlease_ctypes as dl

PORT = 1
REMOTE_ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
                 e.IBV_ACCESS_REMOTE_READ)


def _readable_ranges():
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            addr, perms = line.split()[:2]
            if perms[0] == "r":
                lo, hi = (int(x, 16) for x in addr.split("-"))
                out.append((lo, hi))
    return out


def c_pointers(pd, mr):
    """(struct ibv_pd *, struct ibv_context *) of a pyverbs PD.

    pyverbs 44 (Debian 12) exposes no usable C pointer: reading PD.pd or
    Context.context crashes the interpreter (the properties cast the C
    pointer to a Python object; later rdma-core returns it as an int).
    So find the struct ibv_mr * stored in a pyverbs MR of that PD: the one
    word of the MR object that points at a struct ibv_mr whose addr,
    length, lkey and rkey are the MR's.  Its pd and context fields are the
    pointers, checked against the PD's kernel handle.
    """
    ranges = _readable_ranges()
    size = dl.ctypes.sizeof(dl.IbvMr)

    def readable(a):
        return any(lo <= a and a + size <= hi for lo, hi in ranges)

    found = []
    base = id(mr)
    for off in range(16, type(mr).__basicsize__, 8):
        w = dl.ctypes.c_void_p.from_address(base + off).value
        if not w or w % 8 or not readable(w):
            continue
        m = dl.IbvMr.from_address(w)
        if (m.addr, m.length, m.lkey, m.rkey) == (mr.buf, mr.length,
                                                  mr.lkey, mr.rkey):
            found.append(m)
    if len(found) != 1:
        raise RuntimeError(f"{len(found)} candidate struct ibv_mr in the "
                           "pyverbs MR object")
    m = found[0]
    p = dl.IbvPd.from_address(m.pd)
    if p.handle != pd.handle or p.context != m.context:
        raise RuntimeError("struct ibv_mr.pd is not the pyverbs PD")
    return m.pd, m.context


class RCPair:
    def __init__(self, dev, gid_index, buf_len):
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 32)
        cap = QPCap(max_send_wr=16, max_recv_wr=1, max_send_sge=1,
                    max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq,
                          cap=cap, sq_sig_all=1)
        self.qps = [QP(self.pd, init), QP(self.pd, init)]
        port = self.ctx.query_port(PORT)
        gid = self.ctx.query_gid(PORT, gid_index)
        for me, peer in ((0, 1), (1, 0)):
            attr = QPAttr()
            attr.qp_access_flags = (e.IBV_ACCESS_REMOTE_WRITE |
                                    e.IBV_ACCESS_REMOTE_READ)
            attr.port_num = PORT
            attr.path_mtu = port.active_mtu
            attr.dest_qp_num = self.qps[peer].qp_num
            attr.rq_psn = 0
            attr.sq_psn = 0
            attr.max_dest_rd_atomic = 1
            attr.max_rd_atomic = 1
            attr.min_rnr_timer = 12
            attr.timeout = 14
            attr.retry_cnt = 7
            attr.rnr_retry = 7
            gr = GlobalRoute(dgid=gid, sgid_index=gid_index)
            gr.hop_limit = 1
            attr.ah_attr = AHAttr(gr=gr, is_global=1, port_num=PORT)
            self.qps[me].to_rts(attr)
        self.buf = MR(self.pd, buf_len, e.IBV_ACCESS_LOCAL_WRITE)
        self.wr_id = 0

        self.pd_ptr, self.ctx_ptr = c_pointers(self.pd, self.buf)

    def _post(self, opcode, length, remote_addr, rkey, timeout=30):
        self.wr_id += 1
        sge = SGE(self.buf.buf, length, self.buf.lkey)
        wr = SendWR(wr_id=self.wr_id, opcode=opcode, num_sge=1, sg=[sge])
        wr.set_wr_rdma(rkey, remote_addr)
        self.qps[0].post_send(wr)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            n, wcs = self.cq.poll()
            for wc in wcs[:n]:
                if wc.wr_id != self.wr_id:
                    continue
                if wc.status != e.IBV_WC_SUCCESS:
                    raise AssertionError(f"completion status {wc.status}")
                return
        raise AssertionError(f"no completion within {timeout}s")

    def write(self, data, remote_addr, rkey):
        """RDMA WRITE data (bytes) to remote_addr/rkey."""
        self.buf.write(data, len(data))
        self._post(e.IBV_WR_RDMA_WRITE, len(data), remote_addr, rkey)

    def read(self, length, remote_addr, rkey):
        """RDMA READ length bytes from remote_addr/rkey."""
        self.buf.write(b"\0" * length, length)
        self._post(e.IBV_WR_RDMA_READ, length, remote_addr, rkey)
        return self.buf.read(length, 0)

    def close(self):
        self.buf.close()
        for qp in self.qps:
            qp.close()
        self.cq.close()
        self.pd.close()
        self.ctx.close()


def env(name, default=None):
    v = os.environ.get(name)
    return v if v else default


def need_env(name):
    v = env(name)
    if not v:
        raise unittest.SkipTest(f"{name} not set (run in the test VM)")
    return v
