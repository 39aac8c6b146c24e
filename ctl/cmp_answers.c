// SPDX-License-Identifier: GPL-2.0-only
#include "cmp_answers.h"

#include <math.h>
#include <string.h>

#include "htmlchart.h"

/* The run's last certification answer record, or NULL. */
static json_t *certify_answer(const struct runmodel *m)
{
	json_t *rec, *last = NULL;
	size_t i;

	json_array_foreach(m->certify, i, rec)
		if (json_object_get(rec, "steps_passed") && json_object_get(rec, "answer"))
			last = rec;
	return last;
}

static json_t *search_answer(const struct runmodel *m)
{
	json_t *rec, *last = NULL;
	size_t i;

	json_array_foreach(m->search, i, rec)
		if (json_object_get(rec, "answer_rate"))
			last = rec;
	return last;
}

static json_t *certify_side(json_t *rec)
{
	if (!rec)
		return json_null();
	return json_pack("{s:O,s:O,s:O,s:O,s:O}", "answer", json_object_get(rec, "answer"),
			 "rate", json_object_get(rec, "rate") ?: json_null(), "steps_passed",
			 json_object_get(rec, "steps_passed"), "steps",
			 json_object_get(rec, "steps") ?: json_null(), "why",
			 json_object_get(rec, "why") ?: json_null());
}

static json_t *search_side(json_t *rec)
{
	if (!rec)
		return json_null();
	return json_pack("{s:O,s:O,s:O,s:O,s:O,s:b}", "answer_rate",
			 json_object_get(rec, "answer_rate"), "lo",
			 json_object_get(rec, "lo") ?: json_null(), "hi",
			 json_object_get(rec, "hi") ?: json_null(), "percentile",
			 json_object_get(rec, "percentile") ?: json_null(), "below_us",
			 json_object_get(rec, "below_us") ?: json_null(), "gave_up",
			 json_is_true(json_object_get(rec, "gave_up")));
}

/* Whether x lies in rec's bracket [lo, hi) (hi 0: no rate was above). */
static bool in_bracket(double x, json_t *rec)
{
	double lo = json_number_value(json_object_get(rec, "lo"));
	double hi = json_number_value(json_object_get(rec, "hi"));

	return x >= lo && (hi <= 0 || x < hi);
}

json_t *cmp_answers(const struct runmodel *a, const struct runmodel *b, bool *changed)
{
	json_t *out = json_object(), *ca = certify_answer(a), *cb = certify_answer(b);
	json_t *sa = search_answer(a), *sb = search_answer(b);

	if (!out)
		return NULL;
	if (ca || cb) {
		json_t *x = json_object_get(ca, "answer"), *y = json_object_get(cb, "answer");
		bool ch = ca && cb && !json_equal(x, y) && !(json_is_null(x) && json_is_null(y));
		*changed |= ch;
		json_object_set_new(out, "certify", json_pack("{s:o,s:o,s:b}", "a", certify_side(ca),
							     "b", certify_side(cb), "changed", ch));
	}
	if (sa || sb) {
		json_t *x = json_object_get(sa, "answer_rate"), *y = json_object_get(sb, "answer_rate");
		bool ch = false;
		/* A search given up has no answer to differ from. */
		bool given_up = json_is_true(json_object_get(sa, "gave_up")) ||
				json_is_true(json_object_get(sb, "gave_up"));
		if (given_up)
			ch = false;
		else if (sa && sb && json_is_number(x) != json_is_number(y))
			ch = true;
		else if (sa && sb && json_is_number(x))
			ch = json_number_value(x) != json_number_value(y) &&
			     !in_bracket(json_number_value(x), sb) && !in_bracket(json_number_value(y), sa);
		*changed |= ch;
		json_object_set_new(out, "search", json_pack("{s:o,s:o,s:b}", "a", search_side(sa),
							    "b", search_side(sb), "changed", ch));
	}
	if (!json_object_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* "4x (400.0 ops/s)", "none: WHY", "no certification" */
static void certify_words(json_t *side, char *buf, size_t len)
{
	json_t *ans = json_object_get(side, "answer");

	if (json_is_null(side))
		snprintf(buf, len, "no certification");
	else if (json_is_string(ans) && json_is_number(json_object_get(side, "rate")))
		snprintf(buf, len, "%s (%.1f ops/s)", json_string_value(ans),
			 json_number_value(json_object_get(side, "rate")));
	else if (json_is_string(ans))
		snprintf(buf, len, "%s", json_string_value(ans));
	else
		snprintf(buf, len, "none");
}

static void search_words(json_t *side, char *buf, size_t len)
{
	json_t *ans = json_object_get(side, "answer_rate");

	if (json_is_null(side))
		snprintf(buf, len, "no search");
	else if (json_is_number(ans))
		snprintf(buf, len, "%.1f ops/s (p%g below %g µs)%s", json_number_value(ans),
			 json_number_value(json_object_get(side, "percentile")),
			 json_number_value(json_object_get(side, "below_us")),
			 json_is_true(json_object_get(side, "gave_up")) ? ", given up: not an answer"
									: "");
	else
		snprintf(buf, len, "none (p%g below %g µs)",
			 json_number_value(json_object_get(side, "percentile")),
			 json_number_value(json_object_get(side, "below_us")));
}

void cmp_answers_text(json_t *answers, FILE *out)
{
	char a[160], b[160];
	json_t *c = json_object_get(answers, "certify"), *s = json_object_get(answers, "search");

	if (c) {
		certify_words(json_object_get(c, "a"), a, sizeof(a));
		certify_words(json_object_get(c, "b"), b, sizeof(b));
		fprintf(out, "certification: A %s, B %s%s\n", a, b,
			json_is_true(json_object_get(c, "changed")) ? "  CHANGED" : "");
	}
	if (s) {
		search_words(json_object_get(s, "a"), a, sizeof(a));
		search_words(json_object_get(s, "b"), b, sizeof(b));
		fprintf(out, "capacity search: A %s, B %s%s\n", a, b,
			json_is_true(json_object_get(s, "changed")) ? "  CHANGED" : "");
	}
}

void cmp_answers_html(json_t *answers, FILE *out)
{
	static const char *const keys[] = { "certify", "search" };
	static const char *const names[] = { "certification", "capacity search" };
	char a[160], b[160];

	if (!answers)
		return;
	fputs("<section id=\"cmp-answers\"><h2>Answers</h2>\n<table><tr><th class=\"name\">"
	      "</th><th class=\"name\">A</th><th class=\"name\">B</th><th>change</th></tr>\n", out);
	for (size_t i = 0; i < 2; i++) {
		json_t *x = json_object_get(answers, keys[i]);
		if (!x)
			continue;
		bool ch = json_is_true(json_object_get(x, "changed"));
		if (i == 0) {
			certify_words(json_object_get(x, "a"), a, sizeof(a));
			certify_words(json_object_get(x, "b"), b, sizeof(b));
		} else {
			search_words(json_object_get(x, "a"), a, sizeof(a));
			search_words(json_object_get(x, "b"), b, sizeof(b));
		}
		fprintf(out, "<tr%s><td class=\"name\">%s</td><td class=\"name\" data-k=\"%s.a\">",
			ch ? " class=\"changed\"" : "", names[i], keys[i]);
		html_text(out, a);
		fprintf(out, "</td><td class=\"name\" data-k=\"%s.b\">", keys[i]);
		html_text(out, b);
		fprintf(out, "</td><td%s data-k=\"%s.changed\">%s</td></tr>\n",
			ch ? " class=\"over\"" : "", keys[i], ch ? "CHANGED" : "same");
	}
	fputs("</table></section>\n", out);
}
