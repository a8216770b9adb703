// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * daxlease pins: who pins what, from /proc/<pid>/file_pins
 * (doc/design.md §1.7; parsed by dt_pins_parse()).  With --file, which
 * processes pin one file: the answer to "why does my truncate fail with
 * ETXTBSY?" (layout changes over pinned blocks fail, doc/design.md §1.3).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "daxlease_tool.h"
#include "lease.h"
#include "pins.h"


/* one pinned file of one process, flattened for printing */
struct pin_row {
	pid_t pid;
	char comm[32];
	int fd;			/* owner fd, -1 for an mm pin */
	const char *via;	/* owner path, "mm" for an mm pin */
	const char *file;
};

struct pins_scan {
	const char *proc;	/* /proc or a test tree */
	struct dt_pins *pins;	/* one per process with pins */
	size_t npins, cap_pins;
	struct pin_row *rows;
	size_t nrows, cap_rows;
	unsigned int scanned, supported, unreadable, malformed, gone;
};

static void pins_usage(FILE *f)
{
	fprintf(f,
		"usage: %s pins [--json] [PID...]\n"
		"       %s pins --file PATH [--json]\n"
		"\n"
		"List the files pinned long-term for RDMA, per process and\n"
		"uverbs device file, from /proc/<pid>/file_pins (a kernel with the\n"
		"daxlease series).  With --file, list who pins PATH: a truncate or\n"
		"hole punch over pinned blocks fails with ETXTBSY until the owner\n"
		"deregisters the MR or exits.\n"
		"\n"
		"  -f, --file PATH   only pins of this file (and its lease holder)\n"
		"  -j, --json        one JSON object on stdout\n"
		"  -P, --proc DIR    read DIR/<pid>/file_pins instead of /proc\n"
		"                    (for tests and saved snapshots)\n"
		"  -h, --help        this text\n"
		"\n"
		"Without PIDs every process is scanned; run as root to see them all.\n",
		dt_prog, dt_prog);
}

static void read_comm(const char *proc, pid_t pid, char *comm, size_t len)
{
	char path[PATH_MAX], *buf, *nl;
	size_t n;

	snprintf(path, sizeof(path), "%s/%d/comm", proc, (int)pid);
	if (dt_read_file(path, &buf, &n)) {
		snprintf(comm, len, "?");
		return;
	}
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	snprintf(comm, len, "%s", buf);
	free(buf);
}

static int add_row(struct pins_scan *s, const struct pin_row *row)
{
	struct pin_row *nr;

	if (s->nrows == s->cap_rows) {
		s->cap_rows = s->cap_rows ? 2 * s->cap_rows : 32;
		nr = realloc(s->rows, s->cap_rows * sizeof(*nr));
		if (!nr)
			return ENOMEM;
		s->rows = nr;
	}
	s->rows[s->nrows++] = *row;
	return 0;
}

/*
 * Read one process.  Returns 0 (also for processes that vanished or are
 * unreadable: counted), ESRCH for an explicit pid that does not exist, or
 * ENOMEM.
 */
static int scan_pid(struct pins_scan *s, pid_t pid, bool explicit)
{
	struct pin_row row = { .pid = pid };
	char path[PATH_MAX], *buf;
	struct dt_pins *p, *np;
	size_t len, i, k;
	struct stat st;
	int err;

	s->scanned++;
	snprintf(path, sizeof(path), "%s/%d/file_pins", s->proc, (int)pid);
	err = dt_read_file(path, &buf, &len);
	if (err == ENOENT || err == ESRCH) {
		snprintf(path, sizeof(path), "%s/%d", s->proc, (int)pid);
		if (stat(path, &st)) {
			s->gone++;
			return explicit ? ESRCH : 0;
		}
		/* the process exists: the kernel has no file_pins */
		return 0;
	}
	s->supported++;
	if (err == EACCES || err == EPERM) {
		s->unreadable++;
		return 0;
	}
	if (err)
		return err == ENOMEM ? ENOMEM : 0;

	if (s->npins == s->cap_pins) {
		s->cap_pins = s->cap_pins ? 2 * s->cap_pins : 16;
		np = realloc(s->pins, s->cap_pins * sizeof(*np));
		if (!np) {
			free(buf);
			return ENOMEM;
		}
		s->pins = np;
	}
	p = &s->pins[s->npins];
	err = dt_pins_parse(buf, len, p);
	free(buf);
	if (err == EINVAL) {
		dt_error("pins", "%s/%d/file_pins: malformed at line %zu, skipped",
			 s->proc, (int)pid, p->err_line);
		dt_pins_free(p);
		s->malformed++;
		return 0;
	}
	if (err)
		return err;
	if (!dt_pins_total(p)) {
		dt_pins_free(p);
		return 0;
	}
	s->npins++;

	read_comm(s->proc, pid, row.comm, sizeof(row.comm));
	for (i = 0; i < p->nowners; i++) {
		row.fd = p->owners[i].fd;
		row.via = p->owners[i].path;
		for (k = 0; k < p->owners[i].nfiles; k++) {
			row.file = p->owners[i].files[k];
			if (add_row(s, &row))
				return ENOMEM;
		}
	}
	row.fd = -1;
	row.via = "mm";
	for (k = 0; k < p->nmm; k++) {
		row.file = p->mm_files[k];
		if (add_row(s, &row))
			return ENOMEM;
	}
	return 0;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int scan_all(struct pins_scan *s)
{
	pid_t *pids = NULL, *np, pid;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int err = 0;

	d = opendir(s->proc);
	if (!d)
		return errno;
	while ((de = readdir(d))) {
		if (dt_parse_pid(de->d_name, &pid))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			np = realloc(pids, cap * sizeof(*np));
			if (!np) {
				err = ENOMEM;
				goto out;
			}
			pids = np;
		}
		pids[n++] = pid;
	}
	qsort(pids, n, sizeof(*pids), pid_cmp);
	for (i = 0; i < n && !err; i++)
		err = scan_pid(s, pids[i], false);
out:
	closedir(d);
	free(pids);
	return err;
}

/* file_pins shows d_path(): an unlinked file ends in " (deleted)" */
static bool same_file(const char *pinned, const char *want_real,
		      const struct stat *want_st)
{
	static const char deleted[] = " (deleted)";
	char buf[PATH_MAX];
	size_t n = strlen(pinned), dl = sizeof(deleted) - 1;
	struct stat st;

	if (want_real && !strcmp(pinned, want_real))
		return true;
	if (n > dl && n - dl < sizeof(buf) &&
	    !strcmp(pinned + n - dl, deleted)) {
		memcpy(buf, pinned, n - dl);
		buf[n - dl] = 0;
		if (want_real && !strcmp(buf, want_real))
			return true;
		return false;
	}
	return want_st && !stat(pinned, &st) && st.st_dev == want_st->st_dev &&
	       st.st_ino == want_st->st_ino;
}

static void print_rows_json(struct dt_json *j, const struct pins_scan *s)
{
	size_t i;

	dt_json_arr_begin(j, "pins");
	for (i = 0; i < s->nrows; i++) {
		const struct pin_row *r = &s->rows[i];

		dt_json_obj_begin(j, NULL);
		dt_json_int(j, "pid", r->pid);
		dt_json_str(j, "comm", r->comm);
		if (r->fd >= 0)
			dt_json_int(j, "fd", r->fd);
		else
			dt_json_null(j, "fd");
		dt_json_str(j, "via", r->via);
		dt_json_str(j, "file", r->file);
		dt_json_end(j, '}');
	}
	dt_json_end(j, ']');
}

static void print_rows(const struct pins_scan *s)
{
	char via[PATH_MAX + 16];
	size_t i;

	printf("%-8s %-16s %-32s %s\n", "PID", "COMM", "VIA", "FILE");
	for (i = 0; i < s->nrows; i++) {
		const struct pin_row *r = &s->rows[i];

		if (r->fd >= 0)
			snprintf(via, sizeof(via), "fd %d %s", r->fd, r->via);
		else
			snprintf(via, sizeof(via), "mm");
		printf("%-8d %-16s %-32s %s\n", (int)r->pid, r->comm, via,
		       r->file);
	}
}

static size_t count_procs(const struct pins_scan *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nrows; i++)
		if (!i || s->rows[i].pid != s->rows[i - 1].pid)
			n++;
	return n;
}

int dt_cmd_pins(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "proc", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct pins_scan s = { .proc = "/proc" };
	const char *file = NULL;
	char *want_real = NULL;
	struct stat want_st;
	bool json = false, have_st = false;
	pid_t lease_pid = 0, pid;
	struct dt_json j;
	size_t i, kept;
	int c, err = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+f:jP:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			file = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'P':
			s.proc = optarg;
			break;
		case 'h':
			pins_usage(stdout);
			return 0;
		default:
			return dt_usage_error("pins", "bad option");
		}
	}
	for (i = optind; i < (size_t)argc; i++)
		if (dt_parse_pid(argv[i], &pid))
			return dt_usage_error("pins", "'%s' is not a pid",
					      argv[i]);

	if (file) {
		want_real = realpath(file, NULL);
		if (!stat(file, &want_st))
			have_st = true;
		else if (errno != ENOENT)
			dt_error("pins", "%s: %s", file, strerror(errno));
		if (!want_real)
			want_real = strdup(file);
		if (have_st)
			lease_pid = dl_lease_holder(want_st.st_dev,
						    want_st.st_ino);
	}

	if (optind < argc) {
		for (i = optind; i < (size_t)argc && !err; i++) {
			dt_parse_pid(argv[i], &pid);
			err = scan_pid(&s, pid, true);
			if (err == ESRCH) {
				dt_error("pins", "no process %d", (int)pid);
				goto out;
			}
		}
	} else {
		err = scan_all(&s);
		if (err && err != ENOMEM)
			dt_error("pins", "%s: %s", s.proc, strerror(err));
	}
	if (err)
		goto out;
	if (s.scanned && !s.supported) {
		err = EOPNOTSUPP;
		dt_error("pins",
			 "this kernel has no /proc/<pid>/file_pins: boot a kernel built with the daxlease series (package daxlease-kernel-patches, see daxlease(7))");
		goto out;
	}

	if (file) {
		for (i = 0, kept = 0; i < s.nrows; i++)
			if (same_file(s.rows[i].file, want_real,
				      have_st ? &want_st : NULL))
				s.rows[kept++] = s.rows[i];
		s.nrows = kept;
	}

	if (json) {
		dt_json_init(&j, stdout);
		dt_json_obj_begin(&j, NULL);
		dt_json_int(&j, "scanned", s.scanned);
		dt_json_int(&j, "unreadable", s.unreadable);
		dt_json_int(&j, "malformed", s.malformed);
		if (file) {
			dt_json_obj_begin(&j, "file");
			dt_json_str(&j, "path", want_real);
			dt_json_bool(&j, "pinned", s.nrows > 0);
			dt_json_int(&j, "processes", count_procs(&s));
			if (lease_pid)
				dt_json_int(&j, "lease_holder", lease_pid);
			else
				dt_json_null(&j, "lease_holder");
			dt_json_end(&j, '}');
		}
		print_rows_json(&j, &s);
		dt_json_end(&j, '}');
		dt_json_finish(&j);
	} else if (file) {
		if (s.nrows) {
			printf("%s is pinned by %zu process%s:\n", want_real,
			       count_procs(&s), count_procs(&s) == 1 ? "" : "es");
			print_rows(&s);
			printf("\ntruncate, ftruncate and fallocate over the pinned blocks fail with ETXTBSY\n"
			       "until the MR is deregistered (ibv_dereg_dax_mr) or the process exits.\n");
		} else {
			printf("%s is not pinned by any %sprocess.\n",
			       want_real, s.unreadable ? "readable " : "");
		}
		if (lease_pid)
			printf("process %d holds a lease on it: while an exclusive layout lease is held,\n"
			       "layout changes by other processes fail with ETXTBSY.\n",
			       (int)lease_pid);
	} else if (s.nrows) {
		print_rows(&s);
	} else {
		printf("no pinned files (%u process%s scanned)\n", s.scanned,
		       s.scanned == 1 ? "" : "es");
	}
	if (!json && s.unreadable)
		fprintf(stderr,
			"%s: pins: %u process%s not readable (run as root to see every process)\n",
			dt_prog, s.unreadable, s.unreadable == 1 ? "" : "es");
out:
	if (err == ENOMEM)
		dt_error("pins", "out of memory");
	for (i = 0; i < s.npins; i++)
		dt_pins_free(&s.pins[i]);
	free(s.pins);
	free(s.rows);
	free(want_real);
	return err ? dt_exit_code(err) : 0;
}
