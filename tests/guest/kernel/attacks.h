/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What the attack programs of the attacks suite share (attacks.c and its
 * groups in other files): file geometry, the pmem test files and the
 * groups' entry points.
 */
#ifndef DAXLEASE_ATTACKS_H
#define DAXLEASE_ATTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kt.h"

/* one dtest state for the files of the program (dtest.h) */
#define DTEST_SHARED

#define ATK_LAYOUT_EXCL (F_LAYOUT | F_EXCLUSIVE)
#define ATK_PAGE 4096UL
#define ATK_PMD_SIZE (2 * KT_MIB)
/* How long a layout change may take, in seconds, before it counts as waiting */
#define ATK_WAIT_BOUND 3
/* where the spare NVDIMM's file systems are mounted */
#define ATK_SPARE_DIR "/mnt/spare"

/*
 * Creates (or replaces) path with size bytes of pattern seed, allocated
 * in one fallocate (aligned extents where the file system can), with an
 * extent size hint of extsize bytes if not 0.  0 or errno.
 */
int atk_make_file(const char *path, size_t size, uint8_t seed,
		  unsigned int extsize);
/*
 * Creates path (atk_make_file()) and pins [0, 1 MiB) of it through the
 * DAX_FD registration under an exclusive layout lease, which it then
 * releases (pins outlive leases).  0, or errno with test name failed as
 * not reached and nothing left but the file.
 */
int atk_pin_released(struct kt_dev *d, const char *name, const char *path,
		     size_t size, uint8_t seed, struct kt_pin *p);
/*
 * Formats the spare namespace disk with mkfs (then, if not NULL, runs on
 * mkfs's output buffer and fails the setup if it returns non-zero) and
 * mounts it on ATK_SPARE_DIR as type with opts.  0, or errno with msg
 * set.
 */
int atk_spare_mount(const char *disk, const char *const mkfs[],
		    int (*then)(char *out, size_t len), const char *type,
		    const char *opts, char *msg, size_t msglen);
/* Is [0, 2 MiB) of fd one extent that DAX can map with a PMD?  out: why */
bool atk_pmd_mappable(int fd, char *out, size_t len);
/*
 * Maps [0, len) of fd shared and writable at a 2 MiB-aligned address.
 * Returns the mapping, and in *res the reservation to unmap
 * (len + ATK_PMD_SIZE bytes from *res); NULL (errno set) on failure, with
 * nothing left.
 */
uint8_t *atk_map_pmd_aligned(int fd, size_t len, uint8_t **res);

/* Lines of a file_pins text that name path exactly ("\t<path>\n") */
int atk_pins_naming(const char *text, const char *path);

/* fallocate(mode, off, len) of path by another process: kt_child() */
struct atk_falloc {
	const char *path;
	int mode;
	off_t off;
	off_t len;
};
int atk_falloc_fn(void *arg);
#define ATK_PUNCH (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)

/* attacks_drop.c: the range a layout change drops, and swap */
void atk_drop_range_fs(struct kt_dev *dev, const struct kt_fs *fs);
void atk_drop_range_pmd(struct kt_dev *dev, const struct kt_fs *fs,
			unsigned int extsize);

/*
 * attacks_remove.c: the pmem device removed under a pin (root): the
 * devdax namespace, then the spare one with ext4 and xfs on it
 */
void atk_remove_under_pin(struct kt_dev *dev, const char *devdax,
			  const char *spare);
/* dl-attacks-test --nd-write DRIVER NAME bind|unbind: the exit status is
 * 0 or the errno of the write (the unbind runs as a program of its own) */
int atk_nd_write_main(int argc, char **argv);

/* attacks_pnfs.c: pNFS block layouts of pinned or leased xfs files */
void atk_pnfs(struct kt_dev *dev, const struct kt_fs *fs);

/*
 * attacks_batch.c: registrations pinned a PMD at a time: partial first and
 * last PMD, PMDs split while pinned, FS-DAX and device DAX
 */
void atk_pmd_batch(struct kt_dev *dev, const struct kt_fs *fs,
		   unsigned int extsize);
void atk_pmd_batch_devdax(struct kt_dev *dev, const char *devdax);

/* attacks_scale.c: thousands of MRs on one file */
void atk_pins_scale(struct kt_dev *dev, const struct kt_fs *fs);

/*
 * attacks_dereg.c: deregistration of an MR still referenced in the
 * driver (the test kernel's hold_mr hook holds it), and the exit of a
 * process in that state
 */
void atk_dereg_busy(struct kt_dev *dev, const struct kt_fs *fs);

#endif /* DAXLEASE_ATTACKS_H */
