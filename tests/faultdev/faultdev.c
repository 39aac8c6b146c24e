// SPDX-License-Identifier: GPL-2.0-only
/*
 * faultdev: a FUSE filesystem holding one disk image, for a loop device
 * whose faults a test controls (see README.md).
 *
 *   faultdev --backing DIR --size SIZE [--block-size N] MOUNTPOINT
 *
 * DIR/disk.img (SIZE bytes) is what was flushed; it outlives this process.
 * Runs in the foreground until unmounted or sent SIGTERM/SIGINT/SIGHUP;
 * what the write cache holds then is lost, as in a power cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faultdev.h"
#include "parse.h"

/* Enough FUSE threads that stalled I/O (at most the kernel's max_background
 * async requests plus a few synchronous ones) never starves the ctl file. */
#define FDEV_MAX_THREADS 64

/*
 * SIGTERM, SIGINT, SIGHUP: end the FUSE loop, and release stalled and
 * delayed ops first, since libfuse joins its workers before it returns and
 * a worker holding a stalled request would never finish.  The handler only
 * does what is async-signal-safe; the releaser thread takes the lock.
 */
static struct fuse_session *signal_session;
static int release_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
	int saved = errno;
	char byte = 1;

	if (signal_session)
		fuse_session_exit(signal_session);
	if (write(release_pipe[1], &byte, 1) < 0) {
		/* Full pipe: a release is pending already. */
	}
	errno = saved;
}

static void *releaser(void *arg)
{
	struct fdev *fd = arg;
	char byte;

	while (read(release_pipe[0], &byte, 1) < 0)
		if (errno != EINTR)
			return NULL; /* no release without a pipe; SIGKILL still ends us */
	pthread_mutex_lock(&fd->lock);
	fd->stalled = false;
	fd->delay_ms = 0;
	pthread_cond_broadcast(&fd->wakeup);
	pthread_mutex_unlock(&fd->lock);
	return NULL;
}

static int catch_signals(struct fuse_session *se)
{
	/* No SA_RESTART: the main thread's wait must see EINTR to notice the exit. */
	struct sigaction sa = {.sa_handler = on_signal};
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	size_t i;

	signal_session = se;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: faultdev --backing DIR --size SIZE [--block-size N] MOUNTPOINT\n"
		     "  DIR/" FDEV_DISK_NAME " keeps what was flushed (created at SIZE if missing);\n"
		     "  the cache works in blocks of N bytes (default 4096).\n"
		     "  Control: see tests/faultdev/README.md.\n");
}

/* DIR/disk.img, created at size if missing; an existing one must have that size. */
static int open_backing(const char *dir, uint64_t size)
{
	struct stat st;
	int dirfd, fd;

	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "faultdev: cannot open backing directory %s: %m\n", dir);
		return -1;
	}
	fd = openat(dirfd, FDEV_DISK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dirfd);
	if (fd < 0) {
		fprintf(stderr, "faultdev: cannot open %s/" FDEV_DISK_NAME ": %m\n", dir);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "faultdev: %s/" FDEV_DISK_NAME " is not a regular file\n", dir);
		close(fd);
		return -1;
	}
	if (st.st_size == 0 && ftruncate(fd, (off_t)size) < 0) {
		fprintf(stderr, "faultdev: cannot size %s/" FDEV_DISK_NAME ": %m\n", dir);
		close(fd);
		return -1;
	}
	if (st.st_size != 0 && (uint64_t)st.st_size != size) {
		fprintf(stderr,
			"faultdev: %s/" FDEV_DISK_NAME " holds %jd bytes, not --size %" PRIu64
			"; remove it or give its size\n",
			dir, (intmax_t)st.st_size, size);
		close(fd);
		return -1;
	}
	return fd;
}

static int parse_args(int argc, char **argv, struct fdev *fd, const char **ret_dir,
		      const char **ret_mnt)
{
	static const struct option opts[] = {{"backing", required_argument, NULL, 'b'},
					     {"size", required_argument, NULL, 's'},
					     {"block-size", required_argument, NULL, 'B'},
					     {"help", no_argument, NULL, 'h'},
					     {0}};
	const char *why = NULL;
	int c;

	fd->block_size = 4096;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			*ret_dir = optarg;
			break;
		case 's':
			if (parse_size(optarg, &fd->size, &why) < 0) {
				fprintf(stderr, "faultdev: --size %s: %s\n", optarg, why);
				return -1;
			}
			break;
		case 'B':
			if (parse_size(optarg, &fd->block_size, &why) < 0) {
				fprintf(stderr, "faultdev: --block-size %s: %s\n", optarg, why);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (!*ret_dir || !fd->size || optind != argc - 1) {
		usage(stderr);
		return -1;
	}
	if (fd->block_size < 512 || fd->block_size > (1u << 20) ||
	    (fd->block_size & (fd->block_size - 1))) {
		fprintf(stderr, "faultdev: --block-size %" PRIu64
				": give a power of two from 512 to 1MiB\n",
			fd->block_size);
		return -1;
	}
	if (fd->size % fd->block_size) {
		fprintf(stderr, "faultdev: --size %" PRIu64 " is not a multiple of the block size\n",
			fd->size);
		return -1;
	}
	*ret_mnt = argv[optind];
	return 0;
}

int main(int argc, char **argv)
{
	static struct fdev fd = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cache_on = true,
	};
	pthread_condattr_t cond_attr;
	char *fuse_argv[] = {argv[0], "-o", "fsname=faultdev,subtype=faultdev", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fuse_argv);
	struct fuse_loop_config *loop_cfg;
	pthread_t releaser_thread;
	const char *dir = NULL, *mnt = NULL;
	struct fuse *fuse;
	int r = 1;

	if (parse_args(argc, argv, &fd, &dir, &mnt) < 0)
		return 2;
	/* Delays end at a CLOCK_MONOTONIC deadline: wall-clock steps must not stretch them. */
	if (pthread_condattr_init(&cond_attr) ||
	    pthread_condattr_setclock(&cond_attr, CLOCK_MONOTONIC) ||
	    pthread_cond_init(&fd.wakeup, &cond_attr)) {
		fprintf(stderr, "faultdev: cannot make a condition variable\n");
		return 1;
	}
	pthread_condattr_destroy(&cond_attr);
	fd.backing_fd = open_backing(dir, fd.size);
	if (fd.backing_fd < 0)
		return 1;
	if (fdev_cache_init(&fd) < 0) {
		fprintf(stderr, "faultdev: no memory for %" PRIu64 " blocks\n", fd.nblocks);
		return 1;
	}
	fuse = fuse_new(&args, &fdev_fs_ops, sizeof(fdev_fs_ops), &fd);
	if (!fuse)
		goto out_args;
	if (fuse_mount(fuse, mnt) < 0)
		goto out_fuse;
	/* The releaser reads blocking; the handler's writes must never block. */
	if (pipe2(release_pipe, O_CLOEXEC) < 0 || fcntl(release_pipe[1], F_SETFL, O_NONBLOCK) < 0 ||
	    pthread_create(&releaser_thread, NULL, releaser, &fd) != 0) {
		fprintf(stderr, "faultdev: cannot start the releaser thread\n");
		goto out_unmount;
	}
	if (catch_signals(fuse_get_session(fuse)) < 0)
		goto out_releaser;
	loop_cfg = fuse_loop_cfg_create();
	if (!loop_cfg)
		goto out_releaser;
	fuse_loop_cfg_set_max_threads(loop_cfg, FDEV_MAX_THREADS);
	fprintf(stderr, "faultdev: %s/" FDEV_DISK_NAME " (%" PRIu64 " B, %" PRIu64 " B blocks) on %s\n",
		dir, fd.size, fd.block_size, mnt);
	/* libfuse returns the signal that ended the loop: SIGTERM is a clean stop. */
	r = fuse_loop_mt(fuse, loop_cfg);
	r = r == 0 || r == SIGTERM || r == SIGINT || r == SIGHUP ? 0 : 1;
	fuse_loop_cfg_destroy(loop_cfg);
out_releaser:
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal_session = NULL;
	if (write(release_pipe[1], "", 1) < 0) {
		/* The releaser has its byte already. */
	}
	pthread_join(releaser_thread, NULL);
out_unmount:
	fuse_unmount(fuse);
out_fuse:
	fuse_destroy(fuse);
out_args:
	fuse_opt_free_args(&args);
	pthread_mutex_lock(&fd.lock);
	if (fd.head) {
		uint64_t cached = 0;

		for (struct fdev_block *b = fd.head; b; b = b->next)
			cached++;
		fprintf(stderr, "faultdev: exiting; %" PRIu64 " unflushed blocks lost\n", cached);
	}
	fdev_cache_free(&fd);
	pthread_mutex_unlock(&fd.lock);
	close(fd.backing_fd);
	if (release_pipe[0] >= 0) {
		close(release_pipe[0]);
		close(release_pipe[1]);
	}
	return r;
}
