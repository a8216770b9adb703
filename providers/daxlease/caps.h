/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What the kernel and a device offer: the layout lease (process-wide),
 * the extended REG_MR, ODP and ATOMIC WRITE (per device) and writable
 * page-cache pins (kernel release), as struct ibv_dax_caps.
 */
#ifndef DAXLEASE_CAPS_H
#define DAXLEASE_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs_dax.h>

/*
 * Probe context's device and the kernel: *caps and the driver id of the
 * uverbs ioctls (0 when it cannot be found; then no extended REG_MR).
 */
void dl_caps_probe(struct ibv_context *context, struct ibv_dax_caps *caps,
		   uint32_t *driver_id);

/*
 * Process-wide, once (pthread_once): does the kernel accept
 * F_SETLEASE(F_LAYOUT | F_EXCLUSIVE)?  *err gets the fcntl errno (0 when
 * supported).
 */
bool dl_lease_supported(int *err);
/* Uncached probe on a memfd/O_TMPFILE; 1 supported, 0 not, errno in *err */
int dl_lease_probe_now(int *err);

/*
 * The kernel rejects an ioctl whose driver_id differs from the device's
 * (EINVAL) before it looks at the method; libibverbs does not export the
 * id, so find it by asking for a method that cannot exist: the right id
 * answers EPROTONOSUPPORT.  Returns 0 and *driver_id, or the errno.
 */
int dl_caps_find_driver_id(int cmd_fd, uint32_t *driver_id);
/*
 * Is DAXLEASE_UVERBS_METHOD_REG_MR with DAX_FD known?  1 present, 0
 * absent, -errno if the probe itself failed (ENOTTY: not a uverbs fd).
 * *answer (if not NULL) gets the kernel's errno: EINVAL with the daxlease
 * series, EPROTONOSUPPORT or EOPNOTSUPP without.
 */
int dl_caps_probe_reg_mr(int cmd_fd, uint32_t driver_id, int *answer);
/*
 * Does a kernel of this release (uname -r) allow writable long-term pins
 * of page-cache files?  Before 6.5 yes; unparseable: yes.
 */
bool dl_kernel_pagecache_write_pin(const char *release);

#endif /* DAXLEASE_CAPS_H */
