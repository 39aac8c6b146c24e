/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_LATE_H
#define SOAK_OBJ_LATE_H

/*
 * Writes that may still land.  A PUT or DELETE whose answer never came (a
 * timeout, a 5xx, a lost connection, a stop) may be carried out by the
 * server at any time, also after the writes sent after it were
 * acknowledged: a gateway's queue, a backend's retry.  Reading what such a
 * write left is not the server's fault.  The table keeps, per object name,
 * the last OBJ_LATE_PUTS PUTs (version and size) and whether a DELETE had
 * no answer;
 * reads that find what they wrote are uncertain, never stale, lost or
 * resurrected, and listings skip the name.  An entry holds for
 * OBJ_LATE_WINDOW_NS after the last such write of its name (or after the
 * name was retired: deleted with an answer, its slot given a new name):
 * no gateway or backend holds a request that long, and until then a
 * lost or stale object of that name is not told from a late write.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Unanswered PUTs kept per name: the latest, when more were. */
#define OBJ_LATE_PUTS 4
#define OBJ_LATE_WINDOW_NS (UINT64_C(600) * 1000000000)

struct obj_late_entry {
	uint64_t id;                /* the name's number; 0: empty */
	uint64_t last_ns;           /* the last unanswered write, or the retirement */
	uint32_t version[OBJ_LATE_PUTS];  /* of the unanswered PUTs; 0: none */
	uint64_t size[OBJ_LATE_PUTS];
	bool del;                   /* a DELETE had no answer */
};

/* The unanswered PUT of e that left version (its index), or -1. */
int obj_late_find_version(const struct obj_late_entry *e, uint64_t version);
/* The unanswered PUT of e that left size bytes, or -1. */
int obj_late_find_size(const struct obj_late_entry *e, uint64_t size);
static inline bool obj_late_has_put(const struct obj_late_entry *e)
{
	return e->version[0] != 0;
}

struct obj_late {
	struct obj_late_entry *e;   /* open addressing, cap a power of 2 */
	size_t cap, n;
};

/* An unanswered PUT of name id at version (size bytes), or DELETE, at
 * now (monotonic). */
void obj_late_put(struct obj_late *t, uint64_t id, uint32_t version, uint64_t size,
		  uint64_t now_ns);
void obj_late_delete(struct obj_late *t, uint64_t id, uint64_t now_ns);
/* The name's entry while it holds, or NULL. */
const struct obj_late_entry *obj_late_get(const struct obj_late *t, uint64_t id,
					  uint64_t now_ns);
/* The name was retired at now: a write of it may land for the window yet. */
void obj_late_retire(struct obj_late *t, uint64_t id, uint64_t now_ns);
void obj_late_free(struct obj_late *t);

#endif
