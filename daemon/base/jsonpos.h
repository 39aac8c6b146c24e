/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_JSONPOS_H
#define SOAK_JSONPOS_H

#include <stddef.h>

/*
 * jansson reports line and column for syntax errors but keeps no positions
 * for values it has parsed.  To point a semantic error ("unknown key",
 * "must be a number") at the right place, we walk the original text again
 * along the value's path.  The text has already been accepted by jansson,
 * so this scanner only has to skip well-formed JSON.
 *
 * A path is a sequence of steps: an object key (key != NULL) or an array
 * index.  at_key asks for the position of the last step's key rather than
 * its value.  Line and column are 1-based; column counts bytes, as
 * jansson's do.  Returns 0, or -ENOENT if the path is not in the text.
 */
struct jsonpos_step {
	const char *key;
	size_t index;
};

int jsonpos_locate(const char *text, size_t len, const struct jsonpos_step *path,
		   size_t depth, int at_key, int *ret_line, int *ret_column);

#endif
