// SPDX-License-Identifier: GPL-2.0-only
/* The bounded pool of object names (see obj_pool.h). */
#include "obj_pool.h"

#include <errno.h>
#include <stdlib.h>

#include "obj_rng.h"

/* Random probes before a pick falls back to scanning the pool. */
#define PROBES 16

int obj_pool_init(struct obj_pool *p, uint32_t cap, uint64_t first_id)
{
	*p = (struct obj_pool){ .cap = cap, .next_id = first_id };
	if (cap == 0)
		return -EINVAL;
	p->entries = calloc(cap, sizeof(*p->entries));
	return p->entries ? 0 : -ENOMEM;
}

void obj_pool_free(struct obj_pool *p)
{
	free(p->entries);
	p->entries = NULL;
	p->cap = 0;
}

enum want { WANT_READ, WANT_IDLE, WANT_VACANT };

static bool fits(const struct obj_entry *e, enum want want)
{
	switch (want) {
	case WANT_READ:
		return e->state == OBJ_PRESENT && !e->writing && e->readers < OBJ_POOL_MAX_READERS;
	case WANT_IDLE:
		return e->state == OBJ_PRESENT && !e->writing && !e->readers;
	case WANT_VACANT:
		return e->state != OBJ_PRESENT && !e->writing && !e->readers;
	}
	return false;
}

/* Random probes find a fit at once in the usual case (most slots fit);
 * the scan makes "none fits" a certain answer rather than a guess. */
static uint32_t pick(struct obj_pool *p, uint64_t *rng, enum want want)
{
	uint32_t start;

	for (int k = 0; k < PROBES; k++) {
		uint32_t i = (uint32_t)obj_rng_below(rng, p->cap);
		if (fits(&p->entries[i], want))
			return i;
	}
	start = (uint32_t)obj_rng_below(rng, p->cap);
	for (uint32_t k = 0; k < p->cap; k++) {
		uint32_t i = start + k < p->cap ? start + k : start + k - p->cap;
		if (fits(&p->entries[i], want))
			return i;
	}
	return OBJ_POOL_NONE;
}

uint32_t obj_pool_pick_read(struct obj_pool *p, uint64_t *rng)
{
	return p->n_present ? pick(p, rng, WANT_READ) : OBJ_POOL_NONE;
}

uint32_t obj_pool_pick_idle(struct obj_pool *p, uint64_t *rng)
{
	return p->n_present ? pick(p, rng, WANT_IDLE) : OBJ_POOL_NONE;
}

uint32_t obj_pool_pick_vacant(struct obj_pool *p, uint64_t *rng)
{
	return obj_pool_vacant(p) ? pick(p, rng, WANT_VACANT) : OBJ_POOL_NONE;
}

uint32_t obj_pool_next(struct obj_pool *p, uint32_t *cursor, unsigned state_mask)
{
	for (; *cursor < p->cap; (*cursor)++) {
		const struct obj_entry *e = &p->entries[*cursor];
		if ((state_mask & OBJ_MASK(e->state)) && !e->writing && !e->readers)
			return (*cursor)++;
	}
	return OBJ_POOL_NONE;
}

static void set_state(struct obj_pool *p, struct obj_entry *e, enum obj_state state)
{
	p->n_present -= e->state == OBJ_PRESENT;
	p->n_doubtful -= e->state == OBJ_DOUBTFUL;
	e->state = (uint8_t)state;
	p->n_present += state == OBJ_PRESENT;
	p->n_doubtful += state == OBJ_DOUBTFUL;
}

void obj_pool_restore(struct obj_pool *p, uint32_t i, enum obj_state state, uint64_t id,
		      uint32_t version, uint64_t size)
{
	struct obj_entry *e = &p->entries[i];
	set_state(p, e, state);
	e->id = id;
	e->version = version;
	e->size = size;
	if (id >= p->next_id)
		p->next_id = id + 1;
}

void obj_pool_begin_read(struct obj_pool *p, uint32_t i)
{
	p->entries[i].readers++;
}

void obj_pool_end_read(struct obj_pool *p, uint32_t i, bool gone)
{
	struct obj_entry *e = &p->entries[i];
	e->readers--;
	/* Lost by the server: the name is gone, as after a DELETE (the
	 * ledger says deleted too); nobody reads it again, and the slot's
	 * next object gets a new name. */
	if (gone && e->state == OBJ_PRESENT) {
		e->write_seq = ++p->write_seq;
		set_state(p, e, OBJ_EMPTY);
	}
}

void obj_pool_begin_put(struct obj_pool *p, uint32_t i, uint64_t size)
{
	struct obj_entry *e = &p->entries[i];
	if (e->state == OBJ_EMPTY) {
		e->id = p->next_id++;
		e->version = 1;
	} else {
		e->version++;
	}
	e->size = size;
	e->writing = 1;
}

void obj_pool_begin_delete(struct obj_pool *p, uint32_t i)
{
	p->entries[i].writing = 1;
}

void obj_pool_end_write(struct obj_pool *p, uint32_t i, bool was_delete, bool ok)
{
	struct obj_entry *e = &p->entries[i];
	e->writing = 0;
	e->write_seq = ++p->write_seq;
	if (!ok)
		set_state(p, e, OBJ_DOUBTFUL);
	else
		set_state(p, e, was_delete ? OBJ_EMPTY : OBJ_PRESENT);
}
