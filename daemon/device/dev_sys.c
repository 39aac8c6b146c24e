// SPDX-License-Identifier: GPL-2.0-only
/*
 * Block devices as sysfs and /proc describe them.  Nothing here opens a
 * device: the safety checks use this before deciding whether a device may
 * be opened for writing at all.
 */
#include "dev_sys.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

bool devsys_set_has(const struct devsys_set *s, dev_t dev)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->devs[i] == dev)
			return true;
	return false;
}

int devsys_set_add(struct devsys_set *s, dev_t dev)
{
	if (devsys_set_has(s, dev))
		return 0;
	if (s->n >= DEVSYS_MAX_DEVS)
		return -E2BIG;
	s->devs[s->n++] = dev;
	return 0;
}

static int join(char *ret, size_t len, const char *dir, const char *name)
{
	int n = snprintf(ret, len, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int devsys_block_dir(const char *sysfs, dev_t devno, char *ret, size_t len)
{
	char link[PATH_MAX];
	char *real;
	int n = snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sysfs, major(devno),
			 minor(devno));

	if (n < 0 || (size_t)n >= sizeof(link))
		return -ENAMETOOLONG;
	real = realpath(link, NULL);
	if (!real)
		return -errno;
	n = snprintf(ret, len, "%s", real);
	free(real);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int devsys_read_attr(const char *dir, const char *name, char *ret, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, r;

	if (len == 0)
		return -EINVAL;
	r = join(path, sizeof(path), dir, name);
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	do
		n = read(fd, ret, len - 1);
	while (n < 0 && errno == EINTR);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	ret[n] = '\0';
	/* Trim: sysfs ends values with a newline, SCSI pads with spaces. */
	while (n > 0 && isspace((unsigned char)ret[n - 1]))
		ret[--n] = '\0';
	size_t lead = strspn(ret, " \t\n");
	if (lead)
		memmove(ret, ret + lead, (size_t)n - lead + 1);
	return 0;
}

int devsys_read_u64(const char *dir, const char *name, uint64_t *ret)
{
	char buf[64], *end;
	int r = devsys_read_attr(dir, name, buf, sizeof(buf));

	if (r < 0)
		return r;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno || end == buf || *end || buf[0] == '-')
		return -EINVAL;
	*ret = v;
	return 0;
}

int devsys_read_devno(const char *dir, const char *name, dev_t *ret)
{
	char buf[64];
	unsigned maj, min;
	char extra;
	int r = devsys_read_attr(dir, name, buf, sizeof(buf));

	if (r < 0)
		return r;
	if (sscanf(buf, "%u:%u%c", &maj, &min, &extra) != 2)
		return -EINVAL;
	*ret = makedev(maj, min);
	return 0;
}

int devsys_name(const char *sysfs, dev_t devno, char *ret, size_t len)
{
	char dir[PATH_MAX];
	int r = devsys_block_dir(sysfs, devno, dir, sizeof(dir));

	if (r < 0)
		return r;
	const char *slash = strrchr(dir, '/');
	r = snprintf(ret, len, "%s", slash ? slash + 1 : dir);
	return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}

static bool has_entry(const char *dir, const char *name)
{
	char path[PATH_MAX];
	return join(path, sizeof(path), dir, name) == 0 && access(path, F_OK) == 0;
}

int devsys_whole_disk(const char *sysfs, dev_t devno, dev_t *ret)
{
	char dir[PATH_MAX];
	int r = devsys_block_dir(sysfs, devno, dir, sizeof(dir));

	if (r < 0)
		return r;
	if (!has_entry(dir, "partition")) {
		*ret = devno;
		return 0;
	}
	/* A partition's directory sits inside its disk's. */
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return -ENOENT;
	*slash = '\0';
	return devsys_read_devno(dir, "dev", ret);
}

/* Collects the "dev" of each entry of dir/sub (or of dir itself when sub is
 * NULL) for which want(entry dir) holds. */
static int collect(const char *dir, const char *sub, bool (*want)(const char *entry_dir),
		   struct devsys_set *ret)
{
	char base[PATH_MAX], entry[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (sub) {
		r = join(base, sizeof(base), dir, sub);
		if (r < 0)
			return r;
	} else {
		snprintf(base, sizeof(base), "%s", dir);
	}
	d = opendir(base);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		dev_t dev;
		if (de->d_name[0] == '.')
			continue;
		if (join(entry, sizeof(entry), base, de->d_name) < 0)
			continue;
		if (want && !want(entry))
			continue;
		if (devsys_read_devno(entry, "dev", &dev) < 0)
			continue;
		r = devsys_set_add(ret, dev);
		if (r < 0)
			break;
	}
	closedir(d);
	return r;
}

static bool is_partition_dir(const char *entry_dir)
{
	return has_entry(entry_dir, "partition");
}

int devsys_partitions(const char *sysfs, dev_t disk, struct devsys_set *ret)
{
	char dir[PATH_MAX];
	int r = devsys_block_dir(sysfs, disk, dir, sizeof(dir));

	ret->n = 0;
	if (r < 0)
		return r;
	if (has_entry(dir, "partition"))
		return 0;
	return collect(dir, NULL, is_partition_dir, ret);
}

int devsys_holders(const char *sysfs, dev_t devno, struct devsys_set *ret)
{
	char dir[PATH_MAX];
	int r = devsys_block_dir(sysfs, devno, dir, sizeof(dir));

	ret->n = 0;
	if (r < 0)
		return r;
	return collect(dir, "holders", NULL, ret);
}

static int lower_disks(const char *sysfs, dev_t devno, unsigned depth, struct devsys_set *ret)
{
	struct devsys_set slaves = { .n = 0 };
	char dir[PATH_MAX];
	dev_t disk;
	int r;

	if (depth > DEVSYS_MAX_DEPTH)
		return -ELOOP;
	r = devsys_block_dir(sysfs, devno, dir, sizeof(dir));
	if (r < 0)
		return r;
	r = collect(dir, "slaves", NULL, &slaves);
	if (r < 0)
		return r;
	if (slaves.n == 0) {
		r = devsys_whole_disk(sysfs, devno, &disk);
		return r < 0 ? r : devsys_set_add(ret, disk);
	}
	for (size_t i = 0; i < slaves.n; i++) {
		r = lower_disks(sysfs, slaves.devs[i], depth + 1, ret);
		if (r < 0)
			return r;
	}
	return 0;
}

int devsys_lower_disks(const char *sysfs, dev_t devno, struct devsys_set *ret)
{
	ret->n = 0;
	return lower_disks(sysfs, devno, 0, ret);
}

bool devsys_strip_deleted(char *path)
{
	static const char suffix[] = " (deleted)";
	size_t len = strlen(path), ls = sizeof(suffix) - 1;

	if (len <= ls || strcmp(path + len - ls, suffix) != 0)
		return false;
	path[len - ls] = '\0';
	return true;
}

int devsys_each_loop(const char *sysfs, int (*fn)(const struct devsys_loop *l, void *arg),
		     void *arg)
{
	struct devsys_loop *l = malloc(sizeof(*l));
	char base[PATH_MAX], dir[PATH_MAX];
	struct dirent *de;
	DIR *d = NULL;
	int r;

	if (!l)
		return -ENOMEM;
	r = join(base, sizeof(base), sysfs, "block");
	if (r < 0)
		goto out;
	d = opendir(base);
	if (!d) {
		r = errno == ENOENT ? 0 : -errno;
		goto out;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "loop", 4) != 0 ||
		    snprintf(l->name, sizeof(l->name), "%s", de->d_name) >= (int)sizeof(l->name) ||
		    join(dir, sizeof(dir), base, de->d_name) < 0)
			continue;
		/* Unbound loop devices have no backing_file; one detached
		 * since readdir has no dev either: both are skipped. */
		if (devsys_read_attr(dir, "loop/backing_file", l->backing_file,
				     sizeof(l->backing_file)) < 0 ||
		    !l->backing_file[0] || devsys_read_devno(dir, "dev", &l->devno) < 0)
			continue;
		l->deleted = devsys_strip_deleted(l->backing_file);
		r = fn(l, arg);
		if (r)
			break;
	}
out:
	if (d)
		closedir(d);
	free(l);
	return r;
}

/* Copies one space-separated field, decoding the kernel's octal escapes
 * (\040 for a space, \011, \012, \134); returns where the next field starts. */
static const char *take_field(const char *p, char *ret, size_t len)
{
	size_t n = 0;

	while (*p == ' ')
		p++;
	while (*p && *p != ' ' && *p != '\n') {
		char c = *p++;
		if (c == '\\' && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
		    p[2] >= '0' && p[2] <= '7') {
			c = (char)((p[0] - '0') << 6 | (p[1] - '0') << 3 | (p[2] - '0'));
			p += 3;
		}
		if (n + 1 < len)
			ret[n++] = c;
	}
	if (len)
		ret[n] = '\0';
	return p;
}

int devsys_parse_mountinfo_line(const char *line, struct devsys_mount *ret)
{
	char field[PATH_MAX];
	unsigned maj, min;
	char extra;
	const char *p = line;

	/* mount ID, parent ID, major:minor, root, mount point, options */
	p = take_field(p, field, sizeof(field));
	p = take_field(p, field, sizeof(field));
	p = take_field(p, field, sizeof(field));
	if (sscanf(field, "%u:%u%c", &maj, &min, &extra) != 2)
		return -EINVAL;
	ret->devno = makedev(maj, min);
	p = take_field(p, field, sizeof(field));
	p = take_field(p, ret->mount_point, sizeof(ret->mount_point));
	p = take_field(p, field, sizeof(field));
	if (!ret->mount_point[0])
		return -EINVAL;
	/* Optional fields ("shared:1", "master:2"), up to a lone "-". */
	for (;;) {
		p = take_field(p, field, sizeof(field));
		if (!field[0])
			return -EINVAL;
		if (strcmp(field, "-") == 0)
			break;
	}
	p = take_field(p, ret->fs_type, sizeof(ret->fs_type));
	take_field(p, ret->source, sizeof(ret->source));
	return ret->fs_type[0] ? 0 : -EINVAL;
}

int devsys_parse_swaps_line(const char *line, char *ret, size_t len)
{
	if (strncmp(line, "Filename", 8) == 0)
		return -ENOENT;
	take_field(line, ret, len);
	return ret[0] ? 0 : -EINVAL;
}

static bool source_is(const struct devsys_mount *m, dev_t *ret_rdev)
{
	struct stat st;

	if (m->source[0] != '/' || stat(m->source, &st) < 0 || !S_ISBLK(st.st_mode))
		return false;
	*ret_rdev = st.st_rdev;
	return true;
}

/* Calls fn on each parsed line until it returns non-zero. */
static int each_mount(const char *mountinfo, int (*fn)(const struct devsys_mount *m, void *arg),
		      void *arg)
{
	struct devsys_mount *m = malloc(sizeof(*m));
	FILE *f = fopen(mountinfo, "re");
	char *line = NULL;
	size_t cap = 0;
	int r = 0;

	if (!m || !f) {
		r = !m ? -ENOMEM : -errno;
		goto out;
	}
	while (getline(&line, &cap, f) > 0) {
		if (devsys_parse_mountinfo_line(line, m) < 0)
			continue;
		r = fn(m, arg);
		if (r)
			break;
	}
out:
	if (f)
		fclose(f);
	free(line);
	free(m);
	return r;
}

struct find_arg {
	const struct devsys_set *set;
	dev_t st_dev;
	struct devsys_mount *ret;
	dev_t dev;
};

static int match_set(const struct devsys_mount *m, void *arg)
{
	struct find_arg *a = arg;
	dev_t rdev;

	if (devsys_set_has(a->set, m->devno))
		a->dev = m->devno;
	else if (major(m->devno) == 0 && source_is(m, &rdev) && devsys_set_has(a->set, rdev))
		a->dev = rdev;
	else
		return 0;
	*a->ret = *m;
	return 1;
}

int devsys_find_mount(const char *mountinfo, const struct devsys_set *set,
		      struct devsys_mount *ret, dev_t *ret_dev)
{
	struct find_arg a = { .set = set, .ret = ret };
	int r = each_mount(mountinfo, match_set, &a);

	if (r > 0 && ret_dev)
		*ret_dev = a.dev;
	return r;
}

static int match_st_dev(const struct devsys_mount *m, void *arg)
{
	struct find_arg *a = arg;

	if (m->devno != a->st_dev)
		return 0;
	*a->ret = *m;
	return 1;
}

int devsys_mount_of(const char *mountinfo, dev_t st_dev, struct devsys_mount *ret)
{
	struct find_arg a = { .st_dev = st_dev, .ret = ret };
	int r = each_mount(mountinfo, match_st_dev, &a);
	return r < 0 ? r : r ? 0 : -ENOENT;
}

int devsys_backing_dev(const char *mountinfo, dev_t st_dev, dev_t *ret)
{
	struct devsys_mount *m;
	dev_t rdev;
	int r;

	if (major(st_dev) != 0) {
		*ret = st_dev;
		return 0;
	}
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	r = devsys_mount_of(mountinfo, st_dev, m);
	if (r == 0)
		r = source_is(m, &rdev) ? 0 : -ENODEV;
	if (r == 0)
		*ret = rdev;
	free(m);
	return r;
}

int devsys_find_swap(const char *swaps, const struct devsys_set *set, char *ret, size_t len,
		     dev_t *ret_dev)
{
	FILE *f = fopen(swaps, "re");
	char *line = NULL, name[PATH_MAX];
	size_t cap = 0;
	int found = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!found && getline(&line, &cap, f) > 0) {
		struct stat st;
		if (devsys_parse_swaps_line(line, name, sizeof(name)) < 0)
			continue;
		if (stat(name, &st) < 0 || !S_ISBLK(st.st_mode) || !devsys_set_has(set, st.st_rdev))
			continue;
		snprintf(ret, len, "%s", name);
		if (ret_dev)
			*ret_dev = st.st_rdev;
		found = 1;
	}
	fclose(f);
	free(line);
	return found;
}
