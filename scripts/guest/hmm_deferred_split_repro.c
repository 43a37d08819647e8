// SPDX-License-Identifier: GPL-2.0
/*
 * Reproducer: a THP born in migrate_vma_insert_huge_pmd_page() (hole ->
 * device-private THP) is charged to a memcg without
 * folio_memcg_alloc_deferred(). Migrated back to system RAM it stays in that
 * memcg (mem_cgroup_migrate()), so a partial unmap queues it on the parent's
 * deferred_split_lru sublist; once a THP fault gives the memcg its own
 * sublist, the free unqueues it under the wrong sublist (nr_items off by one
 * on both lists).
 *
 * The verdict is the kernel log: with CONFIG_DEBUG_VM the partial unmap
 * warns in lock_list_lru_of_memcg() (the fallback to the parent's sublist
 * of a memcg that is not dying), and the rmdir warns in
 * memcg_reparent_list_lru_one() (nr_items < 0). `make matrix MATRIX=hmm`
 * boots a kernel with CONFIG_ZONE_DEVICE, CONFIG_DEVICE_PRIVATE,
 * CONFIG_TEST_HMM=y and CONFIG_DEBUG_VM and runs it: the entry fails on
 * those warnings without the fix, and passes with it (FIXES=1 applies
 * patches/fixes/). Exit 4 (skipped) when the path was not taken: no
 * device-private THP after MIGRATE_TO_DEV, or no THP after MIGRATE_TO_SYS.
 *
 * Build: gcc -static -O2 -Wall -I<tree>/lib -o repro repro.c
 * Run as root with test_hmm (device-private mode); THP enabled=madvise or
 * always. Mounts cgroup2 at /sys/fs/cgroup if nothing is there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "test_hmm_uapi.h"

#define SZ_2M	(2UL << 20)
#define CG	"/sys/fs/cgroup/migvma_repro"

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, s, strlen(s)) < 0)
		fprintf(stderr, "write %s <- %s: %s\n", path, s, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void show(const char *tag, const char *cmd)
{
	printf("--- %s\n", tag);
	fflush(stdout);
	if (system(cmd) < 0)
		perror("system");
}

static void dmirror(int fd, unsigned long req, void *addr, void *mirror,
		    unsigned long npages, const char *name)
{
	struct hmm_dmirror_cmd cmd = {
		.addr = (uintptr_t)addr, .ptr = (uintptr_t)mirror,
		.npages = npages,
	};

	while (ioctl(fd, req, &cmd)) {
		if (errno != EINTR)
			die(name);
	}
	printf("%s: cpages=%llu\n", name, (unsigned long long)cmd.cpages);
}

static void skip(const char *why)
{
	printf("SKIP: %s: the path of the bug was not taken\n", why);
	exit(4);
}

/* The kB of AnonHugePages of the mapping that holds addr. */
static long thp_kb(const void *addr)
{
	unsigned long start, end, want = (uintptr_t)addr;
	char line[256];
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		die("/proc/self/smaps");
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's first line: "start-end perms ..." in hex. */
		if (line[strspn(line, "0123456789abcdef")] == '-' &&
		    sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = start <= want && want < end;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

int main(void)
{
	const char *stats = "cat /sys/kernel/mm/transparent_hugepage/hugepages-2048kB/stats/nr_anon_partially_mapped;"
			    " cat /sys/kernel/debug/shrinker/thp-deferred_split-*/count 2>/dev/null";
	unsigned long npages = SZ_2M / getpagesize();
	unsigned char *mirror, *snap, *map, *a, *b;
	cpu_set_t set;
	char pid[32];
	long thp;
	int fd;

	/* One CPU: the frees below drain this CPU's LRU batches. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");

	/* Charged to the root memcg: allocated and touched before the move. */
	mirror = malloc(SZ_2M);
	snap = malloc(npages);
	if (!mirror || !snap)
		die("malloc");
	memset(mirror, 0xff, SZ_2M);
	memset(snap, 0, npages);
	map = mmap(NULL, 4 * SZ_2M, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		die("mmap");
	a = (unsigned char *)(((uintptr_t)map + SZ_2M - 1) & ~(SZ_2M - 1));
	b = a + SZ_2M;
	if (madvise(a, 2 * SZ_2M, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE)");
	fd = open("/dev/hmm_dmirror0", O_RDWR);
	if (fd < 0)
		die("open /dev/hmm_dmirror0");

	/* A fresh memcg: no THP fault, swapin or collapse has run in it. */
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) &&
	    mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		die("mount cgroup2 on /sys/fs/cgroup");
	write_str("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	rmdir(CG);
	if (mkdir(CG, 0755))
		die("mkdir " CG);
	snprintf(pid, sizeof(pid), "%d", getpid());
	write_str(CG "/cgroup.procs", pid);
	show("memcg", "cat /proc/self/cgroup");
	show("before: nr_anon_partially_mapped; shrinker count", stats);

	/* 1. Hole -> device-private THP: migrate_vma_insert_huge_pmd_page(). */
	dmirror(fd, HMM_DMIRROR_MIGRATE_TO_DEV, a, mirror, npages, "MIGRATE_TO_DEV");
	dmirror(fd, HMM_DMIRROR_SNAPSHOT, a, snap, npages, "SNAPSHOT");
	printf("snapshot[0]=0x%02x (expect 0x26: dev-private local|write|PMD)\n", snap[0]);
	if (snap[0] != (HMM_DMIRROR_PROT_DEV_PRIVATE_LOCAL | HMM_DMIRROR_PROT_WRITE |
			HMM_DMIRROR_PROT_PMD))
		skip("no device-private THP after MIGRATE_TO_DEV");

	/* 2. Back to a system THP, committed to the same memcg. */
	dmirror(fd, HMM_DMIRROR_MIGRATE_TO_SYS, a, mirror, npages, "MIGRATE_TO_SYS");
	thp = thp_kb(a);
	printf("AnonHugePages: %ld kB\n", thp);
	if (thp < 2048)
		skip("no THP after MIGRATE_TO_SYS");

	/* 3. Partial unmap: deferred_split_folio(), memcg has no sublist. */
	if (madvise(a, SZ_2M / 2, MADV_DONTNEED))
		die("madvise(MADV_DONTNEED)");
	show("after partial unmap (expect VM_WARN list_lru.c:111 in dmesg)", stats);

	/* 4. A THP fault in the memcg allocates its sublists. */
	b[0] = 1;
	printf("AnonHugePages after the fault: %ld kB\n", thp_kb(a));

	/* 5. Free both: the migrated THP is unqueued under the memcg's lock. */
	if (munmap(a, SZ_2M) || munmap(b, SZ_2M))
		die("munmap");
	show("after free (root line stuck at 1 = bug)", stats);

	/* 6. Offline the memcg: reparenting finds nr_items < 0. */
	write_str("/sys/fs/cgroup/cgroup.procs", pid);
	if (rmdir(CG))
		perror("rmdir " CG);
	sleep(2);
	show("after rmdir", stats);
	show("dmesg", "dmesg | grep -A12 -E 'WARNING: .*(list_lru|deferred_split)' | tail -40");
	return 0;
}
