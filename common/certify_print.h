/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CERTIFY_PRINT_H
#define SOAK_CERTIFY_PRINT_H

#include <stdio.h>

#include <jansson.h>

/*
 * A certification as people read it (the daemon's run/certify.h makes
 * the JSON): soakctl status's lines (status's "certify": the step held
 * and the verdicts so far) and soakctl report's table (report's and
 * dump's "certify": every step's verdict and why, and the answer with its
 * threshold table).  Both print nothing when certify is NULL.
 */
void certify_print_status(json_t *certify, FILE *out);
void certify_print_report(json_t *certify, FILE *out);

/*
 * The capacity search likewise (the daemon's run/search_int.h): status's
 * and report's "search", the curve it measured (one row per probe: rate,
 * p50, p99, p99.9, the target percentile, verdict and how many windows
 * agreed) and the answer with its confidence.  search_plot_svg draws the
 * curve, latency (log scale) against rate, with the target and the
 * answer; 0, -ENOENT when there is no probe yet, or -EIO.
 */
void search_print(json_t *search, FILE *out);
int search_plot_svg(json_t *search, const char *title, FILE *out);

#endif
