// SPDX-License-Identifier: GPL-2.0-only
/* The generation map and flush epochs of a verified target (verify_map.h). */
#include "verify_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "verify.h"

#define STATE_MAGIC UINT64_C(0x5453594656414f53) /* "SOAVFYST" */
#define STATE_VERSION 1u
#define STATE_HEADER 128u

struct verify_map_entry {
	uint64_t block;
	uint32_t epoch;             /* low 32 bits */
	uint8_t prev;               /* the block's generation before this write */
	uint8_t prev_back;          /* and how uncertain that was */
	uint8_t durable;            /* a FUA write that completed: certain whatever comes */
	uint8_t reserved;
};

struct verify_map_slot {
	uint64_t key;               /* block + 1; 0: empty */
	uint8_t back;
	uint8_t reserved[7];
};

struct verify_map_state {
	uint64_t magic;
	uint32_t version, ring_cap;
	uint64_t run_id;
	uint64_t n_blocks;
	uint64_t seq;
	uint64_t epoch, flushed;
	uint64_t head, tail;
	uint32_t filled, unc_cap;
	uint64_t unc_n;
	int64_t boot_wall_s;        /* when the host last booted, as the last opener saw it */
	uint32_t clean;             /* closed by verify_map_close_clean: everything synced */
	uint32_t pad0;
	uint64_t unc_dropped;       /* marks not in the table: lost if this process ends */
	uint32_t target;            /* the target it was made for (verify_hash of its path) */
	uint32_t target_known;      /* 0 in older files: taken as this one's at the next open */
	uint64_t boot_id;           /* the last opener's boot (0 in older files, or unknown) */
	struct verify_map_entry ring[VERIFY_MAP_RING];
	struct verify_map_slot unc[VERIFY_MAP_UNCERTAIN];
};

_Static_assert(offsetof(struct verify_map_state, ring) == STATE_HEADER, "state header size");

/* Opens NAME in dir_fd read-write, created if absent (then *ret_created),
 * and checks it on the descriptor: a regular file with one link, of the
 * size asked for or new. */
static int open_file(int dir_fd, const char *name, size_t len, bool *ret_created, char *err,
		     size_t errlen)
{
	struct stat st;
	bool created = true;
	int fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);

	if (fd < 0 && errno == EEXIST) {
		created = false;
		fd = openat(dir_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0) {
		int r = -errno;
		snprintf(err, errlen, "cannot open the verify state %s: %s", name, strerror(errno));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		snprintf(err, errlen, "the verify state %s is not a plain file of its own (a "
				      "regular file with one link)", name);
		close(fd);
		return -EINVAL;
	}
	if (!created && (uint64_t)st.st_size != len) {
		snprintf(err, errlen, "the verify state %s is %lld bytes, not %zu: it belongs to "
				      "another device size; start a new run", name,
			 (long long)st.st_size, len);
		close(fd);
		return -EINVAL;
	}
	if (created && ftruncate(fd, (off_t)len) < 0) {
		int r = -errno;
		snprintf(err, errlen, "cannot size the verify state %s: %s", name, strerror(errno));
		close(fd);
		return r;
	}
	*ret_created = created;
	return fd;
}

static void *map_file(int fd, size_t len, const char *name, char *err, size_t errlen)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		snprintf(err, errlen, "cannot map the verify state %s: %s", name, strerror(errno));
		return NULL;
	}
	return p;
}

static size_t unc_find(const struct verify_map_state *st, uint64_t block)
{
	size_t cap = VERIFY_MAP_UNCERTAIN;
	size_t i = (size_t)((block * UINT64_C(0x9e3779b97f4a7c15)) >> 40) % cap;

	while (st->unc[i].key && st->unc[i].key != block + 1)
		i = (i + 1) % cap;
	return i;
}

/* Linear probing stays short while the table is at most 3/4 full. */
static bool unc_full(const struct verify_map_state *st)
{
	return st->unc_n >= VERIFY_MAP_UNCERTAIN / 4 * 3;
}

static size_t spill_find(const struct verify_map *m, uint64_t block)
{
	size_t mask = m->spill_cap - 1;
	size_t i = (size_t)((block * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;

	while (m->spill[i].key && m->spill[i].key != block + 1)
		i = (i + 1) & mask;
	return i;
}

/* The file counts what only memory holds, and what was lost. */
static void spill_count(struct verify_map *m)
{
	m->st->unc_dropped = m->lost + m->spill_n;
}

/* At most 2^20 slots, 16 MiB, for 2^19 marks (half of them): past that,
 * marks are lost, as with no memory, and stale reads are uncertain from
 * then on. */
#define SPILL_MAX_SLOTS (UINT64_C(1) << 20)

static int spill_grow(struct verify_map *m)
{
	size_t cap = m->spill_cap ? 2 * m->spill_cap : 4096;
	if (cap > SPILL_MAX_SLOTS)
		return -ENOSPC;
	struct verify_map_slot *old = m->spill, *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	size_t old_cap = m->spill_cap;
	m->spill = slots;
	m->spill_cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key)
			m->spill[spill_find(m, old[i].key - 1)] = old[i];
	free(old);
	return 0;
}

/* Backward-shift deletion, as unc_delete (in memory: no order to keep). */
static void spill_delete(struct verify_map *m, size_t i)
{
	size_t mask = m->spill_cap - 1, j = i;

	for (;;) {
		j = (j + 1) & mask;
		if (!m->spill[j].key)
			break;
		uint64_t b = m->spill[j].key - 1;
		size_t home = (size_t)((b * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		m->spill[i] = m->spill[j];
		i = j;
	}
	m->spill[i].key = 0;
	m->spill_n--;
	spill_count(m);
}

uint8_t verify_map_uncertain(const struct verify_map *m, uint64_t block)
{
	if (m->st->unc_n) {
		const struct verify_map_slot *s = &m->st->unc[unc_find(m->st, block)];
		if (s->key)
			return s->back;
	}
	if (!m->spill_n)
		return 0;
	const struct verify_map_slot *s = &m->spill[spill_find(m, block)];
	return s->key ? s->back : 0;
}

static void unc_insert(struct verify_map_state *st, size_t i, uint64_t block, uint8_t back)
{
	st->unc[i].back = back;
	st->unc[i].key = block + 1;
	st->unc_n++;
}

int verify_map_mark_uncertain(struct verify_map *m, uint64_t block, uint8_t back)
{
	struct verify_map_state *st = m->st;
	size_t i = unc_find(st, block);

	if (back > 127)
		back = 127;
	if (back == 0)
		back = 1;
	if (st->unc[i].key) {
		if (back > st->unc[i].back)
			st->unc[i].back = back;
		return 0;
	}
	if (m->spill_n) {
		size_t k = spill_find(m, block);
		if (m->spill[k].key) {
			if (back > m->spill[k].back)
				m->spill[k].back = back;
			return 0;
		}
	}
	if (!unc_full(st)) {
		unc_insert(st, i, block, back);
		return 0;
	}
	/* Full: held in memory, exactly, and counted in the file first, so
	 * a crash from here on finds it lost. */
	if ((m->spill_n + 1) * 2 > m->spill_cap && spill_grow(m) < 0) {
		m->lost++;
		spill_count(m);
		return -ENOSPC;
	}
	size_t k = spill_find(m, block);
	m->spill_n++;
	spill_count(m);
	m->spill[k].key = block + 1;
	m->spill[k].back = back;
	return 0;
}

/* Linear probing's deletion: later slots of the same run move back, so
 * no lookup stops at the hole.  The table is in a file a SIGKILL can cut
 * at any store, so no store may lose an entry: a later one is copied over
 * the hole first (for a moment it is there twice, which only keeps it
 * uncertain longer), and the last hole is cleared at the end.  Clearing
 * the deleted slot first would hide, until the shift, every later block
 * whose probe run crosses it: a crash there made certain a block that was
 * not, and its next read a false "stale". */
static void unc_delete(struct verify_map_state *st, size_t i)
{
	size_t cap = VERIFY_MAP_UNCERTAIN, j = i;

	for (;;) {
		j = (j + 1) % cap;
		if (!st->unc[j].key)
			break;
		uint64_t b = st->unc[j].key - 1;
		size_t home = (size_t)((b * UINT64_C(0x9e3779b97f4a7c15)) >> 40) % cap;
		/* Leave j where it is if its home lies cyclically in (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		st->unc[i] = st->unc[j];
		atomic_signal_fence(memory_order_seq_cst);
		i = j;
	}
	st->unc[i].key = 0;
	st->unc_n--;
}

void verify_map_settle(struct verify_map *m, uint64_t block, uint8_t gen)
{
	m->gens[block] = gen;
	if (m->st->unc_n) {
		size_t i = unc_find(m->st, block);
		if (m->st->unc[i].key) {
			unc_delete(m->st, i);
			return;
		}
	}
	if (m->spill_n) {
		size_t k = spill_find(m, block);
		if (m->spill[k].key)
			spill_delete(m, k);
	}
}

bool verify_map_next_uncertain(const struct verify_map *m, size_t *cursor, uint64_t *ret_block)
{
	for (; *cursor < VERIFY_MAP_UNCERTAIN; (*cursor)++)
		if (m->st->unc[*cursor].key) {
			*ret_block = m->st->unc[*cursor].key - 1;
			/* Settling it may move a later block back into this
			 * slot: look at it again. */
			return true;
		}
	for (; *cursor - VERIFY_MAP_UNCERTAIN < m->spill_cap; (*cursor)++)
		if (m->spill[*cursor - VERIFY_MAP_UNCERTAIN].key) {
			*ret_block = m->spill[*cursor - VERIFY_MAP_UNCERTAIN].key - 1;
			return true;
		}
	return false;
}

uint64_t verify_map_n_uncertain(const struct verify_map *m)
{
	return m->st->unc_n + m->spill_n;
}

uint64_t verify_map_n_spilled(const struct verify_map *m)
{
	return m->spill_n;
}

uint64_t verify_map_unc_lost(const struct verify_map *m)
{
	return m->lost;
}

/* The spill's marks into the table's room: the table first, then the
 * count, so a crash between finds one lost too many, never one too few. */
static void spill_drain(struct verify_map *m)
{
	struct verify_map_state *st = m->st;

	for (size_t k = 0; k < m->spill_cap && m->spill_n && !unc_full(st);) {
		if (!m->spill[k].key) {
			k++;
			continue;
		}
		uint64_t block = m->spill[k].key - 1;
		size_t i = unc_find(st, block);
		if (!st->unc[i].key)
			unc_insert(st, i, block, m->spill[k].back);
		atomic_signal_fence(memory_order_seq_cst);
		/* A later mark may move back into k: look at it again. */
		spill_delete(m, k);
	}
	if (!m->spill_n && m->spill_cap) {
		free(m->spill);
		m->spill = NULL;
		m->spill_cap = 0;
	}
}

static bool epoch_done(uint32_t entry_epoch, uint64_t flushed)
{
	return (int32_t)(entry_epoch - (uint32_t)flushed) <= 0;
}

/*
 * A crash left epochs unflushed: each block written in them may hold any
 * generation since the one before its first write there.  They go into
 * the uncertain table, and the ring is emptied; doing it twice (a crash
 * during this) gives the same table.
 */
static void take_open_epochs(struct verify_map *m)
{
	struct verify_map_state *st = m->st;

	for (uint64_t i = st->tail; i < st->head; i++) {
		const struct verify_map_entry *e = &st->ring[i % VERIFY_MAP_RING];
		if (epoch_done(e->epoch, st->flushed) || e->durable || e->block >= m->n_blocks)
			continue;
		int steps = verify_gen_steps(e->prev, m->gens[e->block]);
		unsigned back = (steps < 0 ? 127u : (unsigned)steps) + e->prev_back;
		if (verify_map_uncertain(m, e->block) < back &&
		    verify_map_mark_uncertain(m, e->block, back > 127 ? 127 : (uint8_t)back) == 0)
			m->resumed_uncertain++;
	}
	st->tail = st->head;
}

int verify_map_open(int dir_fd, const char *name, uint64_t n_blocks, uint32_t target,
		    uint64_t run_id, bool filled, int64_t boot_wall_s, uint64_t boot_id,
		    struct verify_map *ret, char *err, size_t errlen)
{
	char path[256];
	bool state_new, map_new;
	struct verify_map m = { .n_blocks = n_blocks, .map_len = n_blocks ? n_blocks : 1,
				.st_len = sizeof(struct verify_map_state) };
	int r = -EINVAL;

	snprintf(path, sizeof(path), "%s.state", name);
	int st_fd = open_file(dir_fd, path, m.st_len, &state_new, err, errlen);
	if (st_fd < 0)
		return st_fd;
	snprintf(path, sizeof(path), "%s.map", name);
	if (state_new)
		unlinkat(dir_fd, path, 0);  /* a map without its state means nothing */
	int map_fd = open_file(dir_fd, path, m.map_len, &map_new, err, errlen);
	if (map_fd < 0) {
		close(st_fd);
		return map_fd;
	}
	m.st = map_file(st_fd, m.st_len, name, err, errlen);
	m.gens = m.st ? map_file(map_fd, m.map_len, name, err, errlen) : NULL;
	close(st_fd);
	close(map_fd);
	if (!m.gens)
		goto fail;
	if (state_new) {
		struct verify_map_state *st = m.st;
		st->run_id = run_id;
		st->n_blocks = n_blocks;
		st->version = STATE_VERSION;
		st->ring_cap = VERIFY_MAP_RING;
		st->unc_cap = VERIFY_MAP_UNCERTAIN;
		st->filled = filled;
		st->target = target;
		st->target_known = 1;
		st->epoch = 1;
		/* Last: a state without its magic was never made whole, and
		 * is refused at the next open. */
		__atomic_store_n(&st->magic, STATE_MAGIC, __ATOMIC_RELEASE);
		m.created = true;
	} else if (m.st->magic != STATE_MAGIC || m.st->version != STATE_VERSION ||
		   m.st->n_blocks != n_blocks || m.st->ring_cap != VERIFY_MAP_RING ||
		   m.st->unc_cap != VERIFY_MAP_UNCERTAIN || m.st->head - m.st->tail > VERIFY_MAP_RING ||
		   m.st->unc_n > VERIFY_MAP_UNCERTAIN) {
		snprintf(err, errlen, "the verify state %s is not one this soakd wrote for %llu "
				      "blocks; start a new run", name, (unsigned long long)n_blocks);
		goto fail;
	} else if (m.st->target_known && m.st->target != target) {
		/* Its generations describe the blocks of another device: read
		 * against this one, every block would look damaged. */
		snprintf(err, errlen, "the verify state %s was made for another target: a verified "
				      "workload's targets cannot change within a run; start a new run, "
				      "or give the workload another name", name);
		goto fail;
	} else {
		m.st->target = target;
		m.st->target_known = 1;
		/* The host went down with the files unsynced: what of them
		 * reached the disk, and in what order, is anyone's guess. */
		int64_t d = m.st->boot_wall_s - boot_wall_s;
		/* The kernel's boot id says it exactly; the boot time, read
		 * from clocks a step of CLOCK_REALTIME moves, where either
		 * opener had none. */
		bool other_boot = m.st->boot_id && boot_id ? m.st->boot_id != boot_id
							   : d > 2 || d < -2;
		m.host_restarted = !m.st->clean && other_boot;
		m.lost = m.st->unc_dropped;
		take_open_epochs(&m);
		m.st->epoch++;          /* this process's writes: a new epoch */
	}
	m.boot_wall_s = boot_wall_s;
	m.boot_id = boot_id;
	if (m.host_restarted) {
		/* As if written under another boot: until the check it owes
		 * is done (verify_map_trusted), every open finds it owed. */
		m.st->boot_wall_s = INT64_MIN / 2;
		m.st->boot_id = UINT64_MAX;
	} else {
		m.st->boot_wall_s = boot_wall_s;
		m.st->boot_id = boot_id;
	}
	m.st->clean = 0;
	/* On disk before the first write: a new state whole (its magic with
	 * it, its files in the directory), and an old one no longer clean (a
	 * clean flag left from the last stop would have a power cut from here
	 * on trust a map older than the blocks). */
	if (msync(m.st, m.st_len, MS_SYNC) < 0 ||
	    (map_new && msync(m.gens, m.map_len, MS_SYNC) < 0) ||
	    ((state_new || map_new) && fsync(dir_fd) < 0)) {
		r = -errno;
		snprintf(err, errlen, "cannot sync the verify state %s: %s", name, strerror(-r));
		goto fail;
	}
	*ret = m;
	return 0;
fail:
	verify_map_close(&m);
	return r;
}

int verify_map_sync_clean(struct verify_map *m)
{
	if (msync(m->gens, m->map_len, MS_SYNC) < 0 || msync(m->st, m->st_len, MS_SYNC) < 0)
		return -errno;
	m->st->clean = 1;
	return msync(m->st, STATE_HEADER, MS_SYNC) < 0 ? -errno : 0;
}

int verify_map_trusted(struct verify_map *m)
{
	m->host_restarted = false;
	m->st->boot_wall_s = m->boot_wall_s;
	m->st->boot_id = m->boot_id;
	return msync(m->st, STATE_HEADER, MS_SYNC) < 0 ? -errno : 0;
}

int verify_map_dirty(struct verify_map *m)
{
	if (!m->st->clean)
		return 0;
	m->st->clean = 0;
	/* Before the writes it comes ahead of: see verify_map_open. */
	return msync(m->st, STATE_HEADER, MS_SYNC) < 0 ? -errno : 0;
}

void verify_map_close(struct verify_map *m)
{
	free(m->spill);
	m->spill = NULL;
	m->spill_cap = m->spill_n = 0;
	if (m->gens)
		munmap(m->gens, m->map_len);
	if (m->st)
		munmap(m->st, m->st_len);
	m->gens = NULL;
	m->st = NULL;
}

uint64_t verify_map_run_id(const struct verify_map *m)
{
	return m->st->run_id;
}

bool verify_map_filled(const struct verify_map *m)
{
	return m->st->filled != 0;
}

uint64_t verify_map_next_seq(struct verify_map *m)
{
	return ++m->st->seq;
}

bool verify_map_ring_full(const struct verify_map *m)
{
	return m->st->head - m->st->tail >= VERIFY_MAP_RING;
}

uint8_t verify_map_write(struct verify_map *m, uint64_t block)
{
	struct verify_map_state *st = m->st;
	uint8_t prev = m->gens[block];
	uint8_t back = verify_map_uncertain(m, block);

	st->ring[st->head % VERIFY_MAP_RING] = (struct verify_map_entry){
		.block = block, .epoch = (uint32_t)st->epoch, .prev = prev, .prev_back = back };
	/* In this order, whatever store a SIGKILL cuts after: the entry, then
	 * the head that makes it count, then the map's new generation. */
	atomic_signal_fence(memory_order_seq_cst);
	st->head++;
	atomic_signal_fence(memory_order_seq_cst);
	uint8_t gen = verify_next_gen(prev);
	/* The write decides what the block holds: certain again, unless a
	 * crash comes first (then the ring entry says how far back to look). */
	verify_map_settle(m, block, gen);
	return gen;
}

uint8_t verify_map_prev_back(const struct verify_map *m, uint64_t pos)
{
	const struct verify_map_state *st = m->st;

	if (pos < st->tail || pos >= st->head)
		return 0;
	return st->ring[pos % VERIFY_MAP_RING].prev_back;
}

uint64_t verify_map_head(const struct verify_map *m)
{
	return m->st->head;
}

void verify_map_durable(struct verify_map *m, uint64_t from, uint64_t to)
{
	struct verify_map_state *st = m->st;

	if (from < st->tail)
		from = st->tail;
	for (; from < to && from < st->head; from++)
		st->ring[from % VERIFY_MAP_RING].durable = 1;
}

uint64_t verify_map_epoch(const struct verify_map *m)
{
	return m->st->epoch;
}

uint64_t verify_map_close_epoch(struct verify_map *m)
{
	return m->st->epoch++;
}

void verify_map_flushed(struct verify_map *m, uint64_t epoch)
{
	struct verify_map_state *st = m->st;

	if (epoch > st->flushed)
		st->flushed = epoch;
	while (st->tail < st->head && epoch_done(st->ring[st->tail % VERIFY_MAP_RING].epoch,
						    st->flushed))
		st->tail++;
}

uint64_t verify_map_flushed_epoch(const struct verify_map *m)
{
	return m->st->flushed;
}

uint64_t verify_map_open_writes(const struct verify_map *m)
{
	return m->st->head - m->st->tail;
}

void verify_map_sync_async(struct verify_map *m)
{
	if (m->spill_n)
		spill_drain(m);
	msync(m->st, m->st_len, MS_ASYNC);
	msync(m->gens, m->map_len, MS_ASYNC);
}
