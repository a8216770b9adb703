/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * A device-DAX character device (/dev/daxX.Y) as sysfs describes it.
 */
#ifndef DAXLEASE_DEVDAX_H
#define DAXLEASE_DEVDAX_H

#include <stddef.h>
#include <stdint.h>

struct dl_devdax {
	uint64_t size;
	size_t align;			/* the device faults in these units */
	char align_attr[64];		/* sysfs file the alignment came from */
};

/*
 * Is character device maj:min a device DAX?  1 and *dd filled, 0 if it is
 * another character device, -1 with errno and message (path names the
 * device in it) when its sysfs attributes cannot be read or parsed.
 */
int dl_devdax_probe(unsigned int maj, unsigned int min, const char *path,
		    struct dl_devdax *dd);

#endif /* DAXLEASE_DEVDAX_H */
