/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_ENGINE_H
#define SOAK_OBJ_ENGINE_H

/*
 * What the object engine's files share: the workload-wide client (config,
 * credentials, protocol), one transfer per slot of a thread's concurrency,
 * and the protocols' const ops.  libcurl is used in obj_*.c only.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "config/obj_config.h"
#include "obj_creds.h"
#include "obj_late.h"
#include "obj_ledger.h"
#include "obj_payload.h"
#include "obj_pool.h"
#include "workload/fidelity.h"
#include "workload/stats.h"

#define OBJ_KEY_MAX (OBJ_MAX_PREFIX_LEN + 128)
#define OBJ_ERRBODY_MAX 2048
#define OBJ_LIST_MAX_BYTES (UINT64_C(16) << 20)
#define OBJ_LIST_MAX_PAGES 10000
#define OBJ_ERRORS_LOGGED 5       /* per class and workload */
#define OBJ_CORRUPT_LOGGED 10
#define OBJ_DELETED_RING 4096
#define OBJ_LIST_MAX_IDS (UINT64_C(16) << 20)
/* What a transfer keeps of a listing once its op has ended, for the next:
 * room for a page of 1000 keys (about 400 KiB) and the ids of a pool of
 * 64 Ki names a thread.  A larger page or listing, a hostile or broken
 * server's up to the MAX above, is let go (obj_xfer_trim). */
#define OBJ_LIST_KEEP_BYTES (UINT64_C(1) << 20)
#define OBJ_LIST_KEEP_IDS (UINT64_C(64) << 10)
#define OBJ_REFUSAL_MAX 320       /* a refusal's message kept for the reason */

/* What a transfer does; the first five are the mix's ops. */
enum obj_kind {
	OBJ_KIND_PUT = OBJ_OP_PUT,
	OBJ_KIND_GET = OBJ_OP_GET,
	OBJ_KIND_STAT = OBJ_OP_STAT,
	OBJ_KIND_DELETE = OBJ_OP_DELETE,
	OBJ_KIND_LIST = OBJ_OP_LIST,
	OBJ_KIND_PREFILL,   /* a PUT creating the pool before the mix starts */
	OBJ_KIND_CLEANUP,   /* a DELETE of what the workload created */
	OBJ_KIND_AUDIT,     /* a GET of an object the ledger holds, after a restart */
	OBJ_KIND_AUDIT_HEAD,/* a HEAD of a name whose last write is uncertain or deleted */
	OBJ_KINDS,
};

struct obj_client;

/* A protocol: how a request is addressed and signed, and how the server
 * says what went wrong. */
struct obj_proto {
	const char *name;
	/* Options every transfer of the workload shares (signing, headers). */
	int (*setup_handle)(const struct obj_client *cl, CURL *easy);
	/* The URL of a key (escaped here). */
	int (*object_url)(const struct obj_client *cl, const char *key, char *buf, size_t len);
	/* The URL of one page of a listing of a bucket; NULL when the
	 * protocol has none. */
	int (*list_url)(const struct obj_client *cl, unsigned bucket, const char *prefix,
			const char *token, char *buf, size_t len);
	/* The server's own words in an error response. */
	void (*error_message)(const char *body, size_t len, char *out, size_t outlen);
	/*
	 * Asks the endpoint whether the workload can run (and creates the
	 * bucket if configured).  Returns 0; -EAGAIN when the endpoint cannot
	 * be reached now (the workload retries) with *ret_class saying how it
	 * failed; another negative errno with err set when it never will (bad
	 * credentials, no such bucket).
	 */
	int (*probe)(const struct obj_client *cl, enum op_error_class *ret_class, char *err,
		     size_t errlen);
};

extern const struct obj_proto obj_proto_s3;
extern const struct obj_proto obj_proto_http;

/* Shared by a workload's threads; read-only while they run, except the
 * atomic counters that bound logging. */
struct obj_client {
	const struct workload_config *wcfg;
	const struct object_config *cfg;
	const struct obj_proto *proto;
	struct obj_creds creds;
	char *userpwd;              /* "access:secret" for libcurl, wiped on release */
	char *sigv4;                /* "aws:amz:REGION:s3" */
	char *connect_to;           /* CURLOPT_CONNECT_TO entry */
	struct curl_slist *headers; /* headers of every request */
	struct curl_slist *connect_to_list;
	char base_url[OBJ_MAX_URL_LEN]; /* keys go under base_url + "/" (bucket 0) */
	char run_tag[17];           /* this run's names: unique, so cleanup only hits ours */
	char name_root[OBJ_KEY_MAX];/* prefix + run tag + "/" */
	int op_index[OBJ_KINDS];    /* stats slot of each kind, -1 if it never happens */
	_Atomic unsigned errors_logged[OP_ERR_CLASSES];
	_Atomic unsigned corrupt_logged;
	_Atomic unsigned verify_logged;   /* lost, stale, resurrected */
	_Atomic bool version_logged;
	_Atomic bool sse_unconfirmed_logged;
	_Atomic bool vid_unkept_logged;     /* "versioning": said once */
	_Atomic bool ready;         /* the endpoint answered the probe */
	/* "endpoints": the CONNECT_TO of each (NULL for the first, which
	 * requests name), and what each carried over the run, all threads. */
	struct curl_slist *ep_connect[OBJ_MAX_ENDPOINTS];
	struct obj_ep_count {
		_Atomic uint64_t ops, errors, latency_sum_ns, latency_max_ns;
	} ep_count[OBJ_MAX_ENDPOINTS];
	/* Since the last interval record: each endpoint's requests, under
	 * ep_lock (threads add, the main thread takes and resets). */
	pthread_mutex_t ep_lock;
	bool ep_lock_ready;
	struct obj_ep_interval {
		uint64_t ops, errors;
		struct hist latency;    /* submit to completion */
	} *ep_iv;
};

/* obj_endpoints.c: a thread's view of the pool of endpoints. */
struct obj_ep_state {
	unsigned outstanding;       /* this thread's requests in flight there */
	uint64_t hold_until_ns, backoff_ns; /* failing: not picked until then */
	uint64_t failing_since_ns, failed_ops;
};
struct obj_eps {
	unsigned n, next;           /* n: 0 with a single "endpoint" */
	struct obj_ep_state ep[OBJ_MAX_ENDPOINTS];
};

/* obj_client.c: credentials, common headers, base URL, run tag. */
int obj_client_init(struct obj_client *cl, const struct workload_config *wcfg, char *err,
		    size_t errlen);
void obj_client_free(struct obj_client *cl);
/* "buckets": N: bucket i's name and URL, and the bucket of a key. */
void obj_bucket_name(const struct obj_client *cl, unsigned i, char *buf, size_t len);
int obj_bucket_url(const struct obj_client *cl, unsigned i, char *buf, size_t len);
unsigned obj_key_bucket(const struct obj_client *cl, const char *key);
/* Names under prefix + tag + "/"; -ENAMETOOLONG. */
int obj_client_set_tag(struct obj_client *cl, const char *tag);

struct obj_stream;
struct obj_xfer;

#define OBJ_ETAG_MAX 128

/* One part of a multipart upload in flight beside its op's others. */
struct obj_part {
	CURL *easy;
	struct obj_xfer *x;
	uint32_t number;            /* from 1 */
	uint64_t off, len, pos;     /* payload bytes of the part, sent so far */
	bool busy;
	char errbuf[CURL_ERROR_SIZE];
	char url[OBJ_MAX_URL_LEN];
};

struct obj_xfer {
	CURL *easy;
	struct obj_stream *st;
	unsigned endpoint;          /* index in "endpoints" of the one it went to */
	enum obj_kind kind;
	bool busy;
	uint32_t slot;              /* pool slot; OBJ_POOL_NONE for LIST */
	uint64_t due_ns, submit_ns;

	struct obj_payload payload;
	uint64_t size;              /* the object's size */
	uint64_t off, len;          /* the payload bytes the body should carry */
	uint64_t pos;               /* body bytes moved so far */
	bool ranged;
	bool verify;
	bool mismatch;
	bool expect_gone;           /* audit of a deleted name: 404 is the good answer */
	/* A read of a name with unanswered writes (obj_late.h): what they
	 * would leave, a read of which is uncertain, not wrong (id 0: none). */
	struct obj_late_entry late;
	uint64_t expect_version;    /* what the ledger says was acknowledged */
	uint64_t mismatch_at;
	uint8_t got[16];            /* received bytes at the mismatch */
	size_t got_len;
	uint8_t head[16];           /* first bytes of a body starting at offset 0 */
	size_t head_len;
	/* A body whose header names another version of this object (an
	 * older one, an unanswered PUT's): the rest is checked against that
	 * version, so a header alone does not pass for it. */
	struct obj_payload alt;
	bool alt_on, alt_bad;

	long status;                /* 0 until the first body byte */
	/* Times the request was sent: libcurl sends it again, unasked, on a
	 * new connection when a reused one closed without an answer, and
	 * the first may have done its work (a DELETE's 404 then proves
	 * nothing was lost). */
	unsigned sends;
	bool resent_gone;           /* a DELETE sent again met a 404 */
	char body[OBJ_ERRBODY_MAX]; /* an error response's body */
	size_t body_len;
	char *list_buf;             /* a listing page */
	size_t list_len, list_cap;
	unsigned list_pages;
	uint64_t list_keys, list_bytes;
	/* A listing checked against the pool (obj_book_list): the name
	 * numbers of this thread's objects in it, keys under the run's root
	 * soakd never makes, the sub-prefix listed (-1: all) and the pool's
	 * write count when it started. */
	uint64_t *list_ids;
	size_t list_n, list_ids_cap;
	uint64_t list_strange;
	bool list_whole;            /* every page was read and parsed */
	int list_sub;
	unsigned list_bucket;       /* "buckets": the one listed */
	uint32_t list_seq;

	/* A multipart PUT (obj_multipart.c): its step, parts, upload id and
	 * the CompleteMultipartUpload document being built. */
	uint8_t mp_step;            /* enum obj_mp_step */
	bool mp_failed;
	enum op_error_class mp_fail_class;
	uint32_t mp_part, mp_parts;
	uint64_t mp_sent;
	char mp_upload_id[256];
	char *mp_etags;
	size_t mp_etags_len, mp_etags_cap;
	/* Parts in flight at once ("multipart_parallel"), on handles of
	 * their own kept for the next upload. */
	struct obj_part *parts;
	unsigned n_part_slots, mp_inflight;
	uint32_t mp_next, mp_done;
	char (*mp_part_etags)[OBJ_ETAG_MAX];

	struct curl_slist *headers; /* per op (checksums); NULL: the client's */
	char errbuf[CURL_ERROR_SIZE];
	char key[OBJ_KEY_MAX];
	char url[OBJ_MAX_URL_LEN];
	char range[64];
	/* A versioned bucket: the acknowledged version a GET reads ("" the latest). */
	char version_id[OBJ_LEDGER_VID_MAX];
};

#define OBJ_NS_PER_S UINT64_C(1000000000)
#define OBJ_NS_PER_MS UINT64_C(1000000)
/* Closed loop, after a failure: pause this long, doubling up to the max. */
#define OBJ_BACKOFF_MIN_NS (10 * OBJ_NS_PER_MS)
#define OBJ_BACKOFF_MAX_NS OBJ_NS_PER_S

struct workload_stream;

/* One workload thread: its transfers, its share of the pool, its state. */
struct obj_stream {
	struct workload_stream *ws;
	struct obj_client *cl;
	unsigned index;
	CURLM *multi;
	struct obj_xfer *xfers;
	unsigned *free_list;
	unsigned n_xfers, n_free;
	struct obj_pool pool;
	struct obj_ledger *ledger;  /* NULL: no run directory (no ledger kept) */
	struct obj_late late;       /* names with writes that may still land */
	bool resumed;               /* the pool came from the ledger */
	/* "audit": "interval:..": a pass beside the mix, one read at a time. */
	bool auditing;
	unsigned audit_inflight;
	uint64_t next_audit_ns;
	bool ledger_failed;         /* a disk error was logged */
	uint64_t rng;
	int timer_fd;
	uint64_t timer_armed_ns;
	/* libcurl's socket interface (obj_wait.c): the transfers' sockets
	 * and timer_fd in one epoll set; when curl next wants its timeouts
	 * run (UINT64_MAX: it does not). */
	int epoll_fd;
	uint8_t *watch;             /* per descriptor: in the set, and why */
	unsigned n_watch;
	uint64_t curl_due_ns;
	uint64_t next_boundary;
	struct sched_ahead ahead;   /* ops due, to count those waiting (pending) */
	uint64_t due_ns;
	bool have_due;
	unsigned deck[OBJ_MIX_OPS], deck_left;   /* the current block of mix_total ops */
	uint32_t cursor;                         /* prefill and cleanup sweeps */
	unsigned passes;
	/* Names whose DELETE completed lately, with the pool's write count
	 * then: a listing that began before may still show them.  Kept
	 * (OBJ_DELETED_RING of each) only by a stream whose mix lists. */
	uint64_t *deleted_ids;
	uint32_t *deleted_seq;
	uint64_t n_deleted;
	uint64_t hold_until_ns, backoff_ns;      /* closed loop: pause after failures */
	uint64_t failing_since_ns, failed_ops;   /* for the "answers again" notice */
	uint64_t skipped;
	uint64_t setup_failed;      /* requests that could not be set up (obj_op_start) */
	/* An op was due with every transfer busy (waiting); when one was
	 * last freed: from then on, an op not yet started is soakd's lateness. */
	bool waiting;
	uint64_t slot_free_ns;
	struct fidelity fid;                     /* the thread's own lateness */
	struct obj_eps eps;
	/* The mix held back (waiting for the endpoint, a prefill, an audit):
	 * each op its schedule makes due meanwhile is missed when its
	 * interval closes; the due time of the first (0: none yet), from
	 * which the stream lags, and how many so far. */
	bool holding;
	uint64_t held_since_ns, held_missed;
	/* The prefill pass under way: PUTs that succeeded, that the endpoint
	 * refused for good (obj_status_is_lasting), that failed otherwise;
	 * the last refusal, to say why a pass that only met refusals ends
	 * the workload. */
	struct obj_prefill_pass {
		unsigned ok, refused, other;
		long status;
		unsigned endpoint;
		char message[OBJ_REFUSAL_MAX];
	} pass;
	/* The workload's stop requests when its run ended (obj_sweep.c). */
	unsigned stops_seen;
};

int obj_eps_client_init(struct obj_client *cl, char *err, size_t errlen);
void obj_eps_client_free(struct obj_client *cl);
/* At prepare: the pool's endpoints after the first, each reached (see
 * obj_endpoints.c).  0, or -errno with err set when one fails for good. */
int obj_eps_probe_rest(const struct obj_client *cl, char *err, size_t errlen);
void obj_eps_init(struct obj_stream *st);
/* Chooses x's endpoint (fewest in flight from this thread, ties in turn,
 * failing ones held back) and points x's handle there. */
void obj_eps_pick(struct obj_stream *st, struct obj_xfer *x, uint64_t now);
/* obj_wait.c: the stream's multi handle's sockets and timer on epoll.
 * obj_stream_events_init: 0 or -errno.  obj_stream_pump runs curl's due
 * timeouts (new transfers start there) and completes the finished
 * transfers, returning how many.  obj_stream_wait_until sleeps until a
 * socket is ready, curl's timeout or wake_ns, then does the same. */
int obj_stream_events_init(struct obj_stream *st);
unsigned obj_stream_pump(struct obj_stream *st);
void obj_stream_wait_until(struct obj_stream *st, uint64_t wake_ns);

/* Points a handle of x's (a multipart part's) at x's endpoint. */
void obj_eps_apply(const struct obj_client *cl, CURL *easy, unsigned endpoint);
/* x is over: counted against its endpoint (error: class c, false when it
 * never finished).  Returns whether the whole workload should back off:
 * always with one endpoint, else only when every endpoint is failing. */
bool obj_eps_done(struct obj_stream *st, struct obj_xfer *x, bool finished, bool error,
		  enum op_error_class c, uint64_t now);
/* The interval record's "endpoints": {URL: {"ops", "errors", "latency_us",
 * "total_ops", "total_errors", "total_latency_us"}}, the interval's part
 * taken and reset; total_latency_us sums the latencies of total_ops. */
struct workload;
struct json_t;
void obj_eps_record(struct workload *w, struct json_t *rec);
/* At the end: each endpoint's share, logged. */
void obj_eps_report(const struct obj_client *cl);


/* obj_stream.c: the thread (workload_engine.thread_main). */
void *obj_stream_main(void *stream);

/* obj_op.c */
/* The next op of the mix: every block of mix_total ops holds each op
 * exactly its weight of times, in random order, so the ratios hold in
 * every interval, not only on average. */
enum obj_kind obj_op_draw(struct obj_stream *st);
/* Starts an op of `kind` due at due_ns; false when no object fits it. */
bool obj_op_start(struct obj_stream *st, enum obj_kind kind, uint64_t due_ns);
/* Says (once) that ops are skipped for want of a free object. */
void obj_op_skipped(struct obj_stream *st, enum obj_kind kind);
/* An op of the schedule due at due_ns that never completes (no object for
 * it, the schedule or the workload ended first): counted as missed, with
 * its wait as latency (a lower bound). */
void obj_op_missed(struct obj_stream *st, enum obj_kind kind, uint64_t due_ns, uint64_t now);
/* Accounts for a finished transfer (or sends a listing's next page). */
void obj_op_complete(struct obj_stream *st, struct obj_xfer *x, CURLcode result,
		     uint64_t now);
/* Gives up a transfer still running: not counted, its object doubtful. */
void obj_op_abandon(struct obj_stream *st, struct obj_xfer *x);

/* obj_xfer.c */
int obj_xfer_init(struct obj_xfer *x, const struct obj_client *cl, struct obj_stream *st);
void obj_xfer_done(struct obj_xfer *x);
/* Key of pool entry e of thread `stream`. */
void obj_key(const struct obj_client *cl, unsigned stream, const struct obj_entry *e, char *buf,
	     size_t len);
/* Which sub-prefix ("pN/") the name (stream, id) goes under. */
unsigned obj_key_sub(const struct obj_client *cl, unsigned stream, uint64_t id);
/* The (stream, id) of a key soakd made in this run: 0; -ENOENT for a key
 * outside the run's root; -EINVAL for one inside it soakd never makes. */
int obj_key_parse(const struct obj_client *cl, const char *key, unsigned *ret_stream,
		  uint64_t *ret_id);
/* Clears what the previous request on x left of its answer (status, sends,
 * body, listing text, verify state): every request on x's handle, a
 * multipart upload's steps too, starts from it. */
void obj_xfer_reset_response(struct obj_xfer *x);
/* Sets up x (kind, key, payload, range fields already filled) for sending. */
int obj_xfer_prepare(struct obj_xfer *x, const struct obj_client *cl);
/* Sets up the next page of a listing (token NULL: the first). */
int obj_xfer_prepare_list(struct obj_xfer *x, const struct obj_client *cl, const char *prefix,
			  const char *token);
/* x's op has ended: a listing's page and ids beyond OBJ_LIST_KEEP_BYTES
 * and OBJ_LIST_KEEP_IDS are let go, so memory held between listings stays
 * bounded whatever a server answered. */
void obj_xfer_trim(struct obj_xfer *x);

enum obj_mp_step { OBJ_MP_NONE, OBJ_MP_INIT, OBJ_MP_PART, OBJ_MP_COMPLETE, OBJ_MP_ABORT };

/* The outcome of a finished transfer. */
enum obj_outcome {
	OBJ_OK,
	OBJ_ERROR,      /* counted in errors, class in *ret_class */
	OBJ_CORRUPT,    /* completed, wrong data */
	OBJ_STALE,      /* completed, an older version of the object */
	OBJ_LATE,       /* completed, what an unanswered write left (obj_late.h) */
	OBJ_MORE,       /* a listing has another page: send x again */
	OBJ_WAIT,       /* a multipart upload's parts run on handles of their own */
};
enum obj_outcome obj_xfer_finish(struct obj_xfer *x, const struct obj_client *cl, CURLcode result,
				 enum op_error_class *ret_class, bool *ret_gone);
/* obj_op.c: */
/* Sends x's handle again (a listing's next page, a multipart upload's
 * next step): 0, or -ENOMEM (logged) when libcurl will not take it. */
int obj_op_resend(struct obj_stream *st, struct obj_xfer *x);
/* Accounts for an op that ended with outcome (class c for an error) in
 * the current interval, settles its object and frees its transfer. */
void obj_op_end(struct obj_stream *st, struct obj_xfer *x, enum obj_outcome outcome,
		enum op_error_class c, bool gone, uint64_t now);

/* obj_multipart.c: a PUT above "multipart_threshold" goes up in parts. */
bool obj_mp_wanted(const struct obj_client *cl, const struct obj_xfer *x);
/* Sets x up for its first step (CreateMultipartUpload). */
int obj_mp_prepare(struct obj_xfer *x, const struct obj_client *cl);
/* A step ended with outcome: OBJ_MORE with the next step set up, OBJ_WAIT
 * while parts run, or the op's outcome. */
enum obj_outcome obj_mp_step_done(struct obj_xfer *x, const struct obj_client *cl,
				  enum obj_outcome outcome, enum op_error_class *ret_class);
/* Whether a finished handle's private pointer is a part, not a transfer. */
bool obj_mp_is_part(const struct obj_stream *st, const void *private_ptr);
/* A part ended: starts the next, or, when none is left in flight, sends
 * the completion (or the abort) on the op's own handle. */
void obj_mp_part_done(struct obj_stream *st, struct obj_part *p, CURLcode result);
/* Removes the parts still in flight (the op is abandoned). */
void obj_mp_abandon(struct obj_stream *st, struct obj_xfer *x);
void obj_mp_free(struct obj_xfer *x);

/* Logs (the first few) lost, stale and resurrected objects. */
void obj_log_verify(const struct obj_client *cl, const struct obj_xfer *x, const char *class,
		    const char *what);

/*
 * obj_book.c: between a thread's pool and its write ledger (obj_ledger.h): what is
 * entered before a request goes out, what its end settles, and what a
 * read means for the objects the server acknowledged (the verify
 * counters v of the op's interval; NULL for ops outside the results).
 */

/* Opens (creating) the run directory for the ledgers; a descriptor or a
 * negative errno with err set. */
int obj_book_dir_open(const char *path, char *err, size_t errlen);
/* Opens the thread's ledger; a resumed one gives the run its names back
 * and the thread its pool (st->resumed). */
int obj_book_open(struct obj_stream *st, int dir_fd, char *err, size_t errlen);

/* Before a PUT or DELETE is sent. */
void obj_book_start(struct obj_stream *st, const struct obj_xfer *x);
/* A transfer of a pool object ended (before the pool is told). */
void obj_book_end(struct obj_stream *st, struct obj_xfer *x, enum obj_outcome outcome,
		  enum op_error_class c, bool gone, struct obj_verify *v);
/* Given up while running: its outcome is unknown. */
void obj_book_abandon(struct obj_stream *st, struct obj_xfer *x, struct obj_verify *v);
/* Entered, then never sent (the request could not be set up). */
void obj_book_unsent(struct obj_stream *st, struct obj_xfer *x);
/* A whole listing of the run's names came back: compares this thread's
 * part of it with the pool (list_missing, list_extra). */
void obj_book_list(struct obj_stream *st, struct obj_xfer *x, struct obj_verify *v);

/* obj_sweep.c: the sweeps at the end of the run give way to a stop. */
/* The run has ended (before its cleanup): a stop requested from now on
 * cuts the sweeps short; the one that ended the run does not. */
void obj_sweep_begin(struct obj_stream *st);
/* Whether a sweep should stop now: soakd is stopping (the workload's
 * suspend flag: SIGTERM, a reload) or the workload was stopped since
 * obj_sweep_begin; *ret_why (may be NULL) then says which, for the log. */
bool obj_sweep_cut_short(const struct obj_stream *st, const char **ret_why);
/* A sweep's handle: a request in flight is aborted (within a second,
 * CURLE_ABORTED_BY_CALLBACK) once the sweep is cut short. */
void obj_sweep_watch(const struct obj_stream *st, CURL *easy);
/* After the cleanup: lists the run's names and deletes this thread's that
 * are left (a crash can lose the ledger's last records, never more than
 * its sync interval).  Synchronous: the workload is over. */
void obj_book_sweep(struct obj_stream *st);

/* "versioning": true (obj_versions.c).  Switches versioning on for a bucket
 * of the workload: -EOPNOTSUPP (err naming the bucket) when the server
 * does not, -EAGAIN when it cannot be asked now. */
int obj_versioning_enable(const struct obj_client *cl, unsigned bucket, char *err, size_t errlen);
/* Deletes every version and delete marker of the thread's names, in every
 * bucket: after the cleanup, nothing of the run is left. */
void obj_versions_sweep(struct obj_stream *st);
/* After the cleanup of a workload with multipart uploads: the thread's
 * incomplete uploads (a crash's, a stop deadline's) aborted. */
void obj_uploads_sweep(struct obj_stream *st);
/* Starts an audit pass: how many objects and deleted names it reads
 * (also published as the stream's audit_total). */
uint64_t obj_book_audit_begin(struct obj_stream *st);
void obj_book_audit_end(struct obj_stream *st);
/* Syncs the ledger on its schedule (force: now). */
void obj_book_flush(struct obj_stream *st, uint64_t now, bool force);

/* Synchronous requests for probing and bucket creation (obj_s3.c, obj_http.c). */
struct obj_response {
	long status;
	CURLcode result;
	char body[OBJ_ERRBODY_MAX];
	size_t body_len;
	char errbuf[CURL_ERROR_SIZE];
};
/* A synchronous request before the run's load (a probe, a bucket made).
 * On soakd's main thread its wait is reported (workload_progress), and a
 * stop ends it with -ECANCELED; other failures to run it are -errno. */
int obj_request(const struct obj_client *cl, const char *method, const char *url,
		const char *body, struct obj_response *ret);
/* Why obj_request or obj_request_heads returned r < 0, in err. */
void obj_request_failed(int r, char *err, size_t errlen);
/* HEAD of url through each endpoint of a pool after the first
 * ("endpoints"), all at once, into ret[1] .. ret[n - 1]. */
int obj_request_heads(const struct obj_client *cl, const char *url, struct obj_response *ret,
		      size_t n);
/* A failure that trying again will not cure (TLS verification, bad URL). */
bool obj_result_is_lasting(CURLcode result);
/* An HTTP status by which the server refuses a request for good (403,
 * 507...), not one that asks to try later (408, 429, 500, 503...). */
bool obj_status_is_lasting(long status);
/* The class of an error a synchronous request met. */
enum op_error_class obj_response_class(const struct obj_response *r);
/* "HTTP 403 InvalidAccessKeyId: ..." or libcurl's message, for people. */
void obj_response_describe(const struct obj_client *cl, const struct obj_response *r, char *buf,
			   size_t len);

/* Escapes a key for a URL path: unreserved characters and '/' stay. */
int obj_escape_path(const char *key, char *buf, size_t len);
/* Escapes a query value: only unreserved characters stay. */
int obj_escape_query(const char *value, char *buf, size_t len);
/* Options of every handle, whatever the protocol: timeouts, TLS,
 * keep-alive, HTTP version, connect_to (obj_http.c). */
int obj_setup_common(const struct obj_client *cl, CURL *easy);
/* The text of an error page: the first line of its title or body. */
void obj_text_message(const char *body, size_t len, char *out, size_t outlen);

#endif
