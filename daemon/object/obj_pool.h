/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_POOL_H
#define SOAK_OBJ_POOL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The bounded pool of object names one workload thread works on: what
 * exists, at which version and size, and which op is using it.
 *
 * Every slot holds at most one object.  PUT creates an object in a vacant
 * slot (a fresh name) or, when none is vacant, writes a new version of an
 * idle one; DELETE empties a slot, so its next object gets a new name.  GET
 * and STAT only pick objects known to exist and not being written, so they
 * never ask for what was deleted and never race a write of the same name;
 * several reads of one object may run at once.  When a write fails, nobody
 * knows which version the server kept: the slot is "doubtful", read by no
 * one, rewritten by the next PUT that needs a slot and deleted by cleanup.
 * The pool only ever holds names this workload created, so cleanup never
 * touches anything else.
 */

enum obj_state {
	OBJ_EMPTY,
	OBJ_PRESENT,
	OBJ_DOUBTFUL,
};

#define OBJ_MASK(state) (1u << (state))

struct obj_entry {
	uint64_t id;        /* name number; meaningful unless OBJ_EMPTY */
	uint64_t size;      /* bytes of the current (or attempted) version */
	uint32_t version;   /* 1 for a new name, +1 per overwrite */
	uint8_t state;      /* enum obj_state */
	uint8_t writing;    /* a PUT or DELETE is in flight */
	uint16_t readers;   /* GETs and STATs in flight */
	uint32_t write_seq; /* the pool's write count when its last write ended */
};

struct obj_pool {
	struct obj_entry *entries;
	uint32_t cap;
	uint32_t n_present;
	uint32_t n_doubtful;
	uint64_t next_id;
	uint32_t write_seq; /* writes ended so far (wraps) */
};

#define OBJ_POOL_NONE UINT32_MAX
#define OBJ_POOL_MAX_READERS UINT16_MAX

int obj_pool_init(struct obj_pool *p, uint32_t cap, uint64_t first_id);
void obj_pool_free(struct obj_pool *p);

static inline uint32_t obj_pool_vacant(const struct obj_pool *p)
{
	return p->cap - p->n_present;
}

/* A present object that no write is changing, for GET and STAT. */
uint32_t obj_pool_pick_read(struct obj_pool *p, uint64_t *rng);
/* A present object with no op in flight, for DELETE and overwrites. */
uint32_t obj_pool_pick_idle(struct obj_pool *p, uint64_t *rng);
/* An empty or doubtful slot with no op in flight, for a PUT that creates. */
uint32_t obj_pool_pick_vacant(struct obj_pool *p, uint64_t *rng);
/* The next idle slot at or after *cursor whose state is in mask, advancing
 * *cursor past it; OBJ_POOL_NONE at the end.  For prefill and cleanup. */
uint32_t obj_pool_next(struct obj_pool *p, uint32_t *cursor, unsigned state_mask);

/* A resumed run: slot i holds what the ledger says (state, name number,
 * version, size); names go on after the largest number seen. */
void obj_pool_restore(struct obj_pool *p, uint32_t i, enum obj_state state, uint64_t id,
		      uint32_t version, uint64_t size);

void obj_pool_begin_read(struct obj_pool *p, uint32_t i);
/* gone: the server said the object does not exist: a present one is
 * lost, and its slot empty as after a DELETE. */
void obj_pool_end_read(struct obj_pool *p, uint32_t i, bool gone);
/* Starts a PUT of `size` bytes: gives an empty slot a new name, and the
 * slot's object its next version. */
void obj_pool_begin_put(struct obj_pool *p, uint32_t i, uint64_t size);
void obj_pool_begin_delete(struct obj_pool *p, uint32_t i);
void obj_pool_end_write(struct obj_pool *p, uint32_t i, bool was_delete, bool ok);

#endif
