// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/plot.h"

/* The dump's CSV header, as soakd writes it, with a kernel column added
 * the way probes may add theirs. */
#define HEADER "workload,op,start_s,end_s,count,errors,bytes,rate_target,rate_achieved," \
	       "latency_p50_us,latency_p90_us,latency_p99_us,latency_p999_us,latency_max_us," \
	       "service_p50_us,service_p99_us,lag_max_ms,corrupt"

/* --- a small XML well-formedness checker ------------------------------ */

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
}

/* A reference at p ("&amp;" ...); returns its length or 0. */
static size_t entity(const char *p)
{
	static const char *const known[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strncmp(p, known[i], strlen(known[i])) == 0)
			return strlen(known[i]);
	if (p[1] == '#') {
		size_t n = 2;
		while (p[n] >= '0' && p[n] <= '9')
			n++;
		return n > 2 && p[n] == ';' ? n + 1 : 0;
	}
	return 0;
}

/* Returns NULL when well-formed, else what is wrong. */
static const char *xml_check(const char *s, size_t *ret_elements)
{
	const char *stack[64];
	size_t stack_len[64], depth = 0, roots = 0, elements = 0;
	const char *p = s;

	if (strncmp(p, "<?xml", 5) == 0) {
		p = strstr(p, "?>");
		if (!p)
			return "unterminated XML declaration";
		p += 2;
	}
	while (*p) {
		if (*p == '&') {
			if (!entity(p))
				return "bad entity reference in text";
			p++;
			continue;
		}
		if (*p != '<') {
			if (depth == 0 && *p != '\n' && *p != ' ')
				return "text outside the root element";
			p++;
			continue;
		}
		if (strncmp(p, "<!--", 4) == 0) {
			p = strstr(p, "-->");
			if (!p)
				return "unterminated comment";
			p += 3;
			continue;
		}
		if (p[1] == '/') {
			const char *name = p + 2;
			size_t n = 0;
			while (name_char(name[n], n == 0))
				n++;
			if (depth == 0 || n != stack_len[depth - 1] ||
			    strncmp(name, stack[depth - 1], n) != 0)
				return "mismatched end tag";
			depth--;
			p = name + n;
			while (*p == ' ')
				p++;
			if (*p != '>')
				return "malformed end tag";
			p++;
			continue;
		}
		const char *name = p + 1, *attrs[64];
		size_t n = 0, attr_len[64], n_attrs = 0;
		while (name_char(name[n], n == 0))
			n++;
		if (n == 0)
			return "'<' not starting a tag";
		if (depth == 0 && roots++)
			return "more than one root element";
		elements++;
		p = name + n;
		for (;;) {
			bool space = false;
			while (*p == ' ' || *p == '\n' || *p == '\t') {
				p++;
				space = true;
			}
			if (*p == '/' && p[1] == '>') {
				p += 2;
				break;
			}
			if (*p == '>') {
				if (depth == 64)
					return "too deep";
				stack[depth] = name;
				stack_len[depth++] = n;
				p++;
				break;
			}
			if (!space)
				return "attributes must be separated by space";
			const char *an = p;
			size_t k = 0;
			while (name_char(an[k], k == 0))
				k++;
			if (k == 0)
				return "malformed attribute name";
			for (size_t a = 0; a < n_attrs; a++)
				if (attr_len[a] == k && strncmp(attrs[a], an, k) == 0)
					return "duplicate attribute";
			if (n_attrs < 64) {
				attrs[n_attrs] = an;
				attr_len[n_attrs++] = k;
			}
			p = an + k;
			if (*p++ != '=')
				return "attribute without '='";
			char q = *p++;
			if (q != '"' && q != '\'')
				return "unquoted attribute value";
			while (*p && *p != q) {
				if (*p == '<')
					return "'<' in an attribute value";
				if (*p == '&' && !entity(p))
					return "bad entity reference in an attribute";
				p++;
			}
			if (!*p)
				return "unterminated attribute value";
			p++;
		}
	}
	if (depth)
		return "unclosed element";
	if (roots != 1)
		return "no root element";
	*ret_elements = elements;
	return NULL;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static char *render(struct plot *p)
{
	char *svg = NULL;
	size_t len = 0, elements = 0;
	FILE *f = open_memstream(&svg, &len);
	assert_non_null(f);
	assert_int_equal(plot_write_svg(p, f), 0);
	assert_int_equal(fclose(f), 0);
	const char *why = xml_check(svg, &elements);
	if (why)
		fail_msg("SVG is not well-formed: %s", why);
	assert_true(elements > 3);
	return svg;
}

static void add(struct plot *p, const char *csv, const struct plot_filter *f)
{
	char err[256] = "";
	if (plot_add_csv(p, csv, f, err, sizeof(err)) != 0)
		fail_msg("plot_add_csv: %s", err);
}

/* --- tests ------------------------------------------------------------ */

static void test_checker_itself(void **state)
{
	(void)state;
	size_t n;
	assert_null(xml_check("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>t &amp; u</a>\n", &n));
	assert_non_null(xml_check("<a><b></a></b>", &n));
	assert_non_null(xml_check("<a x=1/>", &n));
	assert_non_null(xml_check("<a>R&D</a>", &n));
	assert_non_null(xml_check("<a x=\"1\" x=\"2\"/>", &n));
	assert_non_null(xml_check("<a/><b/>", &n));
	assert_non_null(xml_check("<a>", &n));
}

static void test_series_and_legend(void **state)
{
	(void)state;
	char *csv = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&csv, &len);
	fprintf(f, HEADER ",kernel_blk_p99_us\n");
	for (int i = 0; i < 30; i++) {
		fprintf(f, "rand4k,read,%d.000,%d.000,700,0,2867200,700,700,250,300,900,1500,2000,"
			   "200,800,0.1,0,%d\n", i, i + 1, 400 + i);
		fprintf(f, "rand4k,write,%d.000,%d.000,300,0,1228800,300,300,280,320,1200,1800,2500,"
			   "220,900,0.1,0,0\n", i, i + 1);
		/* Kernel series as rows of their own op. */
		fprintf(f, "rand4k,kernel.blk.read,%d.000,%d.000,700,0,0,0,700,120,150,400,600,800,"
			   "0,0,0,0,0\n", i, i + 1);
		fprintf(f, "seq<&>,read,%d.000,%d.000,50,0,0,50,50,5000,6000,9000,10000,12000,0,0,0,0,0\n",
			i, i + 1);
	}
	fclose(f);

	struct plot *p = plot_new("soakd run \"t\" <1>");
	add(p, csv, NULL);
	char *svg = render(p);

	static const char *const ids[] = {
		"rand4k/read/p50", "rand4k/read/p99", "rand4k/read/p999", "rand4k/read/ops_per_s",
		"rand4k/read/target_per_s", "rand4k/write/p99", "rand4k/kernel.blk.read/p99",
		"rand4k/kernel.blk.read/ops_per_s", "rand4k/read/kernel_blk_p99",
		"seq&lt;&amp;&gt;/read/p999",
	};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		char needle[256];
		snprintf(needle, sizeof(needle), "<path data-series=\"%s\"", ids[i]);
		if (count(svg, needle) != 1)
			fail_msg("series %s drawn %zu times", ids[i], count(svg, needle));
		snprintf(needle, sizeof(needle), "data-legend=\"%s\"", ids[i]);
		if (count(svg, needle) != 1)
			fail_msg("series %s has %zu legend entries", ids[i], count(svg, needle));
	}
	/* Kernel column only where it has values: write rows have 0 there. */
	assert_int_equal(count(svg, "data-series=\"rand4k/write/kernel_blk_p99\""), 0);
	assert_non_null(strstr(svg, ">read p99.9</text>"));
	assert_non_null(strstr(svg, ">kernel.blk.read p50</text>"));
	assert_non_null(strstr(svg, ">read target ops/s</text>"));
	assert_non_null(strstr(svg, "soakd run &quot;t&quot; &lt;1&gt;"));
	assert_int_equal(count(svg, "<g class=\"section\""), 2);
	assert_int_equal(count(svg, "data-panel=\"latency\""), 2);
	assert_int_equal(count(svg, "data-panel=\"throughput\""), 2);
	/* Log axis labels by decades, time labels in run time. */
	assert_non_null(strstr(svg, ">100 µs</text>"));
	assert_non_null(strstr(svg, ">1 ms</text>"));
	assert_non_null(strstr(svg, ">30s</text>"));
	free(svg);
	plot_free(p);
	free(csv);
}

/* No ops (latency 0) and a run that was down: the line breaks. */
static void test_gaps_break_lines(void **state)
{
	(void)state;
	const char *csv = HEADER "\n"
		"w,read,0,1,10,0,0,10,10,100,0,200,300,400,0,0,0,0\n"
		"w,read,1,2,10,0,0,10,10,100,0,200,300,400,0,0,0,0\n"
		"w,read,2,3,0,0,0,10,0,0,0,0,0,0,0,0,0,0\n"
		"w,read,3,4,10,0,0,10,10,100,0,200,300,400,0,0,0,0\n"
		"w,read,4,5,10,0,0,10,10,100,0,200,300,400,0,0,0,0\n"
		"w,read,60,61,10,0,0,10,10,100,0,200,300,400,0,0,0,0\n";
	struct plot *p = plot_new("gaps");
	add(p, csv, NULL);
	char *svg = render(p);
	char *path = strstr(svg, "data-series=\"w/read/p99\"");
	assert_non_null(path);
	char *d = strstr(path, " d=\"");
	char *end = strchr(d + 4, '"');
	*end = '\0';
	/* Three pieces: 0-2 s, 3-5 s, and the lone interval after the gap. */
	assert_int_equal(count(d, "M"), 3);
	assert_int_equal(count(d, "h0.1"), 1);
	*end = '"';
	/* The rate line breaks only where soakd was down. */
	path = strstr(svg, "data-series=\"w/read/ops_per_s\"");
	d = strstr(path, " d=\"");
	end = strchr(d + 4, '"');
	*end = '\0';
	assert_int_equal(count(d, "M"), 2);
	free(svg);
	plot_free(p);
}

/* The host's columns (a dump's CSV since issue 18): a third panel per
 * workload, one line per host_*_pct column whatever the op; empty before
 * the host's first interval; other host columns are not drawn. */
static void test_host_panel(void **state)
{
	(void)state;
	const char *csv = HEADER ",host_cpu_iowait_pct,host_cpu_steal_pct,host_disk_queue_depth\n"
		"w,read,0,1,10,0,0,10,10,100,0,200,300,400,0,0,0,0,,,\n"
		"w,write,0,1,10,0,0,10,10,100,0,200,300,400,0,0,0,0,,,\n"
		"w,read,1,2,10,0,0,10,10,100,0,200,300,400,0,0,0,0,40.5,1.00,2.5\n"
		"w,write,1,2,10,0,0,10,10,100,0,200,300,400,0,0,0,0,40.5,1.00,2.5\n"
		"w,read,2,3,10,0,0,10,10,100,0,200,300,400,0,0,0,0,12.0,0.00,2.5\n"
		"w,write,2,3,10,0,0,10,10,100,0,200,300,400,0,0,0,0,12.0,0.00,2.5\n";
	struct plot *p = plot_new("host");
	add(p, csv, NULL);
	char *svg = render(p);
	assert_int_equal(count(svg, "data-panel=\"host\""), 1);
	assert_int_equal(count(svg, "<path data-series=\"w/host/cpu_iowait\""), 1);
	assert_int_equal(count(svg, "<path data-series=\"w/host/cpu_steal\""), 1);
	assert_int_equal(count(svg, "data-series=\"w/host/disk_queue"), 0);
	assert_int_equal(count(svg, "data-series=\"w/read/cpu_iowait"), 0);
	assert_non_null(strstr(svg, ">host cpu_iowait %</text>"));
	free(svg);
	plot_free(p);
	/* Without host columns, no host panel. */
	p = plot_new("no host");
	add(p, HEADER "\nw,read,0,1,10,0,0,10,10,100,0,200,300,400,0,0,0,0\n", NULL);
	svg = render(p);
	assert_int_equal(count(svg, "data-panel=\"host\""), 0);
	free(svg);
	plot_free(p);
}

/* A drift alarm (the CSV's "drift" column) is a mark on its workload's
 * latency panel, named in its title. */
static void test_drift_marks(void **state)
{
	(void)state;
	const char *csv = HEADER ",drift\n"
		"w,read,0,1,10,0,0,10,10,100,0,200,300,400,0,0,0,0,\n"
		"w,read,1,2,10,0,0,10,10,100,0,200,300,400,0,0,0,0,p99+throughput\n"
		"v,read,1,2,10,0,0,10,10,100,0,200,300,400,0,0,0,0,\n";
	struct plot *p = plot_new("drift");
	add(p, csv, NULL);
	char *svg = render(p);
	assert_int_equal(count(svg, "class=\"drift\""), 1);
	assert_non_null(strstr(svg, "<title>drift: read p99+throughput</title>"));
	free(svg);
	plot_free(p);
}

/* A long run is drawn with at most one point per pixel column. */
static void test_long_run_is_reduced(void **state)
{
	(void)state;
	char *csv = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&csv, &len);
	fprintf(f, HEADER "\n");
	for (int i = 0; i < 3 * 86400; i += 1)
		fprintf(f, "w,read,%d,%d,5,0,0,5,5,100,0,%d,300,400,0,0,0,0\n", i, i + 1,
			i == 100000 ? 50000 : 200);
	fclose(f);
	struct plot *p = plot_new("3 days");
	add(p, csv, NULL);
	char *svg = render(p);
	char *path = strstr(svg, "data-series=\"w/read/p99\"");
	char *d = strstr(path, " d=\"");
	char *end = strchr(d + 4, '"');
	*end = '\0';
	size_t points = count(d, " L") + count(d, " M");
	assert_true(points <= 800);
	assert_true(points >= 700);
	/* The spike survives the reduction: its y is at the top of 50 ms. */
	*end = '"';
	assert_non_null(strstr(svg, ">1d</text>"));
	assert_non_null(strstr(svg, ">100 ms</text>"));
	free(svg);
	plot_free(p);
	free(csv);
}

static void test_filter(void **state)
{
	(void)state;
	const char *csv = HEADER "\n"
		"a,read,0,1,10,0,0,10,10,100,0,200,300,400,0,0,0,0\n"
		"a,write,0,1,10,0,0,10,10,100,0,200,300,400,0,0,0,0\n"
		"b,read,0,1,10,0,0,10,10,100,0,200,300,400,0,0,0,0\n";
	struct plot_filter only = { .workload = "a", .op = "write" };
	struct plot *p = plot_new("filtered");
	add(p, csv, &only);
	assert_int_equal(plot_series_count(p), 5);
	char *svg = render(p);
	assert_null(strstr(svg, "data-series=\"a/read/"));
	assert_null(strstr(svg, "data-series=\"b/"));
	assert_non_null(strstr(svg, "data-series=\"a/write/p50\""));
	free(svg);
	plot_free(p);

	only = (struct plot_filter){ .workload = "nope" };
	p = plot_new("empty");
	add(p, csv, &only);
	assert_int_equal(plot_series_count(p), 0);
	svg = render(p);
	assert_non_null(strstr(svg, "no intervals to plot"));
	free(svg);
	plot_free(p);
}

static void test_bad_csv(void **state)
{
	(void)state;
	char err[256];
	struct plot *p = plot_new("bad");
	assert_int_equal(plot_add_csv(p, "a,b,c\n1,2,3\n", NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "dump --format csv"));
	assert_int_equal(plot_add_csv(p, HEADER "\nw,read,0,1,2\n", NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2"));
	assert_int_equal(plot_add_csv(p, HEADER "\nw,read,0,1,10,0,0,10,x,100,0,200,300,400,0,0,0,0\n",
				      NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rate_achieved"));
	assert_int_equal(plot_add_csv(p, "workload,op,start_s,end_s\nw,r,0,1\n", NULL, err,
				      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no latency or rate"));
	plot_free(p);
}

static void test_axis_helpers(void **state)
{
	(void)state;
	char buf[32];
	plot_format_latency(250, buf, sizeof(buf));
	assert_string_equal(buf, "250 µs");
	plot_format_latency(0.1, buf, sizeof(buf));
	assert_string_equal(buf, "100 ns");
	plot_format_latency(1500, buf, sizeof(buf));
	assert_string_equal(buf, "1.5 ms");
	plot_format_latency(2e6, buf, sizeof(buf));
	assert_string_equal(buf, "2 s");
	plot_format_rate(20000, buf, sizeof(buf));
	assert_string_equal(buf, "20k");
	plot_format_rate(1.2e6, buf, sizeof(buf));
	assert_string_equal(buf, "1.2M");
	plot_format_rate(0, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	plot_format_elapsed(0, buf, sizeof(buf));
	assert_string_equal(buf, "0s");
	plot_format_elapsed(90, buf, sizeof(buf));
	assert_string_equal(buf, "1m30s");
	plot_format_elapsed(5400, buf, sizeof(buf));
	assert_string_equal(buf, "1h30m");
	plot_format_elapsed(2 * 86400 + 4 * 3600, buf, sizeof(buf));
	assert_string_equal(buf, "2d4h");
	plot_format_elapsed(2.5, buf, sizeof(buf));
	assert_string_equal(buf, "2.5s");
	assert_true(plot_nice_step(100, 5) == 20);
	assert_true(plot_nice_step(7, 10) == 1);
	assert_true(plot_nice_step(4500, 5) == 1000);
	assert_true(plot_nice_step(0.3, 3) == 0.1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checker_itself),
		cmocka_unit_test(test_series_and_legend),
		cmocka_unit_test(test_gaps_break_lines),
		cmocka_unit_test(test_host_panel),
		cmocka_unit_test(test_drift_marks),
		cmocka_unit_test(test_long_run_is_reduced),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_bad_csv),
		cmocka_unit_test(test_axis_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
