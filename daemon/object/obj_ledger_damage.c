// SPDX-License-Identifier: GPL-2.0-only
/*
 * A damaged ledger (see obj_ledger.h): the records in a damaged stretch
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
