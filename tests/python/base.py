# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Device resources for the Python tests: the RDMA device, a PD and an RC
loopback pair on it (daxlease_ctypes.Verbs, from libdl-pyhelper.so), and
pyverbs, which checks from its side that the device is the one the test
VM set up."""
import ipaddress
import os
import unittest

import pyverbs.enums as e
from pyverbs.device import Context

import daxlease_ctypes as dl

PORT = 1
REMOTE_ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
                 e.IBV_ACCESS_REMOTE_READ)


class RCPair(dl.Verbs):
    """Context, PD and RC pair; pd_ptr / ctx_ptr for ibv_reg_dax_mr()."""

    def __init__(self, dev, gid_index, buf_len):
        super().__init__(dev, gid_index, buf_len)
        self.dev = dev
        self.gid_index = gid_index


def pyverbs_port(dev, gid_index):
    """(port state, GID at gid_index) of dev as pyverbs sees it."""
    ctx = Context(name=dev)
    try:
        port = ctx.query_port(PORT)
        gid = ctx.query_gid(PORT, gid_index)
        return port.state, str(gid)
    finally:
        ctx.close()


def check_device(test, rc):
    """The helper's PD belongs to its context, and pyverbs sees the device
    with port 1 active and the same GID as sysfs; returns a note."""
    pd = dl.IbvPd.from_address(rc.pd_ptr)
    test.assertEqual(pd.context, rc.ctx_ptr,
                     "struct ibv_pd.context is not the helper's context")
    state, gid = pyverbs_port(rc.dev, rc.gid_index)
    test.assertEqual(state, e.IBV_PORT_ACTIVE, "pyverbs: port 1 not active")
    with open(f"/sys/class/infiniband/{rc.dev}/ports/{PORT}/gids/"
              f"{rc.gid_index}") as f:
        sysfs = f.read().strip()
    test.assertEqual(ipaddress.ip_address(gid), ipaddress.ip_address(sysfs),
                     "pyverbs GID differs from sysfs")
    return (f"struct ibv_pd {rc.pd_ptr:#x} (handle {pd.handle}) of context "
            f"{rc.ctx_ptr:#x}; pyverbs: {rc.dev} port {PORT} active, GID "
            f"{rc.gid_index} {gid}")


def env(name, default=None):
    v = os.environ.get(name)
    return v if v else default


def need_env(name):
    v = env(name)
    if not v:
        raise unittest.SkipTest(f"{name} not set (run in the test VM)")
    return v
