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

#endif
