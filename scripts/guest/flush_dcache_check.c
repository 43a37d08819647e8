// SPDX-License-Identifier: GPL-2.0
/*
 * flush_dcache_check <dir>: the lockless read and a writable shared
 * mapping (make check on x86, make matrix entry arm64;
 * scripts/guest/tests.txt).
 *
 * On an architecture whose user mappings may alias the kernel's
 * (ARCH_IMPLEMENTS_FLUSH_DCACHE_PAGE: arm64, arm, riscv, powerpc, ...),
 * filemap_read_nolock() leaves a file that is mapped writably
 * (mapping_writably_mapped()) to the normal path, which calls
 * flush_dcache_folio() before it copies. This program shows that path taken:
 *
 *  1. hot 16-byte reads of a file in <dir> are copied without a folio
 *     reference (/sys/kernel/debug/filemap/lockless_reads_copied grows);
 *  2. with the file mapped MAP_SHARED and PROT_WRITE and a word written
 *     through the mapping, the same reads are not (the counter stays), a
 *     kprobe event on flush_dcache_folio() filtered on this process counts
 *     one hit per read, and the reads return the word written;
 *  3. after munmap() the reads are lockless again.
 *
 * On x86 (no aliasing, flush_dcache_folio() an empty inline) step 2 checks
 * the opposite: the reads stay lockless while the file is mapped, and the
 * kprobe is skipped. Output: KTAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* ARCH_IMPLEMENTS_FLUSH_DCACHE_PAGE: the architectures that define it 1. */
#if defined(__aarch64__) || defined(__arm__) || defined(__riscv) || defined(__powerpc__) || \
	defined(__mips__) || defined(__sparc__) || defined(__hppa__) || defined(__sh__) || \
	defined(__m68k__) || defined(__xtensa__) || defined(__arc__) || defined(__csky__) || \
	defined(__microblaze__) || defined(__nios2__) || defined(__or1k__)
#define FLUSH_DCACHE 1
#else
#define FLUSH_DCACHE 0 /* x86, s390, loongarch, um: the asm-generic no-op */
#endif

#define COPIED "/sys/kernel/debug/filemap/lockless_reads_copied"
#define SIZE (256 * 1024)
#define READS 1000
/*
 * Reads of hot folios that may take the normal path: one per folio, if
 * compaction migrated it (the new folio gets PG_rcu_free at its next read).
 */
#define SLACK 4
#define EVENT "matrix_flush_dcache"

static const char *tracing;
static int failed, num;

static void result(int ok, const char *skip, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void result(int ok, const char *skip, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", ok || skip ? "ok" : "not ok", ++num);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (skip)
		printf(" # SKIP %s", skip);
	printf("\n");
	fflush(stdout);
	if (!ok && !skip)
		failed++;
}

static long long read_number(const char *path)
{
	char buf[64] = "";
	long long v = -1;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		v = atoll(buf);
	close(fd);
	return v;
}

static int write_str(const char *dir, const char *file, const char *s, int flags)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | flags);
	if (fd < 0)
		return -1;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -1;
	close(fd);
	return ret;
}

/* The hits of the kprobe event since it was cleared: lines of trace. */
static long count_hits(void)
{
	char path[256], line[512];
	long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", tracing);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && strstr(line, EVENT ":"))
			n++;
	fclose(f);
	return n;
}

static int kprobe_start(void)
{
	static const char *dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char buf[128];
	unsigned int i;

	for (i = 0; i < 2 && !tracing; i++) {
		snprintf(buf, sizeof(buf), "%s/kprobe_events", dirs[i]);
		if (access(buf, W_OK) && i == 0)
			mount("tracefs", dirs[0], "tracefs", 0, NULL);
		if (!access(buf, W_OK))
			tracing = dirs[i];
	}
	if (!tracing)
		return -1;
	if (write_str(tracing, "kprobe_events", "p:" EVENT " flush_dcache_folio\n", O_APPEND))
		return -1;
	snprintf(buf, sizeof(buf), "common_pid == %d", getpid());
	if (write_str(tracing, "events/kprobes/" EVENT "/filter", buf, O_TRUNC))
		return -1;
	write_str(tracing, "trace", "", O_TRUNC);
	return write_str(tracing, "events/kprobes/" EVENT "/enable", "1", O_TRUNC);
}

static void kprobe_stop(void)
{
	if (!tracing)
		return;
	write_str(tracing, "events/kprobes/" EVENT "/enable", "0", O_TRUNC);
	write_str(tracing, "kprobe_events", "-:" EVENT "\n", O_APPEND);
}

/*
 * @reads reads of 16 bytes, at the start of the first and of the second page
 * in turn: the lockless copies they made.
 */
static long long hot_reads(int fd, char *first, int reads)
{
	long long before = read_number(COPIED);
	long page = sysconf(_SC_PAGESIZE);
	char buf[16];
	int i;

	for (i = 0; i < reads; i++) {
		if (pread(fd, buf, sizeof(buf), i % 2 * page) != sizeof(buf)) {
			perror("pread");
			exit(1);
		}
		if (i == 0 && first)
			memcpy(first, buf, sizeof(buf));
	}
	return read_number(COPIED) - before;
}

/*
 * Make the folios of the first two pages hot. A read marks its folio
 * accessed unless the previous read of the same open file ended in it
 * (filemap_read()), and the two pages may share a large folio (ext2): each
 * read here is on a file opened for it. A folio that is new, or queued for
 * activation, waits in a per-CPU LRU batch and is made active only when
 * that batch drains, which two folios never fill (and another CPU's batch
 * is not looked into): compaction drains every CPU's batches first
 * (lru_add_drain_all()).
 */
static void make_hot(const char *path)
{
	long page = sysconf(_SC_PAGESIZE);
	int round, i, fd;
	char buf[16];

	for (round = 0; round < 4; round++) {
		for (i = 0; i < 4; i++) {
			fd = open(path, O_RDONLY);
			if (fd < 0 || pread(fd, buf, sizeof(buf), i % 2 * page) != sizeof(buf)) {
				perror(path);
				exit(1);
			}
			close(fd);
		}
		if (write_str("/proc/sys/vm", "compact_memory", "1", 0) && !round)
			printf("# no /proc/sys/vm/compact_memory: the LRU batches drain when they do\n");
	}
}

/*
 * On a failed step: the /proc/kpageflags bits of the first two pages
 * (through a read-only mapping of a read-only descriptor, which leaves the
 * file not writably mapped), to tell why the reads were not lockless.
 */
static void tell_flags(const char *path)
{
	static const char *const names[] = {
		[2] = "referenced", [3] = "uptodate", [4] = "dirty", [5] = "lru",
		[6] = "active", [8] = "writeback", [9] = "reclaim", [13] = "swapcache",
		[15] = "head", [16] = "tail", [18] = "unevictable", [25] = "idle",
		[35] = "private",
	};
	long page = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDONLY), pm = open("/proc/self/pagemap", O_RDONLY);
	int kpf = open("/proc/kpageflags", O_RDONLY);
	unsigned long long pfn, flags;
	volatile char *map;
	unsigned int i, b;

	map = fd < 0 ? MAP_FAILED : mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED || pm < 0 || kpf < 0) {
		printf("# no page flags (pagemap, kpageflags)\n");
		goto out;
	}
	for (i = 0; i < 2; i++) {
		(void)map[i * page];
		if (pread(pm, &pfn, 8, ((unsigned long)map / page + i) * 8) != 8 ||
		    !(pfn >> 63) ||
		    pread(kpf, &flags, 8, (pfn & ((1ULL << 55) - 1)) * 8) != 8) {
			printf("# page %u: no pfn\n", i);
			continue;
		}
		printf("# page %u flags %#llx:", i, flags);
		for (b = 0; b < sizeof(names) / sizeof(names[0]); b++)
			if (names[b] && flags >> b & 1)
				printf(" %s", names[b]);
		printf("\n");
	}
	printf("# (kpageflags has no PG_rcu_free, PG_workingset or MGLRU references)\n");
	munmap((void *)map, 2 * page);
out:
	if (fd >= 0)
		close(fd);
	if (pm >= 0)
		close(pm);
	if (kpf >= 0)
		close(kpf);
}

int main(int argc, char **argv)
{
	char path[512], got[16];
	static char data[SIZE];
	long long warm, mapped, after;
	long hits = -1;
	char *map;
	int fd, i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <directory>\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..5\n");
	printf("# %s, ARCH_IMPLEMENTS_FLUSH_DCACHE_PAGE %d\n", argv[1], FLUSH_DCACHE);
	if (read_number(COPIED) < 0) {
		printf("# no %s (CONFIG_PAGE_RCU_FREE and DEBUG_FS)\n", COPIED);
		for (i = 1; i <= 5; i++)
			printf("ok %d # SKIP no lockless reads\n", i);
		return 4;
	}
	snprintf(path, sizeof(path), "%s/flush_dcache_check.%d", argv[1], getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	memset(data, 'a', sizeof(data));
	memcpy(data, "written by write", 16);
	if (write(fd, data, sizeof(data)) != sizeof(data)) {
		perror("write");
		return 1;
	}

	/* Hot: the reads mark the folios accessed until they get PG_rcu_free. */
	make_hot(path);
	warm = hot_reads(fd, NULL, READS);
	result(warm >= READS - SLACK, NULL, "lockless reads of the unmapped file (%lld of %d)", warm,
	       READS);
	if (warm < READS - SLACK)
		tell_flags(path);

	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(map, "written via mmap", 16);
	if (FLUSH_DCACHE && kprobe_start())
		printf("# no kprobe event on flush_dcache_folio (KPROBE_EVENTS, tracefs)\n");
	mapped = hot_reads(fd, got, READS);
	if (FLUSH_DCACHE && tracing)
		hits = count_hits();
	kprobe_stop();
	if (FLUSH_DCACHE)
		result(mapped == 0, NULL, "no lockless reads while mapped writably (%lld of %d)",
		       mapped, READS);
	else
		result(mapped >= READS - SLACK, NULL,
		       "lockless reads while mapped writably, no aliasing here (%lld of %d)",
		       mapped, READS);
	result(!FLUSH_DCACHE || hits >= READS,
	       !FLUSH_DCACHE ? "flush_dcache_folio() is empty here" :
	       hits < 0 ? "no kprobe event" : NULL,
	       "flush_dcache_folio() on every read while mapped (%ld hits for %d reads)", hits, READS);
	result(!memcmp(got, "written via mmap", 16), NULL,
	       "the reads return the bytes written through the mapping (\"%.16s\")", got);

	munmap(map, SIZE);
	after = hot_reads(fd, NULL, READS);
	result(after >= READS - SLACK, NULL, "lockless reads again after munmap (%lld of %d)", after,
	       READS);
	close(fd);
	unlink(path);
	printf("# %s\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}
