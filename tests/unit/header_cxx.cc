// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no device): <infiniband/verbs_dax.h> compiles on its
 * own as C++ and its declarations link against libdaxlease.so.
 */
#include <infiniband/verbs_dax.h>

#include <cstdio>
#include <cstring>

int main()
{
	struct ibv_dax_mr_init_attr attr = {};
	const char *msg;

	attr.length = 0;
	attr.path = "/nonexistent";
	if (ibv_reg_dax_mr(nullptr, &attr))
		return 1;
	msg = ibv_dax_errmsg();
	std::printf("pass unit-header-cxx: %s\n", msg);
	return std::strlen(msg) ? 0 : 1;
}
