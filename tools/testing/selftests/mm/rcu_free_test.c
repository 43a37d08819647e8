// SPDX-License-Identifier: GPL-2.0
/*
 * PG_rcu_free: page cache folios that reads keep coming back to are freed
 * only after an RCU grace period (CONFIG_PAGE_RCU_FREE).
 *
 * Reader threads re-read small pieces of a file or block device, so that its
 * folios get hot and get PG_rcu_free, and drop them now and then with
 * POSIX_FADV_DONTNEED; next to them a process touches most of the free
 * memory in a loop, so that reclaim frees flagged folios too. Checks that:
 *
 * - frees were deferred (rcu_free_deferred grows);
 * - the memory hog is not OOM-killed: the waiting pages are freed before the
 *   allocator gives up;
 * - nr_free_rcu_pages is back to 0 within a second once the load stops;
 * - a hot, flagged folio can be hwpoisoned (MADV_HWPOISON) and soft-offlined
 *   (MADV_SOFT_OFFLINE);
 * - a hot, flagged folio soft-offlined and at once unpoisoned
 *   (/sys/kernel/debug/hwpoison/unpoison-pfn) is freed once, not put on a
 *   deferred list twice (CONFIG_DEBUG_LIST reports that in the kernel log,
 *   which the harness checks): nr_free_rcu_pages is back to 0 after it;
 * - with -c <dir>: alloc_contig_range() takes a CMA area holding hot,
 *   flagged page cache of a file it creates in <dir> (the CMA area of cma=
 *   on the command line, allocated through /sys/kernel/debug/cma/reserved
 *   with CONFIG_CMA_DEBUGFS; a block device's page cache is not movable,
 *   so never in CMA): the folios are migrated out, their frees deferred,
 *   and the allocation succeeds at its first attempt, because the waiting
 *   pages are freed (after an expedited grace period) before it gives up.
 *   A failed attempt is told (counters, the busy PFN from the
 *   test_pages_isolated tracepoint); a second one may succeed only if the
 *   busy page was not one of the file's (7.3.4's own transient: a page in
 *   use or held by reclaim or compaction after the hog). -r runs that case
 *   that many times (default 1), the last of two or more with only two
 *   pages made hot. It is skipped when no page cache could be steered into
 *   the CMA area.
 *
 * Usage: rcu_free_test [-t threads] [-d seconds] [-m hog-MiB] [-c dir] [-r rounds]
 *                      <file or block device>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <linux/mempolicy.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"
#include "vm_util.h"

#ifndef MADV_HWPOISON
#define MADV_HWPOISON		100
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE	101
#endif
#define KPF_ACTIVE_BIT		6	/* include/uapi/linux/kernel-page-flags.h */

#define USAGE		"usage: %s [-t threads] [-d seconds] [-m hog-MiB] [-c dir] [-r rounds] " \
			"<file|blockdev>\n"
#define CMA_FILE_SIZE	(32UL << 20)
#define READ_SPAN	(64UL << 20)	/* the part of the file the readers read */
#define STRIDE		4096UL
#define CMA_SMALL_HOT_SET	2	/* pages, often of one large folio */

static const char *path;
static const char *cma_dir;
static int nr_threads = 4;
static int duration = 10;
static long hog_mib;
static int cma_rounds = 1;
static atomic_bool stop;

static long read_vmstat(const char *name)
{
	char key[64];
	long val;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		ksft_exit_fail_perror("/proc/vmstat");
	while (fscanf(f, "%63s %ld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			fclose(f);
			return val;
		}
	}
	fclose(f);
	return -1;
}

static long meminfo_kib(const char *name)
{
	char line[256];
	long val = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		ksft_exit_fail_perror("/proc/meminfo");
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, strlen(name))) {
			if (sscanf(line + strlen(name), " %ld", &val) != 1)
				val = -1;
			break;
		}
	}
	fclose(f);
	return val;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static off_t span(int fd)
{
	struct stat st;
	off_t size;

	if (fstat(fd, &st))
		ksft_exit_fail_perror("fstat");
	size = S_ISBLK(st.st_mode) ? lseek(fd, 0, SEEK_END) : st.st_size;
	if (size < (off_t)STRIDE)
		ksft_exit_fail_msg("%s: too small\n", path);
	return size < (off_t)READ_SPAN ? size : (off_t)READ_SPAN;
}

/* Reads 16 bytes of every page of the span, again and again, from its own fd. */
static void *reader(void *arg)
{
	long id = (long)arg, rounds = 0;
	char buf[16];
	int fd = open(path, O_RDONLY);
	off_t size, off;

	if (fd < 0)
		ksft_exit_fail_perror(path);
	size = span(fd);
	while (!atomic_load(&stop)) {
		for (off = 0; off < size && !atomic_load(&stop); off += STRIDE)
			if (pread(fd, buf, sizeof(buf), off) < 0)
				ksft_exit_fail_perror("pread");
		/* One thread drops the hot data now and then. */
		if (id == 0 && ++rounds % 4 == 0)
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	close(fd);
	return NULL;
}

static long nr_free_rcu_pages(void);

/*
 * Samples nr_free_rcu_pages every 10 ms while the load runs: the pages that
 * wait for a grace period count neither as free nor as reclaimable, so this
 * is how much memory the deferred free hides from reclaim under pressure.
 */
static long waiting_peak, waiting_sum, waiting_samples;

static void *sampler(void *unused __always_unused)
{
	while (!atomic_load(&stop)) {
		long n = nr_free_rcu_pages();

		if (n > waiting_peak)
			waiting_peak = n;
		waiting_sum += n;
		waiting_samples++;
		usleep(10000);
	}
	return NULL;
}

/*
 * Touches @mib of anonymous memory in a loop until killed; writes a byte to
 * @ready (if not -1) once all of it has been touched.
 */
static void hog(long mib, int ready)
{
	size_t len = (size_t)mib << 20, i;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(2);
	for (;;) {
		for (i = 0; i < len; i += 4096)
			p[i]++;
		if (ready >= 0) {
			if (write(ready, "", 1) != 1)
				_exit(2);
			close(ready);
			ready = -1;
		}
	}
}

/*
 * Makes the page at @off hot: with a read of 63 other pages between two reads
 * of it, every read marks it accessed, and the activations of the others
 * fill and drain the LRU batches.
 */
static void make_hot(int fd, off_t off)
{
	char buf[16];
	int round, k;

	for (round = 0; round < 8; round++) {
		if (pread(fd, buf, sizeof(buf), off) < 0)
			ksft_exit_fail_perror("pread");
		for (k = 1; k < 64; k++)
			if (pread(fd, buf, sizeof(buf), off + k * STRIDE) < 0)
				ksft_exit_fail_perror("pread");
	}
}

/*
 * Opens the file, makes the page at @off hot (PG_rcu_free) and maps it, read
 * in; returns the mapping and the fd in @fdp.
 */
static void *map_hot_page(off_t off, int *fdp)
{
	int fd = open(path, O_RDONLY);
	void *p;

	if (fd < 0)
		ksft_exit_fail_perror(path);
	make_hot(fd, off);
	p = mmap(NULL, STRIDE, PROT_READ, MAP_SHARED, fd, off);
	if (p == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	FORCE_READ(*(char *)p);
	*fdp = fd;
	return p;
}

/*
 * Makes a page hot, maps it and applies @advice to it. Its folio has
 * PG_rcu_free. Memory failure keeps the poisoned folio; soft offline
 * migrates it away, waits for a grace period and frees the old one at once.
 */
static void poison(int advice, const char *name, off_t off)
{
	long deferred;
	int fd, ret;
	void *p;

	p = map_hot_page(off, &fd);
	deferred = read_vmstat("rcu_free_deferred");
	ret = madvise(p, STRIDE, advice);
	if (ret && (errno == EPERM || errno == EINVAL)) {
		ksft_test_result_skip("%s: %s\n", name, strerror(errno));
	} else {
		munmap(p, STRIDE);
		p = MAP_FAILED;
		deferred = read_vmstat("rcu_free_deferred") - deferred;
		ksft_test_result(!ret,
				 "%s of a hot page cache folio: %s, %ld pages deferred\n",
				 name, ret ? strerror(errno) : "ok", deferred);
	}
	if (p != MAP_FAILED)
		munmap(p, STRIDE);
	close(fd);
}

#define UNPOISON_PFN	"/sys/kernel/debug/hwpoison/unpoison-pfn"

static int write_long(const char *file, long val);

/*
 * Soft-offlines a hot page of the file and at once unpoisons it. Soft
 * offline migrates the folio away and frees the old one while it keeps a
 * reference to it; unpoison drops that reference and frees it again. The
 * folio must go through the deferred free once at most: a second free
 * while it still waits would link it into a deferred list twice.
 */
static void soft_offline_unpoison(off_t off)
{
	const char *name = "MADV_SOFT_OFFLINE then unpoison";
	long waiting = -1;
	unsigned long pfn;
	int fd, pm, ret;
	double t0;
	void *p;

	if (access(UNPOISON_PFN, W_OK)) {
		ksft_test_result_skip("%s: no %s\n", name, UNPOISON_PFN);
		return;
	}
	p = map_hot_page(off, &fd);
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0)
		ksft_exit_fail_perror("pagemap");
	pfn = pagemap_get_pfn(pm, p);
	close(pm);
	if (madvise(p, STRIDE, MADV_SOFT_OFFLINE)) {
		ksft_test_result_skip("%s: %s\n", name, strerror(errno));
		goto out;
	}
	ret = write_long(UNPOISON_PFN, pfn);
	if (ret) {
		ksft_test_result_fail("%s: unpoison of PFN %#lx: %s\n", name, pfn,
				      strerror(-ret));
		goto out;
	}
	t0 = now();
	while (now() - t0 < 5.0) {
		waiting = nr_free_rcu_pages();
		if (waiting == 0)
			break;
		usleep(10000);
	}
	ksft_test_result(waiting == 0,
			 "%s of a hot page cache folio: nr_free_rcu_pages %ld after %.2f s\n",
			 name, waiting, now() - t0);
out:
	munmap(p, STRIDE);
	close(fd);
}

#define CMA_DIR		"/sys/kernel/debug/cma/reserved"

static long read_long(const char *file)
{
	long val = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

static int write_long(const char *file, long val)
{
	char buf[32];
	int fd = open(file, O_WRONLY), len, ret = 0;

	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%ld", val);
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * What made a CMA allocation fail, told on a failed attempt: the counters of
 * migration, compaction, reclaim and the deferred free since the attempt
 * began, every test_pages_isolated() of the attempt (its tracepoint: one
 * failed test means the drain after it found nothing waiting on any CPU,
 * two that the range was still busy after the drain freed what waited), and
 * the first PFN found busy, with its /proc/kpageflags now and 100 ms later
 * (a page that waits for a grace period or that compaction holds isolated
 * shows neither BUDDY nor LRU; the first turns into a buddy page).
 */
#define TRACEFS		"/sys/kernel/tracing"
#define ISOLATED_EVENT	TRACEFS "/events/page_isolation/test_pages_isolated"

/* The PFNs in the CMA area of the file's pages, as pages_in_cma() last found them. */
static long cma_pfns[CMA_FILE_SIZE / STRIDE];
static long nr_cma_pfns;

static const char *const cma_counters[] = {
	"nr_free_rcu_pages", "rcu_free_deferred", "rcu_free_expedited",
	"pgmigrate_success", "pgmigrate_fail", "compact_isolated",
	"compact_daemon_wake", "pgscan_kswapd", "nr_isolated_anon", "nr_isolated_file",
};

static bool cma_trace_start(long *counters)
{
	int fd;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cma_counters); i++)
		counters[i] = read_vmstat(cma_counters[i]);
	/* sys/mount.h clashes with vm_util.h's linux/fs.h. */
	if (access(ISOLATED_EVENT, F_OK) &&
	    syscall(__NR_mount, "tracefs", TRACEFS, "tracefs", 0UL, NULL))
		return false;
	fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
	return !write_long(ISOLATED_EVENT "/enable", 1);
}

/* The page's /proc/kpageflags word (vm_util's pageflags_get()), -1 if unreadable. */
static long page_flags(long pfn)
{
	int fd = open("/proc/kpageflags", O_RDONLY);
	uint64_t flags;
	long ret = fd >= 0 && !pageflags_get(pfn, fd, &flags) ? (long)flags : -1;

	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * Reports a failed attempt. Returns whether the deferred free may have
 * caused it: the busy page is one of the file's hot pages (which the drain
 * must have freed, or migration must have moved), or nothing tells. A busy
 * page that is not the file's is 7.3.4's own: in use, or held by reclaim or
 * compaction (the file is the only hot page cache that can be in the area:
 * a block device's is not movable).
 */
static bool cma_trace_report(bool traced, const long *counters)
{
	char line[512], *p;
	long pfn, busy = -1, i, fails = 0;
	bool file_page = false;
	FILE *f;

	for (i = 0; i < (long)ARRAY_SIZE(cma_counters); i++) {
		long now = read_vmstat(cma_counters[i]);

		ksft_print_msg("  %s: %ld (%+ld)\n", cma_counters[i], now, now - counters[i]);
	}
	f = traced ? fopen(TRACEFS "/trace", "r") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		p = strstr(line, "test_pages_isolated:");
		if (!p)
			continue;
		ksft_print_msg("  %s", p);
		p = strstr(p, "fin_pfn=");
		if (p && strstr(p, "ret=fail") && sscanf(p, "fin_pfn=%lx", &pfn) == 1) {
			busy = pfn;
			fails++;
		}
	}
	if (f)
		fclose(f);
	if (busy < 0) {
		ksft_print_msg("  no failed test_pages_isolated() %s\n",
			       traced ? "traced" : "(no tracefs)");
		return true;
	}
	for (i = 0; i < nr_cma_pfns; i++)
		file_page |= cma_pfns[i] == busy;
	ksft_print_msg("  %ld failed test(s); busy pfn %#lx (%s), kpageflags %#lx\n", fails, busy,
		       file_page ? "a page of the file" : "not the file's", page_flags(busy));
	usleep(100000);
	ksft_print_msg("  100 ms later: kpageflags %#lx\n", page_flags(busy));
	return file_page;
}

static void cma_trace_stop(bool traced)
{
	if (traced)
		write_long(ISOLATED_EVENT "/enable", 0);
}

/*
 * The offsets of the pages of the span whose page cache sits in the CMA area
 * [@base, @base + @count): maps the span, faults it in and reads the PFNs
 * from /proc/self/pagemap. Returns how many it stored in @offs.
 */
static long pages_in_cma(int fd, off_t size, long base, long count, off_t *offs)
{
	long npages = size / STRIDE, i, n = 0;
	uint64_t *pfns = calloc(npages, sizeof(*pfns));
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	char *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);

	if (!pfns || pagemap < 0 || p == MAP_FAILED)
		ksft_exit_fail_perror("pagemap");
	for (i = 0; i < npages; i++)
		FORCE_READ(p[i * STRIDE]);
	if (pread(pagemap, pfns, npages * sizeof(*pfns),
		  (uintptr_t)p / STRIDE * sizeof(*pfns)) != (ssize_t)(npages * sizeof(*pfns)))
		ksft_exit_fail_perror("pagemap");
	for (i = 0; i < npages; i++) {
		long pfn = pfns[i] & ((1ULL << 55) - 1);

		if ((pfns[i] >> 63) && pfn >= base && pfn < base + count) {
			cma_pfns[n] = pfn;
			offs[n++] = i * STRIDE;
		}
	}
	nr_cma_pfns = n;
	munmap(p, size);
	close(pagemap);
	free(pfns);
	return n;
}

/*
 * Page cache lands in CMA when the rest of the zone runs low: with a hog
 * holding most of the memory, drop the span and read it back in, until some
 * of it sits in the CMA area.
 */
/* The NUMA node whose zones span @pfn (/proc/zoneinfo), or -1. */
static int pfn_node(long pfn)
{
	long start = -1, spanned;
	int node = -1, found = -1;
	char line[256];
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d,", &node) == 1)
			start = -1;
		else if (sscanf(line, " spanned %ld", &spanned) == 1 && start >= 0 &&
			 pfn >= start && pfn < start + spanned)
			found = node;
		else if (sscanf(line, " start_pfn: %ld", &start) == 1 && start >= 0 &&
			 pfn >= start && pfn < start + spanned)
			found = node;
	}
	fclose(f);
	return found;
}

/* MemFree of @node in MiB, or -1. */
static long node_free_mib(int node)
{
	char file[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(file, sizeof(file), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(file, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %*d MemFree: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib < 0 ? -1 : kib / 1024;
}

/* Binds the allocations of this task to @node (-1: the default policy). */
static void bind_node(int node)
{
	unsigned long mask = node < 0 ? 0 : 1UL << node;

	if (syscall(SYS_set_mempolicy, node < 0 ? MPOL_DEFAULT : MPOL_BIND,
		    node < 0 ? NULL : &mask, node < 0 ? 0 : 8 * sizeof(mask)))
		ksft_exit_fail_perror("set_mempolicy");
}

/*
 * Movable allocations come from CMA once more than half of a zone's free
 * memory is CMA (or the rest runs out). So: on the node of the CMA area, a
 * hog takes all but @margin MiB of the free memory, and the file is dropped
 * and read back in on that node, until some of it sits in the CMA area. An
 * attempt drops what the one before placed: after the first, it takes
 * another only if none of the file got there (a few pages test as well).
 */
static long fill_cma(int fd, off_t size, long base, long count, off_t *offs)
{
	static const long margins[] = { 96, 64, 32 };
	int node = pfn_node(base), attempt, status, ready[2];
	long n = pages_in_cma(fd, size, base, count, offs);
	char c;
	pid_t pid;

	for (attempt = 0; attempt < 3 && (attempt ? !n : n < 64); attempt++) {
		long mib = node >= 0 ? node_free_mib(node) - margins[attempt] : hog_mib;

		if (mib <= 0 || pipe(ready))
			break;
		pid = fork();
		if (pid < 0)
			ksft_exit_fail_perror("fork");
		if (!pid) {
			close(ready[0]);
			bind_node(node);
			hog(mib, ready[1]);
		}
		close(ready[1]);
		if (read(ready[0], &c, 1) != 1)
			ksft_print_msg("the CMA hog did not start\n");
		close(ready[0]);
		bind_node(node);
		posix_fadvise(fd, 0, size, POSIX_FADV_DONTNEED);
		n = pages_in_cma(fd, size, base, count, offs);
		bind_node(-1);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		ksft_print_msg("node %d, a %ld MiB hog: %ld pages of the file in CMA\n",
			       node, mib, n);
	}
	return n;
}

/* A file of CMA_FILE_SIZE in cma_dir, written and synced; returns its fd. */
static int cma_file(char *name, size_t len)
{
	static char buf[1 << 16];
	size_t done;
	int fd;

	snprintf(name, len, "%s/rcu_free_test.cma", cma_dir);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		ksft_exit_fail_perror(name);
	memset(buf, 0x5a, sizeof(buf));
	for (done = 0; done < CMA_FILE_SIZE; done += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			ksft_exit_fail_perror(name);
	if (fsync(fd))
		ksft_exit_fail_perror("fsync");
	return fd;
}

/* How many of the first @n PFNs of cma_pfns are active (told, not checked: MGLRU has none). */
static long count_active(long n)
{
	int fd = open("/proc/kpageflags", O_RDONLY);
	long i, active = 0;
	uint64_t flags;

	for (i = 0; fd >= 0 && i < n; i++)
		if (!pageflags_get(cma_pfns[i], fd, &flags) && (flags & (1ULL << KPF_ACTIVE_BIT)))
			active++;
	if (fd >= 0)
		close(fd);
	return active;
}

/*
 * Makes the first @n pages of @offs hot: 8 rounds over them, each page read,
 * then the page half the file away. A read in the folio of the previous read
 * does not mark the folio accessed (filemap_read()), and pages next to each
 * other are often of one large folio: read one after the other, that folio
 * would be marked once in all. The page half the file away is of another
 * folio: 16 MiB away, at least 8 PMD-sized folios of 4K pages.
 *
 * The LRU's folio batches are per CPU: a small folio read in (or read a
 * second time) waits in a CPU's lru_add (or lru_activate) batch, off the LRU
 * or not yet active, and reads of it change nothing until that batch is
 * drained, which a few small folios never fill. So every round ends with
 * lru_add_drain_all(), without dropping any cache: POSIX_FADV_DONTNEED
 * cannot invalidate a page that is mapped, and generic_fadvise() then drains
 * the batches of every CPU, in case they held it. The page is one of a file
 * of its own in cma_dir (tmpfs ignores the advice).
 */
static void read_rounds(int fd, off_t size, const off_t *offs, long n)
{
	char buf[16], name[4096], *mapped;
	int round, drain;
	long i;

	snprintf(name, sizeof(name), "%s/rcu_free_test.drain", cma_dir);
	drain = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (drain < 0 || ftruncate(drain, STRIDE))
		ksft_exit_fail_perror(name);
	mapped = mmap(NULL, STRIDE, PROT_READ, MAP_SHARED, drain, 0);
	if (mapped == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	FORCE_READ(*mapped);
	for (round = 0; round < 8; round++) {
		for (i = 0; i < n; i++)
			if (pread(fd, buf, sizeof(buf), offs[i]) < 0 ||
			    pread(fd, buf, sizeof(buf), (offs[i] + size / 2) % size) < 0)
				ksft_exit_fail_perror("pread");
		posix_fadvise(drain, 0, STRIDE, POSIX_FADV_DONTNEED);
	}
	munmap(mapped, STRIDE);
	close(drain);
	unlink(name);
}

static void cma_test(int nth, long most)
{
	long base = read_long(CMA_DIR "/base_pfn");
	long count = read_long(CMA_DIR "/count");
	long chunk, deferred, active, n;
	int fd, ret, attempt;
	long counters[ARRAY_SIZE(cma_counters)];
	off_t size, *offs;
	char name[4096];
	bool traced, blamed = false;

	if (!cma_dir) {
		ksft_test_result_skip("alloc_contig_range %d: no -c <dir>\n", nth);
		return;
	}
	if (base < 0 || count <= 0) {
		ksft_test_result_skip("alloc_contig_range %d: no CMA area at " CMA_DIR
				      " (cma= and CONFIG_CMA_DEBUGFS)\n", nth);
		return;
	}
	fd = cma_file(name, sizeof(name));
	size = CMA_FILE_SIZE;
	offs = calloc(size / STRIDE, sizeof(*offs));
	if (!offs)
		ksft_exit_fail_perror("calloc");
	n = fill_cma(fd, size, base, count, offs);
	n = n < most ? n : most;
	if (!n) {
		/* Where movable allocations go is the allocator's choice: nothing to test. */
		ksft_test_result_skip("alloc_contig_range %d: none of %s got into the CMA area\n",
				      nth, name);
		goto out;
	}
	/*
	 * Hot: read_rounds(). Reclaim that the hog started may still take some
	 * of them afterwards: count them again, and heat them again while the
	 * set changes. No page left, or a set that does not settle, leaves
	 * nothing to test.
	 */
	for (attempt = 0; ; attempt++) {
		static long before[CMA_FILE_SIZE / STRIDE];
		long left;

		read_rounds(fd, size, offs, n);
		memcpy(before, cma_pfns, n * sizeof(*before));
		left = pages_in_cma(fd, size, base, count, offs);
		left = left < most ? left : most;
		if (left == n && !memcmp(before, cma_pfns, n * sizeof(*before)))
			break;
		ksft_print_msg("the file's pages in CMA changed while made hot: %ld, now %ld\n",
			       n, left);
		n = left;
		if (!n || attempt == 2) {
			ksft_test_result_skip("alloc_contig_range %d: CMA pages of the file %s\n",
					      nth, n ? "kept changing" : "reclaimed");
			goto out;
		}
	}

	active = count_active(n);
	chunk = read_long(CMA_DIR "/maxchunk");
	deferred = read_vmstat("rcu_free_deferred");
	/*
	 * The waiting pages are freed before alloc_contig_range() tests the
	 * range: the first attempt must succeed, unless what made it fail was
	 * not the deferred free's (a busy page that is not the file's: 7.3.4
	 * fails there too, and succeeds a second later). Later attempts only
	 * tell how far off it was.
	 */
	for (attempt = 1; attempt <= 3; attempt++) {
		traced = cma_trace_start(counters);
		ret = write_long(CMA_DIR "/alloc", chunk);
		if (ret != -ENOMEM && ret != -EBUSY) {
			cma_trace_stop(traced);
			break;
		}
		ksft_print_msg("attempt %d: %s\n", attempt, strerror(-ret));
		blamed |= cma_trace_report(traced, counters);
		cma_trace_stop(traced);
		sleep(1);
	}
	deferred = read_vmstat("rcu_free_deferred") - deferred;
	ksft_print_msg("CMA area: %ld pages, %ld of them made hot (%ld active), page cache of %s\n",
		       count, n, active, name);
	ksft_print_msg("allocating %ld pages: %s, %ld pages deferred\n", chunk,
		       ret ? strerror(-ret) : "ok", deferred);
	ksft_test_result(!ret && (attempt == 1 || !blamed) && deferred > 0,
			 "alloc_contig_range %d over hot page cache (attempt %d%s)\n", nth,
			 attempt, attempt > 1 && !blamed ?
			 "; the failed ones on a page not the file's" : "");
	if (!ret && write_long(CMA_DIR "/free", chunk))
		ksft_print_msg("could not free the CMA allocation\n");
out:
	free(offs);
	close(fd);
	unlink(name);
}

/* nr_free_rcu_pages with the per-CPU deltas folded in. */
static long nr_free_rcu_pages(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			ksft_print_msg("stat_refresh: %s\n", strerror(errno));
		close(fd);
	}
	return read_vmstat("nr_free_rcu_pages");
}

int main(int argc, char **argv)
{
	long deferred, expedited, waiting = -1;
	pthread_t *threads;
	int opt, status;
	double t0;
	pid_t pid;
	long i;

	while ((opt = getopt(argc, argv, "t:d:m:c:r:")) != -1) {
		switch (opt) {
		case 't':
			nr_threads = atoi(optarg);
			break;
		case 'd':
			duration = atoi(optarg);
			break;
		case 'm':
			hog_mib = atol(optarg);
			break;
		case 'c':
			cma_dir = optarg;
			break;
		case 'r':
			cma_rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr, USAGE, argv[0]);
			return KSFT_FAIL;
		}
	}
	if (optind != argc - 1 || nr_threads < 1 || duration < 1 || hog_mib < 0 ||
	    cma_rounds < 1) {
		fprintf(stderr, USAGE, argv[0]);
		return KSFT_FAIL;
	}
	path = argv[optind];

	ksft_print_header();
	deferred = read_vmstat("rcu_free_deferred");
	expedited = read_vmstat("rcu_free_expedited");
	if (deferred < 0)
		ksft_exit_skip("no rcu_free_deferred in /proc/vmstat (CONFIG_PAGE_RCU_FREE off)\n");
	ksft_set_plan(6 + cma_rounds);

	/* Most of what is available: reclaim has to free page cache, flagged folios too. */
	if (!hog_mib)
		hog_mib = meminfo_kib("MemAvailable:") / 1024 * 8 / 10;
	ksft_print_msg("%d readers of %s and a %ld MiB hog for %d s\n", nr_threads, path,
		       hog_mib, duration);

	pid = fork();
	if (pid < 0)
		ksft_exit_fail_perror("fork");
	if (!pid)
		hog(hog_mib, -1);

	threads = calloc(nr_threads + 1, sizeof(*threads));
	for (i = 0; i < nr_threads; i++)
		if (pthread_create(&threads[i], NULL, reader, (void *)i))
			ksft_exit_fail_msg("pthread_create\n");
	if (pthread_create(&threads[nr_threads], NULL, sampler, NULL))
		ksft_exit_fail_msg("pthread_create\n");
	sleep(duration);
	atomic_store(&stop, true);
	for (i = 0; i <= nr_threads; i++)
		pthread_join(threads[i], NULL);
	ksft_print_msg("waiting under pressure: peak %ld pages (%ld KiB), mean %ld, %ld samples\n",
		       waiting_peak, waiting_peak * (long)(STRIDE / 1024),
		       waiting_samples ? waiting_sum / waiting_samples : 0, waiting_samples);

	/* The hog must still be running: killed by the OOM killer is a failure. */
	if (waitpid(pid, &status, WNOHANG) == pid)
		ksft_test_result_fail("the memory hog died: %s %d\n",
				      WIFSIGNALED(status) ? "signal" : "exit",
				      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	else
		ksft_test_result_pass("the memory hog ran next to the hot reads, no OOM kill\n");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);

	deferred = read_vmstat("rcu_free_deferred") - deferred;
	expedited = read_vmstat("rcu_free_expedited") - expedited;
	ksft_print_msg("deferred: %ld pages, expedited grace periods: %ld\n", deferred, expedited);
	ksft_test_result(deferred > 0, "frees of hot folios were deferred\n");

	t0 = now();
	while (now() - t0 < 1.0) {
		waiting = nr_free_rcu_pages();
		if (waiting == 0)
			break;
		usleep(10000);
	}
	ksft_test_result(waiting == 0, "nr_free_rcu_pages back to 0 after %.2f s (%ld left)\n",
			 now() - t0, waiting);

	poison(MADV_HWPOISON, "MADV_HWPOISON", 0);
	poison(MADV_SOFT_OFFLINE, "MADV_SOFT_OFFLINE", 128 * STRIDE);
	soft_offline_unpoison(256 * STRIDE);
	/* The last of two or more rounds makes only CMA_SMALL_HOT_SET pages hot. */
	for (i = 1; i <= cma_rounds; i++)
		cma_test(i, i > 1 && i == cma_rounds ? CMA_SMALL_HOT_SET : LONG_MAX);

	ksft_finished();
}
