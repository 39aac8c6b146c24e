/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_JOURNAL_IDS_H
#define SOAK_JOURNAL_IDS_H

/*
 * MESSAGE_ID of soakd's structured journal entries, one per kind, as
 * systemd's own daemons give theirs: "journalctl MESSAGE_ID=..." finds
 * every entry of a kind across restarts and renames, and units/soakd.catalog
 * explains each one to "journalctl -x".  Never change an ID: dashboards
 * and alerts key on them.
 */
#define SOAK_MESSAGE_INTERVAL   "2625afa8e3bb49e08635e59563a07a25" /* SOAK_EVENT=interval */
#define SOAK_MESSAGE_SUMMARY    "7f0b783ca7204cbab2f731163dbe1f9f" /* SOAK_EVENT=summary */
#define SOAK_MESSAGE_KERNEL_BLK "0291df84c13341419f18e89bd10f7d88" /* SOAK_KERNEL=blk */
#define SOAK_MESSAGE_KERNEL_TCP "0f8b9aa80a0e4ef09bb21fbe1e059860" /* SOAK_KERNEL=tcp */
#define SOAK_MESSAGE_CERTIFY_STEP   "d813c5db2d34455fb475f43ab21655e2" /* SOAK_EVENT=certify_step */
#define SOAK_MESSAGE_CERTIFY_ANSWER "eacf31a9a4f1421782914bec1fc6703c" /* SOAK_EVENT=certify_answer */
#define SOAK_MESSAGE_SEARCH_PROBE  "99163adca948474d9bc81a5101ab0a60" /* SOAK_EVENT=search_probe */
#define SOAK_MESSAGE_SEARCH_ANSWER "50f3607c102a469ea2544c2a4282da7d" /* SOAK_EVENT=search_answer */
#define SOAK_MESSAGE_DRIFT      "e95e9216b1bd4cf28e9c4062752156d9" /* SOAK_EVENT=drift */

#endif
