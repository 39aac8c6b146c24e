/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_VERDICTS_H
#define SOAK_CTL_VERDICTS_H

#include <jansson.h>

/*
 * A recorded run's certification and capacity search, read from its log
 * (the "certify" and "search" records soakd wrote) into reply as soakd's
 * own report and dump carry them: "certify" {thresholds_ms, limits_pct,
 * steps, answer} and "search" {percentile, below_us, curve, answer}
 * (nothing for a run without them), and "drift": the run's drift alarms,
 * their {"type": "event", "event": "drift", ...} records ([] for none).
 * 0 or -errno.
 */
int verdicts_from_log(const char *run_dir, json_t *reply);

#endif
