#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# daxlease(1) in the guest; the suite lives with the tool.
exec bash "${DAXLEASE_SRC:-/opt/daxlease/src}/tools/tests/guest-tools.sh" "$@"
