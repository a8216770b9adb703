# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# The sanitizer and valgrind options of every run, sourced, not run: on
# the host tests/reliability/run-{sanitizers,tsan,fuzz,valgrind}.sh, in
# the guest tests/vm/suites/{badinput,threads}.sh (the guest has tests/
# under DAXLEASE_SRC).
#   DL_UBSAN_OPTIONS        every UBSan run: stack, stop at the first report
#   DL_ASAN_OPTIONS         ASan: leaks too; the fuzzers and threads_rxe
#   DL_ASAN_OPTIONS_STACKS  + full malloc stacks (guest badinput-asan)
#   DL_ASAN_OPTIONS_STRICT  + the expensive checks (host ctest runs)
#   DL_TSAN_OPTIONS         TSan: a report fails the process (exit 66);
#                           use_madv_dontdump=0 because the patched debug
#                           kernel refuses MADV_DONTDUMP on the shadow range
#   DL_VALGRIND_SUPP        the third-party suppressions
#   DL_MEMCHECK             the valgrind memcheck command of every run (an
#                           array: "${DL_MEMCHECK[@]}" [OPTION...] PROGRAM);
#                           an error or a definite/indirect leak makes it
#                           exit 99
dl_checkers_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

DL_UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
DL_ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
DL_ASAN_OPTIONS_STACKS=$DL_ASAN_OPTIONS:fast_unwind_on_malloc=0
DL_ASAN_OPTIONS_STRICT=$DL_ASAN_OPTIONS_STACKS:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
DL_TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=4 use_madv_dontdump=0"
DL_VALGRIND_SUPP=$dl_checkers_dir/../reliability/valgrind.supp
# shellcheck disable=SC2034 # used by the scripts that source this file
DL_MEMCHECK=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
	--errors-for-leak-kinds=definite,indirect
	--show-leak-kinds=definite,indirect --child-silent-after-fork=yes
	--suppressions="$DL_VALGRIND_SUPP")
