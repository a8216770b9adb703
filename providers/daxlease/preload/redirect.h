/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Pointing a loaded library's own dynamic symbol at another function, so
 * that every lookup of it made afterwards finds that function: the
 * preload library's way of owning libibverbs' registration entry points
 * however a program looks them up (dlvsym(), RTLD_DEEPBIND).
 */
#ifndef DAXLEASE_PRELOAD_REDIRECT_H
#define DAXLEASE_PRELOAD_REDIRECT_H

#include <stddef.h>

/*
 * The definition name@version (the default version, "name@@version") of
 * the loaded object that holds real, whose address it must be, is made to
 * resolve to fn for every lookup made afterwards.  real stays callable.
 * 0, or -1 with the reason in why (nothing changed, unless why says so).
 * Not thread-safe against itself: call it once per symbol, from one
 * thread, before anything else can want the result.
 */
int dl_redirect_symbol(void *real, const char *name, const char *version,
		       void *fn, char *why, size_t whylen);

#endif
