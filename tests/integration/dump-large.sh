#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A dump of a long run does not hold soakd up (issue 12, item 3): the run's
# log gets three days of 1 s intervals (gen_runlog.py, beside soakd's own
# records), then a full CSV dump streams it while another client asks for
# status over and over.  Status answers in well under a second throughout,
# the watchdog keeps being pinged, the CSV is complete (a row per interval
# and op) and bigger than the 64 MiB soakctl used to refuse, and a dump
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
