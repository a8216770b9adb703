// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What the kernel and the device offer (caps.h): the layout lease, found
 * once per process, and the device's facts (driver id, extended REG_MR,
 * ODP, ATOMIC WRITE) and the kernel release's rule on writable page-cache
 * pins, found once per context (context.c caches them).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/daxlease_user_ioctl_cmds.h>

#include "caps.h"
#include "ioctl.h"
#include "lease.h"
#include "strategy.h"

static int probe_file(void)
{
	char tmpl[] = "/tmp/daxlease-probe-XXXXXX";
	int fd;

	fd = memfd_create("daxlease-lease-probe", MFD_CLOEXEC);
	if (fd >= 0)
		return fd;
	fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd >= 0)
		unlink(tmpl);
	return fd;
}

int dl_lease_probe_now(int *err)
{
	int fd, ret;

	*err = 0;
	fd = probe_file();
	if (fd < 0) {
		*err = errno;
		return 0;
	}
	/*
	 * A file we created and own: EINVAL can only mean the kernel does
	 * not know the lease type (stock 6.1: F_LAYOUT is absent from
	 * fcntl's lease types) or leases are disabled.  The daxlease kernel
	 * grants the exclusive lease only on DAX files of file systems that
	 * honour long-term pins, and answers EOPNOTSUPP for this one: the
	 * type is known.
	 */
	if (fcntl(fd, F_SETLEASE, DL_LAYOUT_EXCL) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		ret = 1;
	} else {
		*err = errno;
		/* EAGAIN: the type was understood, a conflict got in */
		ret = errno == EAGAIN || errno == EOPNOTSUPP;
	}
	close(fd);
	return ret;
}

static pthread_once_t lease_once = PTHREAD_ONCE_INIT;
static bool lease_ok;
static int lease_errno;

static void lease_probe_once(void)
{
	int err;

	lease_ok = dl_lease_probe_now(&err) == 1;
	lease_errno = err;
}

bool dl_lease_supported(int *err)
{
	pthread_once(&lease_once, lease_probe_once);
	if (err)
		*err = lease_errno;
	return lease_ok;
}

/*
 * IB_UVERBS_DEVICE_ATOMIC_WRITE of the Linux 6.2+ uapi (enum
 * ib_uverbs_device_cap_flags in rdma/ib_user_ioctl_verbs.h, absent from
 * rdma-core 44's copy): the kernel copies it to device_cap_flags_ex.
 * rdma-core 44 posts ATOMIC WRITE (ibv_wr_atomic_write) but names no
 * device flag for it.  FLUSH targets (bits 38, 39) are reported; whether
 * this build can post FLUSH is a property of the libibverbs it was built
 * against (DL_HAVE_IBV_FLUSH, from CMake).
 */
#define DL_DEVICE_ATOMIC_WRITE (1ULL << 40)
#define DL_DEVICE_FLUSH_GLOBAL (1ULL << 38)
#define DL_DEVICE_FLUSH_PERSISTENT (1ULL << 39)

/* No method id >= UVERBS_API_METHOD_KEY_NUM_CORE (22) can exist. */
#define DL_IMPOSSIBLE_METHOD 0x0fff
/* enum rdma_driver_id has ~20 entries in 6.1; leave room for new ones */
#define DL_MAX_DRIVER_ID 64

int dl_caps_find_driver_id(int cmd_fd, uint32_t *driver_id)
{
	struct dl_ioctl cmd;
	uint32_t id;
	int ret;

	for (id = 0; id < DL_MAX_DRIVER_ID; id++) {
		dl_ioctl_init(&cmd, UVERBS_OBJECT_MR, DL_IMPOSSIBLE_METHOD, id);
		ret = dl_ioctl_exec(cmd_fd, &cmd);
		if (ret == EPROTONOSUPPORT) {
			*driver_id = id;
			return 0;
		}
		/* wrong driver_id: EINVAL; anything else is a real failure */
		if (ret != EINVAL)
			return ret ? ret : EIO;
	}
	return ENOENT;
}

int dl_caps_probe_reg_mr(int cmd_fd, uint32_t driver_id, int *answer)
{
	struct dl_ioctl cmd;
	int ret;

	/*
	 * Only DAX_FD, mandatory: stock 6.1 does not know the method and a
	 * kernel with upstream's REG_MR (6.17+, same method id) does not
	 * know the attribute (a driver-namespace id that upstream's core
	 * never assigns), both answer EPROTONOSUPPORT; the daxlease kernel
	 * accepts DAX_FD and then fails the missing mandatory attributes
	 * with EINVAL.  Nothing is created either way.
	 */
	dl_ioctl_init(&cmd, UVERBS_OBJECT_MR, DAXLEASE_UVERBS_METHOD_REG_MR,
		      driver_id);
	dl_ioctl_in_fd(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD, -1);
	ret = dl_ioctl_exec(cmd_fd, &cmd);
	if (answer)
		*answer = ret;
	if (ret == EPROTONOSUPPORT || ret == EOPNOTSUPP)
		return 0;
	if (ret == 0 || ret == EBADF || ret == ENOTTY || ret == EFAULT)
		return -(ret ? ret : EIO);
	/* EINVAL (mandatory attributes missing) and the like: it exists */
	return 1;
}

bool dl_kernel_pagecache_write_pin(const char *release)
{
	unsigned int major, minor;

	/*
	 * Linux 6.5 (mm/gup.c writable_file_mapping_allowed()) refuses
	 * writable FOLL_LONGTERM pins of file mappings that need dirty
	 * tracking with EFAULT.  A release that does not parse is taken as
	 * allowing them: ibv_reg_dax_mr() still turns the kernel's EFAULT
	 * into the same reason (mr.c), as on a kernel that backported the
	 * check.
	 */
	if (!release || sscanf(release, "%u.%u", &major, &minor) != 2)
		return true;
	return major < 6 || (major == 6 && minor < 5);
}

void dl_caps_probe(struct ibv_context *context, struct ibv_dax_caps *caps,
		   uint32_t *driver_id)
{
	struct ibv_device_attr_ex dattr = {};
	uint32_t need = IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_WRITE;
	struct utsname u;

	memset(caps, 0, sizeof(*caps));
	*driver_id = 0;
	if (dl_lease_supported(NULL))
		caps->cap_flags |= IBV_DAX_CAP_LAYOUT_LEASE;
	if (!dl_caps_find_driver_id(context->cmd_fd, driver_id) &&
	    dl_caps_probe_reg_mr(context->cmd_fd, *driver_id, NULL) == 1)
		caps->cap_flags |= IBV_DAX_CAP_EXT_REG_MR;
	if (uname(&u) || dl_kernel_pagecache_write_pin(u.release))
		caps->cap_flags |= IBV_DAX_CAP_PAGECACHE_WRITE_PIN;

	if (ibv_query_device_ex(context, NULL, &dattr) == 0) {
		if ((dattr.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
		    (dattr.odp_caps.per_transport_caps.rc_odp_caps & need) ==
			    need)
			caps->cap_flags |= IBV_DAX_CAP_ODP;
		if (dattr.device_cap_flags_ex & DL_DEVICE_ATOMIC_WRITE)
			caps->cap_flags |= IBV_DAX_CAP_ATOMIC_WRITE;
		if ((dattr.device_cap_flags_ex &
		     (DL_DEVICE_FLUSH_GLOBAL | DL_DEVICE_FLUSH_PERSISTENT)) ==
		    (DL_DEVICE_FLUSH_GLOBAL | DL_DEVICE_FLUSH_PERSISTENT))
			caps->cap_flags |= IBV_DAX_CAP_FLUSH;
	}

#ifdef DL_HAVE_IBV_FLUSH
	caps->cap_flags |= IBV_DAX_CAP_FLUSH_POST;
#endif
	caps->strategy_devdax = IBV_DAX_MR_STRATEGY_PLAIN;
	dl_strategy_choose(IBV_DAX_FILE_PAGECACHE, 0, DL_PIN_WRITE, caps,
			   &caps->strategy_pagecache, NULL, 0);
	dl_strategy_choose(IBV_DAX_FILE_FSDAX, 0, DL_PIN_WRITE, caps,
			   &caps->strategy_fsdax, NULL, 0);
}
