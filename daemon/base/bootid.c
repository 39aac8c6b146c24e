// SPDX-License-Identifier: GPL-2.0-only
#include "bootid.h"

#include <fcntl.h>
#include <unistd.h>

uint64_t host_boot_id(void)
{
	char text[64] = "";
	uint64_t id = 0;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;

	if (fd >= 0)
		close(fd);
	unsigned digits = 0;
	for (ssize_t i = 0; i < n && text[i] != '\n' && digits < 16; i++) {
		int c = text[i];
		if (c == '-')
			continue;
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (v < 0)
			return 0;
		id = id << 4 | (uint64_t)v;
		digits++;
	}
	return digits == 16 ? id : 0;
}
