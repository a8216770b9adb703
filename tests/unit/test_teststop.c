// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The test stop points of the daxlease_teststop build (daxlease.h,
 * teststop.c): dl_test_stop(STAGE) stops the process with SIGSTOP exactly
 * when DAXLEASE_TEST_STOP names STAGE, and leaves errno alone.  The guest
 * fault tests kill -9 a process stopped there; if the stop never came they
 * would fail, this finds it on the host.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daxlease.h"
#include "dtest.h"

int main(void)
{
	int p[2], st = 0, err;
	pid_t pid;
	char c = 0;

	dtest_begin("unit-teststop");

	unsetenv("DAXLEASE_TEST_STOP");
	errno = EXDEV;
	dl_test_stop("reg_opened");
	err = errno;
	dtest_check("unset/no-stop", err == EXDEV,
		    "without DAXLEASE_TEST_STOP: returned, errno kept");

	if (pipe(p)) {
		dtest_fail("stop/named-stage", "pipe: %s", strerror(errno));
		return dtest_end();
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		setenv("DAXLEASE_TEST_STOP", "reg_mapped", 1);
		/* another stage: no stop */
		dl_test_stop("reg_opened");
		c = 'a';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		dl_test_stop("reg_mapped");
		_exit(3);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		c = 0;
	dtest_check("stop/other-stage", c == 'a',
		    "DAXLEASE_TEST_STOP=reg_mapped: passed reg_opened");
	alarm(30);
	if (waitpid(pid, &st, WUNTRACED) != pid)
		st = 0;
	alarm(0);
	dtest_check("stop/named-stage", WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
		    "DAXLEASE_TEST_STOP=reg_mapped: SIGSTOP at reg_mapped (status 0x%x)",
		    st);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
	return dtest_end();
}
