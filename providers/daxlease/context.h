/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The library's record of a verbs context: its probed capabilities, and,
 * while MRs of it live, whether the application has closed it.
 */
#ifndef DAXLEASE_CONTEXT_H
#define DAXLEASE_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs_dax.h>

struct dl_context {
	struct dl_context *next;
	struct ibv_context *context;
	int cmd_fd;			/* context->cmd_fd at probe time */
	dev_t cmd_rdev;
	uint32_t driver_id;
	struct ibv_dax_caps caps;
	int async_fd;			/* context->async_fd at probe time */
	/*
	 * While MRs of this context live the library holds a dup of the
	 * context's async event fd: kcmp() against the application's fd
	 * number tells a live context from one closed by ibv_close_device()
	 * (whose MRs the kernel destroyed with the uverbs file).  Not a dup
	 * of cmd_fd: that would keep the kernel objects alive after close
	 * and list every file pin twice in /proc/<pid>/file_pins.
	 */
	int ref_fd;
	unsigned int nmrs;
	bool dead;			/* the application closed the context */
};

/* Find or create (and probe) the record of context; NULL/errno. */
struct dl_context *dl_context_get(struct ibv_context *context);
/* Take/drop an MR's reference (opens/closes ref_fd). */
int dl_context_ref(struct dl_context *ctx);
void dl_context_unref(struct dl_context *ctx);
/* Is the context still open (ref_fd is the application's async fd)? */
bool dl_context_alive(struct dl_context *ctx);

#endif /* DAXLEASE_CONTEXT_H */
