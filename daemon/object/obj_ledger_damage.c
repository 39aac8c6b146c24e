// SPDX-License-Identifier: GPL-2.0-only
/*
 * Records lost to damage or to a host restart (see obj_ledger.h).
 *
 * A damaged ledger: the records in a damaged stretch
 * cannot be read, not even the slot they were about, so after damage
 * every slot's last write is in doubt until a record after the last
 * damage fixes it whole:
 *
 *   - an R_ACK of a PUT whose R_INTEND_PUT also came after the damage
 *     (name, version and size are the intent's, the outcome the ack's;
 *     an intent before the damage may have been aborted and followed by
 *     another in the lost records);
 *   - an R_SETTLE (a read said what the server holds under the name) or
 *     an R_SLOT (a map's state, whole).
 *
 * The others are applied as they are (their slot is still in doubt).  A
 * slot in doubt that may hold an object (acknowledged, or a write
 * pending) is marked unknown; a deleted one is not: its name is never
 * written again, so a HEAD that finds it is still a resurrection.
 */
#include <errno.h>
#include <stdlib.h>

#include "obj_ledger.h"
#include "obj_ledger_int.h"

int obj_ledger_damage_note(struct ledger_damage *d, uint32_t slots, bool in_map,
			   uint64_t offset)
{
	if (!d->seen) {
		d->intent_at = calloc(slots, sizeof(*d->intent_at));
		d->resolved_at = calloc(slots, sizeof(*d->resolved_at));
		if (!d->intent_at || !d->resolved_at)
			return -ENOMEM;
		d->seen = true;
		d->in_map = in_map;
		d->offset = offset;
	}
	d->damage_at = ++d->seq;
	return 0;
}

void obj_ledger_damage_track(struct ledger_damage *d, const struct obj_ledger_entry *e,
			     const struct rec *r)
{
	if (!d->seen)
		return;
	d->seq++;
	switch (r->type) {
	case R_INTEND_PUT:
		d->intent_at[r->slot] = d->seq;
		break;
	case R_ACK:
		if (e->pending == OBJ_PENDING_PUT && d->intent_at[r->slot] > d->damage_at)
			d->resolved_at[r->slot] = d->seq;
		break;
	case R_SLOT:
	case R_SETTLE:
		d->resolved_at[r->slot] = d->seq;
		break;
	default:
		break;
	}
}

uint64_t obj_ledger_damage_mark(const struct ledger_damage *d, struct obj_ledger *l)
{
	uint64_t n = 0;
	if (!d->seen)
		return 0;
	for (uint32_t s = 0; s < l->slots; s++) {
		struct obj_ledger_entry *e = &l->entries[s];
		if (d->resolved_at[s] > d->damage_at)
			continue;
		if (e->state == OBJ_LEDGER_PRESENT || e->pending != OBJ_PENDING_NONE) {
			e->unknown = 1;
			n++;
		}
	}
	return n;
}

void obj_ledger_damage_free(struct ledger_damage *d)
{
	free(d->intent_at);
	free(d->resolved_at);
	d->intent_at = d->resolved_at = NULL;
}

/* A range of name numbers set aside (a fold writes them again, so the
 * same range may be read twice).  Names stay below 2^40 (obj_key). */
int obj_ledger_add_lost_ids(struct obj_ledger *l, uint64_t from, uint64_t to)
{
	if (from >= to || to >= UINT64_C(1) << 40)
		return -ERANGE;
	for (size_t i = 0; i < l->n_lost; i++)
		if (l->lost[i].from == from && l->lost[i].to == to)
			return 0;
	struct obj_ledger_ids *n = realloc(l->lost, (l->n_lost + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	l->lost = n;
	l->lost[l->n_lost++] = (struct obj_ledger_ids){ from, to };
	return 0;
}

/*
 * A host restart (see obj_ledger_info): the records of the journal's last
 * unsynced second may be gone, whichever slots they were about.  Every
 * slot that may hold an object is unknown, as after damage (a deleted one
 * stays certain: its name is never written again, and a new name in its
 * slot is one of those set aside), and the names the lost records may
 * have begun, those after every name the ledger knows, are set aside.
 */
int obj_ledger_host_restarted(struct obj_ledger *l, struct obj_ledger_info *info)
{
	uint64_t last = 0;
	for (uint32_t s = 0; s < l->slots; s++) {
		struct obj_ledger_entry *e = &l->entries[s];
		if (e->id > last)
			last = e->id;
		if (e->pending == OBJ_PENDING_PUT && e->try_id > last)
			last = e->try_id;
		if (e->state == OBJ_LEDGER_PRESENT || e->pending != OBJ_PENDING_NONE)
			e->unknown = 1;
	}
	for (size_t i = 0; i < l->n_lost; i++)
		if (l->lost[i].to - 1 > last)
			last = l->lost[i].to - 1;
	info->host_restarted = true;
	info->lost_ids = (struct obj_ledger_ids){ last + 1, last + 1 + OBJ_LEDGER_LOST_IDS };
	return obj_ledger_add_lost_ids(l, info->lost_ids.from, info->lost_ids.to);
}

size_t obj_ledger_lost_ids(const struct obj_ledger *l, const struct obj_ledger_ids **ret)
{
	*ret = l->lost;
	return l->n_lost;
}

bool obj_ledger_id_lost(const struct obj_ledger *l, uint64_t id)
{
	for (size_t i = 0; i < l->n_lost; i++)
		if (id >= l->lost[i].from && id < l->lost[i].to)
			return true;
	return false;
}
