// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device DAX geometry from sysfs: /sys/dev/char/M:m, opened once; the
 * subsystem link and the attributes are read relative to it, instead of
 * resolving the device's deep sysfs path (platform, bus, region, device)
 * for each.  libpmem2 reads the same values through libndctl, which
 * builds a context of every NVDIMM bus, region and namespace on each
 * call: milliseconds per registration for two numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devdax.h"
#include "errmsg.h"

/* subsystem -> .../class/dax or .../bus/dax */
static bool is_dax(int dir)
{
	char link[PATH_MAX];
	const char *base;
	ssize_t n;

	n = readlinkat(dir, "subsystem", link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	return !strcmp(base, "dax");
}

/*
 * A device DAX attribute (decimal or 0x hex) in dir: NAME of the dax bus
 * device itself (Linux 5.1 and later), or device/NAME (the older dax
 * class).  used gets the sysfs path it was read from.
 */
static int read_attr(int dir, const char *devname, const char *path,
		     const char *name, uint64_t *val, char *used,
		     size_t used_len)
{
	static const char *const sub[] = { "", "device/" };
	char buf[32], rel[32], *end;
	unsigned int i;
	ssize_t n;
	int fd, err = ENOENT;

	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(rel, sizeof(rel), "%s%s", sub[i], name);
		snprintf(used, used_len, "%s/%s", devname, rel);
		fd = openat(dir, rel, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = errno;
			continue;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		err = n < 0 ? errno : 0;
		close(fd);
		if (n < 0)
			break;
		buf[n] = 0;
		errno = 0;
		*val = strtoull(buf, &end, 0);
		if (errno || end == buf || (*end && *end != '\n'))
			return dl_err(EINVAL, "cannot parse %s (\"%.*s\") of %s",
				      used, (int)strcspn(buf, "\n"), buf,
				      path);
		return 0;
	}
	snprintf(used, used_len, "%s/%s", devname, name);
	return dl_err(err, "cannot read the %s of device DAX %s from %s: %s",
		      name, path, used, strerror(err));
}

int dl_devdax_probe(unsigned int maj, unsigned int min, const char *path,
		    struct dl_devdax *dd)
{
	char devname[48];
	uint64_t align;
	int dir, ret = -1;

	snprintf(devname, sizeof(devname), "/sys/dev/char/%u:%u", maj, min);
	dir = open(devname, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 0;
	if (!is_dax(dir)) {
		close(dir);
		return 0;
	}
	if (read_attr(dir, devname, path, "size", &dd->size, dd->align_attr,
		      sizeof(dd->align_attr)) ||
	    read_attr(dir, devname, path, "align", &align, dd->align_attr,
		      sizeof(dd->align_attr)))
		goto out;
	if (!align || (align & (align - 1)) || align > SIZE_MAX) {
		dl_err(EINVAL, "%s: alignment %llu of %s is not a power of two",
		       dd->align_attr, (unsigned long long)align, path);
		goto out;
	}
	dd->align = align;
	ret = 1;
out:
	close(dir);
	return ret;
}
