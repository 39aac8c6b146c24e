/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_BOOTID_H
#define SOAK_BOOTID_H

#include <stdint.h>

/*
 * The kernel's id of this boot (/proc/sys/kernel/random/boot_id), its
 * first 64 bits; 0 when it cannot be read.  State that soakd keeps in a
 * run directory records it, so that the next start can tell a host that
 * went down (its page cache lost with it) from soakd alone stopping.
 */
uint64_t host_boot_id(void);

#endif
