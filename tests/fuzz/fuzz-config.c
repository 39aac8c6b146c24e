// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config loader: JSON text from the user, validated into a struct
 * run_config.  An accepted config is printed as the resolved plan (what
 * `soakd --check` shows) and freed; every refusal must come with at least
 * one error line.
 */
#include "fuzz.h"

#include "daemon/config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_config *config = NULL;
	char *errors = NULL, *text;
	size_t errors_len = 0;
	FILE *errout;
	int r;

	/* config_load() refuses larger files before parsing. */
	if (size > CONFIG_MAX_BYTES)
		return 0;
	text = fuzz_text(data, size);
	errout = open_memstream(&errors, &errors_len);
	FUZZ_CHECK(errout);

	r = config_load_string(text, "fuzz.json", errout, &config);
	fclose(errout);
	if (r == 0) {
		FUZZ_CHECK(config);
		FUZZ_CHECK(config->n_workloads > 0 && config->n_workloads <= CONFIG_MAX_WORKLOADS);
		config_print_plan(config, fuzz_devnull());
		config_free(config);
	} else {
		FUZZ_CHECK(r < 0);
		FUZZ_CHECK(errors_len > 0);
	}
	free(errors);
	free(text);
	return 0;
}
