// SPDX-License-Identifier: GPL-2.0-only
/* Writes that may still land (obj_late.h). */
#include "obj_late.h"

#include <stdlib.h>
#include <string.h>

static size_t home(const struct obj_late *t, uint64_t id)
{
	return (size_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (t->cap - 1);
}

static size_t find(const struct obj_late *t, uint64_t id)
{
	size_t i = home(t, id);
	while (t->e[i].id && t->e[i].id != id)
		i = (i + 1) & (t->cap - 1);
	return i;
}

/* Backward-shift deletion: no lookup stops at the hole. */
static void remove_at(struct obj_late *t, size_t i)
{
	size_t j = i, mask = t->cap - 1;
	for (;;) {
		j = (j + 1) & mask;
		if (!t->e[j].id)
			break;
		size_t h = home(t, t->e[j].id);
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		t->e[i] = t->e[j];
		i = j;
	}
	t->e[i].id = 0;
	t->n--;
}

static bool expired(const struct obj_late_entry *e, uint64_t now_ns)
{
	return now_ns > e->last_ns && now_ns - e->last_ns > OBJ_LATE_WINDOW_NS;
}

/* Entries past their window go; then the table doubles if it is still
 * over half full.  False when there is no memory (the write is then
 * judged as before: at worst a false alarm, never a miss). */
static bool make_room(struct obj_late *t, uint64_t now_ns)
{
	if (t->cap && (t->n + 1) * 2 <= t->cap)
		return true;
	for (size_t i = 0; i < t->cap;)
		if (t->e[i].id && expired(&t->e[i], now_ns))
			remove_at(t, i);   /* a later entry may move into i */
		else
			i++;
	if (t->cap && (t->n + 1) * 2 <= t->cap)
		return true;
	size_t cap = t->cap ? 2 * t->cap : 64;
	struct obj_late grown = { calloc(cap, sizeof(*grown.e)), cap, 0 };
	if (!grown.e)
		return false;
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].id) {
			grown.e[find(&grown, t->e[i].id)] = t->e[i];
			grown.n++;
		}
	free(t->e);
	*t = grown;
	return true;
}

static struct obj_late_entry *entry(struct obj_late *t, uint64_t id, uint64_t now_ns)
{
	if (t->cap) {
		size_t i = find(t, id);
		if (t->e[i].id)
			return &t->e[i];
	}
	if (!make_room(t, now_ns))
		return NULL;
	size_t i = find(t, id);
	t->e[i] = (struct obj_late_entry){ .id = id };
	t->n++;
	return &t->e[i];
}

void obj_late_put(struct obj_late *t, uint64_t id, uint32_t version, uint64_t size,
		  uint64_t now_ns)
{
	struct obj_late_entry *e = id ? entry(t, id, now_ns) : NULL;
	if (!e || !version)
		return;
	e->last_ns = now_ns;
	if (obj_late_find_version(e, version) >= 0)
		return;
	/* The oldest (the last slot) makes room: newest first. */
	memmove(&e->version[1], &e->version[0], (OBJ_LATE_PUTS - 1) * sizeof(e->version[0]));
	memmove(&e->size[1], &e->size[0], (OBJ_LATE_PUTS - 1) * sizeof(e->size[0]));
	e->version[0] = version;
	e->size[0] = size;
}

int obj_late_find_version(const struct obj_late_entry *e, uint64_t version)
{
	for (int i = 0; e && version && i < OBJ_LATE_PUTS; i++)
		if (e->version[i] == version)
			return i;
	return -1;
}

int obj_late_find_size(const struct obj_late_entry *e, uint64_t size)
{
	for (int i = 0; e && i < OBJ_LATE_PUTS && e->version[i]; i++)
		if (e->size[i] == size)
			return i;
	return -1;
}

void obj_late_delete(struct obj_late *t, uint64_t id, uint64_t now_ns)
{
	struct obj_late_entry *e = id ? entry(t, id, now_ns) : NULL;
	if (e) {
		e->del = true;
		e->last_ns = now_ns;
	}
}

const struct obj_late_entry *obj_late_get(const struct obj_late *t, uint64_t id,
					  uint64_t now_ns)
{
	if (!t->n || !id)
		return NULL;
	size_t i = find(t, id);
	return t->e[i].id && !expired(&t->e[i], now_ns) ? &t->e[i] : NULL;
}

void obj_late_retire(struct obj_late *t, uint64_t id, uint64_t now_ns)
{
	if (!t->n || !id)
		return;
	size_t i = find(t, id);
	if (t->e[i].id && !expired(&t->e[i], now_ns))
		t->e[i].last_ns = now_ns;
}

void obj_late_free(struct obj_late *t)
{
	free(t->e);
	*t = (struct obj_late){ 0 };
}
