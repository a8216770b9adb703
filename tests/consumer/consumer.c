// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The smallest program built against an installed libdaxlease: checks
 * that <infiniband/verbs_dax.h> compiles on its own and that the library
 * links and answers (argument errors need no RDMA device).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs_dax.h>

int main(void)
{
	struct ibv_dax_mr_init_attr attr = { .path = "/nonexistent", .fd = -1,
					     .length = 4096 };
	struct ibv_mr *mr;
	int passed = 0, failed = 0, ret;

	if (strcmp(ibv_dax_errmsg(), "") != 0) {
		printf("FAIL errmsg before any call: '%s'\n", ibv_dax_errmsg());
		failed++;
	} else {
		passed++;
	}
	errno = 0;
	mr = ibv_reg_dax_mr(NULL, &attr);
	if (mr || errno != EINVAL || !*ibv_dax_errmsg()) {
		printf("FAIL ibv_reg_dax_mr(NULL pd): mr %p errno %d '%s'\n",
		       (void *)mr, errno, ibv_dax_errmsg());
		failed++;
	} else {
		printf("ok   ibv_reg_dax_mr(NULL pd): EINVAL: %s\n",
		       ibv_dax_errmsg());
		passed++;
	}
	/* the errno value, as ibv_dereg_mr() returns */
	ret = ibv_dereg_dax_mr(NULL);
	if (ret != EINVAL) {
		printf("FAIL ibv_dereg_dax_mr(NULL): returned %d\n", ret);
		failed++;
	} else {
		printf("ok   ibv_dereg_dax_mr(NULL): EINVAL\n");
		passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
