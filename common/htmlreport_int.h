/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The HTML report's later sections (host panels, configuration, device
 * facts, restarts and gaps), written by htmlreport_facts.c for
 * htmlreport.c.  Only these two files include this.
 */
#ifndef SOAK_HTMLREPORT_INT_H
#define SOAK_HTMLREPORT_INT_H

#include <stdio.h>

#include <jansson.h>

#include "runmodel.h"

void html_report_host(FILE *out, const struct runmodel *m);
/* htmlreport_certify.c: the certification's answer and steps table with
 * their verdicts, and the capacity search's curve (chart and table) and
 * answer; nothing when the run has none. */
void html_report_certify(FILE *out, const struct runmodel *m);
void html_report_search(FILE *out, const struct runmodel *m);
void html_report_facts(FILE *out, const struct runmodel *m, json_t *plan, json_t *devices);

#endif
