// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no RDMA device): the uverbs ioctl builder's layout
 * (what uverbs_ioctl.c checks: length, reserved fields, attribute flags
 * and encodings) and the probes' answers on a descriptor that is not a
 * uverbs file.  The real exchange with the kernel runs in the guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/daxlease_user_ioctl_cmds.h>

#include "caps.h"
#include "ioctl.h"
#include "unit.h"

int main(void)
{
	struct ib_uverbs_attr *a;
	struct dl_ioctl cmd;
	uint32_t lkey, id;
	int fd, ret, i;

	dtest_begin("unit-ioctl");

	dl_ioctl_init(&cmd, UVERBS_OBJECT_MR, DAXLEASE_UVERBS_METHOD_REG_MR, 14);
	dtest_check("hdr/empty",
		    dl_ioctl_hdr(&cmd)->length == sizeof(struct ib_uverbs_ioctl_hdr) &&
			    dl_ioctl_hdr(&cmd)->num_attrs == 0 &&
			    dl_ioctl_hdr(&cmd)->reserved1 == 0 &&
			    dl_ioctl_hdr(&cmd)->reserved2 == 0 &&
			    dl_ioctl_hdr(&cmd)->driver_id == 14 &&
			    dl_ioctl_hdr(&cmd)->method_id ==
				    UVERBS_METHOD_REG_DMABUF_MR + 1,
		    "length %u", dl_ioctl_hdr(&cmd)->length);

	a = dl_ioctl_new_obj(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_HANDLE);
	dl_ioctl_in_obj(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_PD_HANDLE, 7);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_ACCESS_FLAGS, 0x7);
	dl_ioctl_out(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_RESP_LKEY, &lkey,
		     sizeof(lkey));
	dl_ioctl_in_fd(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD, -5);
	dtest_check("hdr/length",
		    dl_ioctl_hdr(&cmd)->num_attrs == 5 &&
			    dl_ioctl_hdr(&cmd)->length ==
				    sizeof(struct ib_uverbs_ioctl_hdr) +
					    5 * sizeof(struct ib_uverbs_attr),
		    "num %u length %u", dl_ioctl_hdr(&cmd)->num_attrs, dl_ioctl_hdr(&cmd)->length);
	dtest_check("attr/idr-new", a == &dl_ioctl_hdr(&cmd)->attrs[0] && a->len == 0 &&
		    a->data == 0 && a->attr_data.reserved == 0,
		    "len %u", a->len);
	a = &dl_ioctl_hdr(&cmd)->attrs[1];
	dtest_check("attr/idr-in", a->len == 0 && a->data == 7 &&
		    a->attr_id == DAXLEASE_UVERBS_ATTR_REG_MR_PD_HANDLE,
		    "len %u data %llu", a->len, (unsigned long long)a->data);
	a = &dl_ioctl_hdr(&cmd)->attrs[2];
	dtest_check("attr/flags-in-u64", a->len == 8 && a->data == 7 &&
		    a->attr_data.reserved == 0, "len %u", a->len);
	a = &dl_ioctl_hdr(&cmd)->attrs[3];
	dtest_check("attr/ptr-out", a->len == 4 &&
		    a->data == (uintptr_t)&lkey, "len %u", a->len);
	a = &dl_ioctl_hdr(&cmd)->attrs[4];
	dtest_check("attr/raw-fd", a->len == 0 && a->data_s64 == -5 &&
		    a->attr_data.reserved == 0 &&
		    a->attr_id == DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD,
		    "len %u val %lld", a->len, (long long)a->data_s64);
	for (i = 0, ret = 1; i < 5; i++)
		ret &= dl_ioctl_hdr(&cmd)->attrs[i].flags == UVERBS_ATTR_F_MANDATORY;
	dtest_check("attr/all-mandatory", ret, "an attribute is optional");

	/*
	 * Upstream's REG_MR ids end at RESP_RKEY (10); the DAXLEASE ids sit
	 * in the driver namespace, which the core never assigns, below the
	 * kernel's limit of 30 there.
	 */
	dtest_check("ids/dax-in-driver-namespace",
		    DAXLEASE_UVERBS_ATTR_REG_MR_RESP_RKEY == 10 &&
			    (DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD &
			     UVERBS_ID_NS_MASK) == 1U << UVERBS_ID_NS_SHIFT &&
			    (DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD_OFFSET &
			     ~UVERBS_ID_NS_MASK) <= 30 &&
			    DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD_OFFSET ==
				    DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD + 1,
		    "DAX_FD %#x", DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD);

	for (i = 0; i < DL_IOCTL_MAX_ATTRS + 3; i++)
		dl_ioctl_in_u64(&cmd, 20, i);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ret = dl_ioctl_exec(fd, &cmd);
	dtest_check("overflow-refused", cmd.overflow && ret == E2BIG &&
		    dl_ioctl_hdr(&cmd)->num_attrs == DL_IOCTL_MAX_ATTRS,
		    "ret %d num %u", ret, dl_ioctl_hdr(&cmd)->num_attrs);

	/* not a uverbs fd: the probes report a failure, never "present" */
	ret = dl_caps_find_driver_id(fd, &id);
	dtest_check("probe/driver-id-not-uverbs", ret == ENOTTY,
		    "ret %d", ret);
	ret = dl_caps_probe_reg_mr(fd, 0, NULL);
	dtest_check("probe/reg-mr-not-uverbs", ret == -ENOTTY, "ret %d", ret);
	close(fd);
	ret = dl_caps_probe_reg_mr(fd, 0, NULL);
	dtest_check("probe/reg-mr-closed-fd", ret == -EBADF, "ret %d", ret);
	return dtest_end();
}
