/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_CMP_ANSWERS_H
#define SOAK_CTL_CMP_ANSWERS_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "runmodel.h"

/*
 * soakctl cmp's answers: a certification's (the load it certified, or
 * none) and a capacity search's (the rate found, or none) of both runs,
 * from their last answer records.  A change of answer is flagged when
 * both runs have one: a different certified load, or a search rate that
 * lies outside the other run's bracket [lo, hi) (two searches whose
 * brackets overlap agree within their resolution).
 *
 * cmp_answers returns {"certify": {"a", "b", "changed"}, "search": {...}}
 * with only what either run has, or NULL when neither has any; *changed is
 * set when an answer changed.
 */
json_t *cmp_answers(const struct runmodel *a, const struct runmodel *b, bool *changed);
void cmp_answers_text(json_t *answers, FILE *out);
void cmp_answers_html(json_t *answers, FILE *out);

#endif
