/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What every file of the library shares.  The library is compiled once
 * (daxlease_objs) and linked as libdaxlease.so or as the daxlease_static
 * archive of the tool and the host tests; each object has its own small
 * header (request.h, source.h, map.h, ...).
 *
 * Conventions:
 * - The public functions of <infiniband/verbs_dax.h> are defined where
 *   their work is done and marked DL_EXPORT; libdaxlease.map versions them.
 * - Functions documented as pure touch no file, device or global state;
 *   they return 0 or a positive errno value and write a one-line reason
 *   into a caller buffer.
 * - Everything else that can fail returns -1 (or NULL), sets errno and the
 *   thread-local message read by ibv_dax_errmsg() (errmsg.h), and releases
 *   what it acquired before returning.
 */
#ifndef DAXLEASE_INTERNAL_H
#define DAXLEASE_INTERNAL_H

#include <stddef.h>

#define DL_EXPORT __attribute__((visibility("default")))

/*
 * The size of struct T up to the end of its field f: with f the last
 * field of the first version, the smallest inlen a query function takes.
 */
#define DL_FIELD_END(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))

/*
 * Stop points for the guest fault tests: in a build with
 * DAXLEASE_TEST_STOP defined (the daxlease_teststop archive the guest
 * test programs link, never libdaxlease.so), dl_test_stop(STAGE) stops
 * the calling process with SIGSTOP when the environment variable
 * DAXLEASE_TEST_STOP names STAGE, so that a test can kill -9 it there.
 * The stage names are an interface of the tests: keep them stable.
 *   reg_opened       dl_source_open() done, nothing mapped
 *   reg_mapped       the file range is mapped
 *   reg_leased       the layout lease is held, the pin not yet asked for
 *   reg_ioctl        just before the extended REG_MR ioctl
 *   reg_registered   the MR exists in the kernel, not yet in the registry
 *   dereg_destroyed  MR destroyed, lease, mapping and fd still held
 * reg_leased, reg_ioctl and reg_registered are on the lease-pin path
 * (FS-DAX) only.  Elsewhere it compiles to nothing.
 */
#ifdef DAXLEASE_TEST_STOP
void dl_test_stop(const char *stage);
#else
#define dl_test_stop(stage) ((void)0)
#endif

#endif /* DAXLEASE_INTERNAL_H */
