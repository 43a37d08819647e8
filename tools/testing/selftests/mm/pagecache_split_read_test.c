// SPDX-License-Identifier: GPL-2.0
/*
 * Page cache reads next to folio splits, for the lockless small reads of
 * filemap_read() and shmem (CONFIG_PAGE_RCU_FREE): a read that copies from
 * a folio without a reference must not copy past the folio when a split
 * shrinks it under the read. For a tmpfs mounted with huge=always.
 *
 * Every 8-byte word of a test file names the file and its own offset: the
 * word at offset o of the file with id i holds (i << 48) | o, stored little
 * endian, never 0. The large folio at offset 0 is made from the PMD-sized
 * folio a write allocates, split to the order wanted through
 * /sys/kernel/debug/split_huge_pages, and its order is read back through
 * /proc/self/pagemap and /proc/kpageflags; then reads make it hot (and
 * PG_rcu_free). Two modes:
 *
 * split: for a folio of order 2, 3, 4 and the PMD order, mlocked and not,
 *   readers pread() the folio and one page more (a read longer than the
 *   folio, which must take the normal path), and 16 bytes to 64 KiB within
 *   the folio, to its end and across its end, at offsets in and out of word
 *   alignment, and check every word. A splitter splits the folio (to order
 *   0, to an order between, or non-uniformly at a page), checks that it was
 *   split, and makes it again: punches the folio's range and writes it back
 *   in one pwrite() (for the PMD order every other time MADV_COLLAPSE, which
 *   keeps the data), mlocks it again and reads it hot again. A word that is
 *   not its value is wrong. A zero word is wrong too, unless the read
 *   overlapped a punch and write back: the splitter bumps a generation count
 *   before the punch and after the write back, as a seqcount writer does.
 *   The test fails on a wrong word, or when no case split at all (a case
 *   in which no split took is skipped).
 *
 * consistency: for a folio of order 4 and of the PMD order, a writer stamps
 *   pages 15, 7, 1 and 0 of it, in that order, with a count, over and over,
 *   and readers pread() pages 0 to N (N = 1, 7 or 15: 64 KiB at most, so
 *   that the read may be lockless) in one call. A read copies page 0 first
 *   and the writer stamps page 0 last, so the stamps of one read must never
 *   decrease from page to page. A disturber splits the folio, moves the
 *   stamped pages but page 0 to the other NUMA node (where there are two;
 *   the writer then stamps the new pages), punches pages
 *   that carry no stamp and writes them back, and makes the large folio
 *   again (MADV_COLLAPSE, or a punch and write back with the writer held
 *   off and the current stamps, under the generation count). A stamp is a
 *   thermometer code, so that a read that races with a stamp write (a copy
 *   is not atomic) gets a value between the old and the new one: the first
 *   2048 bytes of the page, each counts up to 255 before the next one
 *   starts, one single-byte pwrite() per count; its value is the sum of the
 *   bytes. The rest of each page is checked word by word as above (zero is
 *   fine in the pages that get punched). The test fails on a stamp that
 *   decreases or is 0, or on a wrong word.
 *
 * Seeds are fixed: the order of events varies with the scheduler, the set
 * of operations does not. Each case runs for -d seconds (8 by default: 8
 * split cases and 2 consistency cases, 80 seconds in all).
 *
 * Without split_huge_pages (debugfs not mounted, or no THP), the split mode
 * is skipped, and the consistency mode runs on whatever folios the file
 * system gives, without the splits: a check of the test itself.
 *
 * Usage: pagecache_split_read_test [-m split|consistency] [-t readers]
 *                                  [-d seconds] <directory>
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/mempolicy.h>
#include <unistd.h>

#include "../kselftest.h"
#include "vm_util.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE	0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE	0x02
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif

#define SPLIT_PATH	"/sys/kernel/debug/split_huge_pages"
#define PMD_SIZE_PATH	"/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"

/* The largest read copied without a folio reference. */
#define MAX_NOLOCK	(64 << 10)

/* The thermometer stamp at the start of a page: up to 255 per byte. */
#define STAMP_BYTES	2048
#define STAMP_MAX	(STAMP_BYTES * 255UL)

/* The stamped pages of the consistency mode, in the order a read copies them. */
static const unsigned long stamp_pages[] = { 0, 1, 7, 15 };
#define NR_STAMPS	ARRAY_SIZE(stamp_pages)

/* The orders of the split mode; the last one is the PMD order. */
static const int split_orders[] = { 2, 3, 4, -1 };
#define NR_SPLIT_ORDERS	ARRAY_SIZE(split_orders)
static const int consistency_orders[] = { 4, -1 };
#define NR_CONSISTENCY_ORDERS	ARRAY_SIZE(consistency_orders)

#define MAX_REPORTS	8

static char dir[PATH_MAX];
static int nr_readers = 3, duration = 8;
static size_t page_size;
static int pmd_order = -1;
static int pagemap_fd = -1, kpageflags_fd = -1;
static bool can_split;

/* One case: one file, one folio order. */
struct test_case {
	char path[256];
	int fd;			/* O_RDWR, the splitter's or the disturber's */
	int order;
	unsigned long nr;	/* pages in the folio */
	size_t fsize;		/* bytes in the folio */
	size_t file_size;
	uint16_t id;
	bool mlocked, stamped;
	char *map;		/* the mlocked mapping of the folio */
	char *content;		/* what the file holds, file_size bytes */

	/* Odd while a punch and write back (or a stamp reset) is going on. */
	atomic_uint gen;
	atomic_bool stop, pause_writer;

	/* Stamps (consistency mode): the writer's lock and count. */
	pthread_mutex_t lock;
	uint64_t seq;

	atomic_long reads, short_reads, wrong_words, violations, raced;
	atomic_long splits, split_misses, split_errors, remakes, remade_smaller;
	atomic_long collapses, punches, stamps, resets, reported, migrations;
};

struct reader_arg {
	struct test_case *tc;
	uint64_t rng;
};

/* The word at offset @off (a multiple of 8) of file @id: never 0. */
static inline uint64_t ident(uint16_t id, uint64_t off)
{
	return (uint64_t)id << 48 | off;
}

/* The byte at offset @off of file @id: its byte of the word, little endian. */
static inline uint8_t ident_byte(uint16_t id, uint64_t off)
{
	return ident(id, off & ~7ULL) >> (8 * (off & 7));
}

static void fill(char *buf, uint64_t off, size_t len, uint16_t id)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = ident_byte(id, off + i);
}

/* The stamp of count @seq: 255 in each byte before the last one. */
static void stamp_fill(char *buf, uint64_t seq)
{
	for (size_t i = 0; i < STAMP_BYTES; i++) {
		uint64_t below = 255 * i;

		buf[i] = seq >= below + 255 ? 255 : seq > below ? seq - below : 0;
	}
}

static uint64_t stamp_value(const unsigned char *buf)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < STAMP_BYTES; i++)
		sum += buf[i];
	return sum;
}

static bool is_stamp_page(unsigned long page)
{
	for (size_t i = 0; i < NR_STAMPS; i++)
		if (stamp_pages[i] == page)
			return true;
	return false;
}

/* xorshift, one state per thread, fixed seeds. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int open_file(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		ksft_exit_fail_perror(path);
	return fd;
}

/* One pwrite() for the whole range, so that it allocates the large folio. */
static void write_range(int fd, const char *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(fd, buf, len, off);

	if (n != (ssize_t)len) {
		if (n >= 0)
			errno = EIO;
		ksft_exit_fail_perror("pwrite");
	}
}

static void punch(int fd, uint64_t off, size_t len)
{
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len))
		ksft_exit_fail_perror("fallocate(FALLOC_FL_PUNCH_HOLE)");
}

/* Reads that make the folio at 0 hot: each one starts in another folio. */
static void heat(struct test_case *tc, int fd, int n)
{
	char buf[16];

	for (int i = 0; i < n; i++) {
		if (pread(fd, buf, sizeof(buf), 0) < 0 ||
		    pread(fd, buf, sizeof(buf), tc->fsize) < 0)
			ksft_exit_fail_perror("pread");
	}
}

/*
 * The order of the folio at offset 0 of the file, or -1 if it cannot be
 * told: maps the first page (it must not be a hole), reads its pfn from
 * /proc/self/pagemap and counts the tail pages after it in /proc/kpageflags.
 */
static int folio_order_at0(struct test_case *tc)
{
	static __thread uint64_t flags[1 + 2048];
	size_t max = 1UL << (pmd_order > 0 ? pmd_order : 0);
	uint64_t entry, pfn;
	ssize_t n;
	size_t i;
	char *map;

	if (pagemap_fd < 0 || kpageflags_fd < 0 || max >= 2048)
		return -1;
	map = mmap(NULL, page_size, PROT_READ, MAP_SHARED, tc->fd, 0);
	if (map == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	FORCE_READ(map[0]);
	n = pread(pagemap_fd, &entry, sizeof(entry),
		  (uintptr_t)map / page_size * sizeof(entry));
	munmap(map, page_size);
	if (n != sizeof(entry) || !(entry & PM_PRESENT))
		return -1;
	pfn = entry & ((1ULL << 55) - 1);
	if (!pfn)
		return -1;	/* no CAP_SYS_ADMIN: no pfn */
	n = pread(kpageflags_fd, flags, (max + 1) * sizeof(flags[0]),
		  pfn * sizeof(flags[0]));
	if (n < (ssize_t)sizeof(flags[0]))
		return -1;
	if (!(flags[0] & KPF_COMPOUND_HEAD))
		return 0;
	for (i = 1; i < (size_t)n / sizeof(flags[0]); i++)
		if (!(flags[i] & KPF_COMPOUND_TAIL))
			break;
	return __builtin_ctzl(i);
}

/*
 * Split the folios in the first @nr pages of the file to @order, through
 * split_huge_pages; non-uniformly at page @at when @at is not negative.
 * The write succeeds whether or not a folio was split.
 */
static bool split_file(int sfd, const char *path, unsigned long nr, int order, long at)
{
	char cmd[256 + 64];
	int len;

	if (at < 0)
		len = snprintf(cmd, sizeof(cmd), "%s,0x0,0x%lx,%d", path, nr, order);
	else
		len = snprintf(cmd, sizeof(cmd), "%s,0x0,0x%lx,%d,%ld", path, nr, order, at);
	return write(sfd, cmd, len) == len;
}

/* Split the folio at 0 once; count what happened. */
static void split_once(struct test_case *tc, int sfd, uint64_t r, unsigned long it)
{
	int order = 0, now;
	long at = -1;

	switch (it % 4) {
	case 1:
		at = (r >> 8) % tc->nr;		/* non-uniform, at any page */
		break;
	case 3:
		if (tc->order > 2)		/* to an order in between */
			order = 1 + (r >> 8) % (tc->order - 1);
		break;
	}
	if (!split_file(sfd, tc->path, tc->nr, order, at)) {
		atomic_fetch_add(&tc->split_errors, 1);
		return;
	}
	now = folio_order_at0(tc);
	if (now >= 0 && now < tc->order)
		atomic_fetch_add(&tc->splits, 1);
	else
		atomic_fetch_add(&tc->split_misses, 1);	/* a read held it */
}

/* MADV_COLLAPSE of the first PMD of the file: makes a PMD folio, keeps the data. */
static bool collapse(struct test_case *tc)
{
	size_t len = tc->fsize;
	char *area = mmap(NULL, 2 * len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *aligned, *map;
	bool ok;

	if (area == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	aligned = (char *)(((uintptr_t)area + len - 1) & ~(uintptr_t)(len - 1));
	map = mmap(aligned, len, PROT_READ, MAP_SHARED | MAP_FIXED, tc->fd, 0);
	ok = map != MAP_FAILED && !madvise(map, len, MADV_COLLAPSE);
	munmap(area, 2 * len);
	return ok;
}

static void copy_stamps(struct test_case *tc)
{
	for (size_t i = 0; i < NR_STAMPS; i++)
		stamp_fill(tc->content + stamp_pages[i] * page_size, tc->seq);
}

/*
 * Make the large folio at 0 again, after a split: MADV_COLLAPSE (PMD order,
 * every other time), or punch the range and write it back in one call.
 */
static void remake(struct test_case *tc, unsigned long it)
{
	bool collapsed = false;
	int now;

	if (tc->order == pmd_order && it % 2 == 0)
		collapsed = collapse(tc);
	if (collapsed) {
		atomic_fetch_add(&tc->collapses, 1);
	} else {
		if (tc->stamped) {
			/* Hold the writer off: the write back has the stamps. */
			atomic_store(&tc->pause_writer, true);
			pthread_mutex_lock(&tc->lock);
			copy_stamps(tc);
		}
		atomic_fetch_add(&tc->gen, 1);
		punch(tc->fd, 0, tc->fsize);
		write_range(tc->fd, tc->content, tc->fsize, 0);
		atomic_fetch_add(&tc->gen, 1);
		if (tc->stamped) {
			pthread_mutex_unlock(&tc->lock);
			atomic_store(&tc->pause_writer, false);
		}
	}
	/* The punch unmapped it: fault it in and mlock it again. */
	if (tc->mlocked && mlock(tc->map, tc->fsize))
		ksft_exit_fail_perror("mlock");
	now = folio_order_at0(tc);
	atomic_fetch_add(now == tc->order ? &tc->remakes : &tc->remade_smaller, 1);
}

static void report(struct test_case *tc, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&tc->reported, 1) >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/*
 * Check the bytes read from [@off, @off + @len): each is its byte of its
 * word, or 0 when @zero_ok. Return: the number of wrong words.
 */
static long check_words(struct test_case *tc, const unsigned char *buf,
			uint64_t off, size_t len, bool zero_ok)
{
	long wrong = 0;
	size_t i = 0;

	while (i < len) {
		uint64_t o = off + i;
		size_t end = i + 8 - (o & 7);
		bool bad = false;
		uint64_t w;

		if (end > len)
			end = len;
		if (end - i == 8) {
			memcpy(&w, buf + i, 8);
			if (w == htole64(ident(tc->id, o)) || (zero_ok && !w)) {
				i = end;
				continue;
			}
		}
		for (size_t j = i; j < end; j++) {
			uint8_t got = buf[j];

			if (got != ident_byte(tc->id, off + j) && (got || !zero_ok))
				bad = true;
		}
		if (bad) {
			char hex[17] = "";

			for (size_t j = i; j < end; j++)
				sprintf(hex + 2 * (j - i), "%02x", buf[j]);
			wrong++;
			report(tc, "# %s: offset %#llx: bytes %s, want those of %#llx%s\n",
			       tc->path, (unsigned long long)o, hex,
			       (unsigned long long)ident(tc->id, o & ~7ULL),
			       zero_ok ? " or 0" : "");
		}
		i = end;
	}
	return wrong;
}

/* Split mode: reads over, within and across the end of the folio. */
static void *split_reader(void *p)
{
	struct reader_arg *arg = p;
	struct test_case *tc = arg->tc;
	size_t fsize = tc->fsize, maxin = fsize < MAX_NOLOCK ? fsize : MAX_NOLOCK;
	unsigned char *buf = malloc(fsize + 2 * page_size);
	int fd = open_file(tc->path, O_RDONLY);

	if (!buf)
		ksft_exit_fail_perror("malloc");
	while (!atomic_load(&tc->stop)) {
		uint64_t r = rnd(&arg->rng), off;
		unsigned int g1, g2;
		size_t len;
		ssize_t n;

		switch (r % 8) {
		case 0:
		case 1:		/* longer than the folio: the normal path */
			off = 0;
			len = fsize + page_size;
			break;
		case 2:
			len = 16;
			off = (r >> 8) % (fsize - len + 1);
			break;
		case 3:
			len = page_size;
			off = (r >> 8) % (fsize - len + 1);
			break;
		case 4:
			len = maxin;
			off = (r >> 8) % (fsize - len + 1);
			break;
		case 5:
			len = 1 + (r >> 8) % maxin;
			off = (r >> 32) % (fsize - len + 1);
			break;
		case 6:		/* to the end of the folio */
			len = 1 + (r >> 8) % maxin;
			off = fsize - len;
			break;
		default:	/* across the end of the folio */
			off = fsize - 1 - (r >> 8) % page_size;
			len = fsize - off + 1 + (r >> 32) % page_size;
			break;
		}
		/* Half of the reads start at a word. */
		if ((r >> 60) & 1)
			off &= ~7ULL;

		g1 = atomic_load(&tc->gen);
		n = pread(fd, buf, len, off);
		g2 = atomic_load(&tc->gen);
		if (n < 0)
			ksft_exit_fail_perror("pread");
		atomic_fetch_add(&tc->reads, 1);
		if ((size_t)n != len) {
			atomic_fetch_add(&tc->short_reads, 1);
			report(tc, "# %s: read of %zu at %#llx returned %zd\n",
			       tc->path, len, (unsigned long long)off, n);
		}
		/* A hole only while the splitter punched and wrote back. */
		atomic_fetch_add(&tc->wrong_words,
				 check_words(tc, buf, off, n, (g1 & 1) || g1 != g2));
	}
	close(fd);
	free(buf);
	return NULL;
}

/* Split mode: split the folio, make it again, read it hot again. */
static void *splitter(void *p)
{
	struct test_case *tc = p;
	int sfd = open_file(SPLIT_PATH, O_WRONLY);
	int fd = open_file(tc->path, O_RDONLY);
	uint64_t rng = 0x73706c6974ULL + tc->order;
	unsigned long remade = 0;

	for (unsigned long it = 0; !atomic_load(&tc->stop); it++) {
		uint64_t r = rnd(&rng);
		long before = atomic_load(&tc->splits);

		split_once(tc, sfd, r, it);
		if (atomic_load(&tc->splits) == before) {
			/* Still large, or an error: try again later. */
			usleep(200);
			continue;
		}
		remake(tc, remade++);
		heat(tc, fd, 32);
	}
	close(fd);
	close(sfd);
	return NULL;
}

/* Consistency mode: bump the stamps, page 0 last; under tc->lock. */
static void stamp_one(struct test_case *tc)
{
	uint64_t k = tc->seq;
	unsigned char val = k % 255 + 1;

	for (int i = NR_STAMPS - 1; i >= 0; i--)
		write_range(tc->fd, (char *)&val, 1, stamp_pages[i] * page_size + k / 255);
	tc->seq = k + 1;
}

/* The stamps are full: clear them, inside a generation change. */
static void reset_stamps(struct test_case *tc)
{
	static char zero[STAMP_BYTES];

	atomic_fetch_add(&tc->gen, 1);
	for (int i = NR_STAMPS - 1; i >= 0; i--)
		write_range(tc->fd, zero, sizeof(zero), stamp_pages[i] * page_size);
	tc->seq = 0;
	stamp_one(tc);
	atomic_fetch_add(&tc->gen, 1);
	atomic_fetch_add(&tc->resets, 1);
}

static void *stamper(void *p)
{
	struct test_case *tc = p;

	while (!atomic_load(&tc->stop)) {
		if (atomic_load(&tc->pause_writer)) {
			usleep(50);
			continue;
		}
		pthread_mutex_lock(&tc->lock);
		if (tc->seq >= STAMP_MAX)
			reset_stamps(tc);
		stamp_one(tc);
		pthread_mutex_unlock(&tc->lock);
		atomic_fetch_add(&tc->stamps, 1);
	}
	return NULL;
}

/* Consistency mode: splits, punches of pages without stamps, remakes. */
/*
 * Moves the stamped pages but page 0 to the other NUMA node (after a split
 * they are folios of their own): the writer then stamps new pages while
 * page 0 stays where it was. A reader that copied page 0 from the page
 * cache as it is now and a page N from the old, replaced page would return
 * page 0 newer than page N. Nothing without a second node.
 */
static void migrate_stamped(struct test_case *tc, int fd, unsigned long it)
{
	void *addr[ARRAY_SIZE(stamp_pages)];
	int node[ARRAY_SIZE(stamp_pages)], status[ARRAY_SIZE(stamp_pages)];
	unsigned long n = 0, i;
	char *map;

	if (access("/sys/devices/system/node/node1", F_OK))
		return;
	map = mmap(NULL, tc->fsize, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return;
	for (i = 0; i < ARRAY_SIZE(stamp_pages); i++) {
		if (!stamp_pages[i] || stamp_pages[i] >= tc->nr)
			continue;
		addr[n] = map + stamp_pages[i] * page_size;
		FORCE_READ(*(char *)addr[n]);
		node[n] = it & 1;
		n++;
	}
	if (!syscall(SYS_move_pages, 0, n, addr, node, status, MPOL_MF_MOVE))
		for (i = 0; i < n; i++)
			if (status[i] == node[i])
				atomic_fetch_add(&tc->migrations, 1);
	munmap(map, tc->fsize);
}

static void *disturber(void *p)
{
	struct test_case *tc = p;
	int sfd = can_split ? open_file(SPLIT_PATH, O_WRONLY) : -1;
	int fd = open_file(tc->path, O_RDONLY);
	uint64_t rng = 0x6469737475ULL + tc->order;

	for (unsigned long it = 0; !atomic_load(&tc->stop); it++) {
		uint64_t r = rnd(&rng);

		if (sfd >= 0)
			split_once(tc, sfd, r, it);
		migrate_stamped(tc, fd, it);
		/* Two pages of the folio without a stamp: punch, write back. */
		for (int i = 0; i < 2; i++) {
			unsigned long pg;

			do
				pg = 2 + rnd(&rng) % (tc->nr - 2);
			while (is_stamp_page(pg));
			punch(tc->fd, pg * page_size, page_size);
			write_range(tc->fd, tc->content + pg * page_size, page_size,
				    pg * page_size);
			atomic_fetch_add(&tc->punches, 1);
		}
		if (it % 4 == 3) {
			remake(tc, it / 4);
			heat(tc, fd, 32);
		}
		usleep(200);
	}
	close(fd);
	if (sfd >= 0)
		close(sfd);
	return NULL;
}

/* Consistency mode: pages 0 to N in one read; stamps never decrease. */
static void *stamp_reader(void *p)
{
	static const unsigned long ends[] = { 1, 7, 15 };
	struct reader_arg *arg = p;
	struct test_case *tc = arg->tc;
	unsigned char *buf = malloc(16 * page_size);
	int fd = open_file(tc->path, O_RDONLY);

	if (!buf)
		ksft_exit_fail_perror("malloc");
	while (!atomic_load(&tc->stop)) {
		uint64_t r = rnd(&arg->rng), prev = 0;
		unsigned long last = ends[(r >> 8) % 3];
		/* To the end of page N, or to the end of its stamp. */
		size_t len = last * page_size + ((r >> 16) & 1 ? page_size : STAMP_BYTES);
		unsigned int g1, g2;
		bool stable;
		ssize_t n;
		long wrong = 0;

		if (r % 8 == 0) {
			/* From another folio: the next read marks it accessed. */
			if (pread(fd, buf, 16, tc->fsize) < 0)
				ksft_exit_fail_perror("pread");
			continue;
		}
		g1 = atomic_load(&tc->gen);
		n = pread(fd, buf, len, 0);
		g2 = atomic_load(&tc->gen);
		if (n < 0)
			ksft_exit_fail_perror("pread");
		atomic_fetch_add(&tc->reads, 1);
		if ((size_t)n != len) {
			atomic_fetch_add(&tc->short_reads, 1);
			report(tc, "# %s: read of %zu returned %zd\n", tc->path, len, n);
			continue;
		}
		stable = !(g1 & 1) && g1 == g2;
		if (!stable)
			atomic_fetch_add(&tc->raced, 1);
		for (size_t i = 0; i < NR_STAMPS && stamp_pages[i] <= last; i++) {
			uint64_t s = stamp_value(buf + stamp_pages[i] * page_size);

			if (stable && (s < prev || !s)) {
				atomic_fetch_add(&tc->violations, 1);
				report(tc, "# %s: pages 0-%lu: page %lu: stamp %llu after %llu\n",
				       tc->path, last, stamp_pages[i],
				       (unsigned long long)s, (unsigned long long)prev);
			}
			prev = s;
		}
		for (unsigned long pg = 0; pg <= last; pg++) {
			size_t start = pg * page_size, end = start + page_size;
			bool stamp = is_stamp_page(pg);

			if (end > len)
				end = len;
			if (stamp)
				start += STAMP_BYTES;
			/* Pages without a stamp get punched. */
			if (start < end)
				wrong += check_words(tc, buf + start, start, end - start,
						     !stable || !stamp);
		}
		atomic_fetch_add(&tc->wrong_words, wrong);
	}
	close(fd);
	free(buf);
	return NULL;
}

/*
 * Create the file of a case and its large folio at 0: a write allocates a
 * PMD-sized folio on a huge=always tmpfs, split_huge_pages splits it to
 * the order (which leaves folios of the order after it: a folio made at 0
 * again gets no larger). Return: the order of the folio at 0, or -1.
 */
static int setup(struct test_case *tc, int order, bool mlocked, bool stamped, int nr)
{
	memset(tc, 0, sizeof(*tc));
	pthread_mutex_init(&tc->lock, NULL);
	tc->order = order;
	tc->nr = 1UL << order;
	tc->fsize = tc->nr * page_size;
	/* A few pages more: a read may end past the folio, within i_size. */
	tc->file_size = tc->fsize + 4 * page_size;
	tc->id = 0x5a00 | (nr + 1);
	tc->mlocked = mlocked;
	tc->stamped = stamped;
	snprintf(tc->path, sizeof(tc->path), "%.200s/pagecache_split_read.%d", dir, nr);

	tc->content = malloc(tc->file_size);
	if (!tc->content)
		ksft_exit_fail_perror("malloc");
	fill(tc->content, 0, tc->file_size, tc->id);
	if (stamped) {
		tc->seq = 1;	/* stamped before the first read */
		copy_stamps(tc);
	}
	tc->fd = open(tc->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (tc->fd < 0)
		ksft_exit_fail_perror(tc->path);
	write_range(tc->fd, tc->content, tc->file_size, 0);
	if (can_split && order < pmd_order) {
		int sfd = open_file(SPLIT_PATH, O_WRONLY);

		split_file(sfd, tc->path, 1UL << pmd_order, order, -1);
		close(sfd);
	}
	return folio_order_at0(tc);
}

static void teardown(struct test_case *tc)
{
	if (tc->map) {
		munlock(tc->map, tc->fsize);
		munmap(tc->map, tc->fsize);
	}
	close(tc->fd);
	unlink(tc->path);
	free(tc->content);
	pthread_mutex_destroy(&tc->lock);
}

static void run(struct test_case *tc, bool split_mode)
{
	pthread_t *threads = calloc(nr_readers + 2, sizeof(*threads));
	struct reader_arg *args = calloc(nr_readers, sizeof(*args));
	int nr = 0;

	if (!threads || !args)
		ksft_exit_fail_perror("calloc");
	for (int i = 0; i < nr_readers; i++) {
		args[i] = (struct reader_arg){ tc, 0x9e3779b97f4a7c15ULL * (i + 1) };
		pthread_create(&threads[nr++], NULL,
			       split_mode ? split_reader : stamp_reader, &args[i]);
	}
	if (split_mode) {
		pthread_create(&threads[nr++], NULL, splitter, tc);
	} else {
		pthread_create(&threads[nr++], NULL, stamper, tc);
		pthread_create(&threads[nr++], NULL, disturber, tc);
	}
	sleep(duration);
	atomic_store(&tc->stop, true);
	for (int i = 0; i < nr; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	free(args);
}

static void print_remakes(struct test_case *tc, const char *ml)
{
	ksft_print_msg("order %d%s: %ld remade (%ld smaller, %ld collapsed)\n",
		       tc->order, ml,
		       atomic_load(&tc->remakes) + atomic_load(&tc->remade_smaller),
		       atomic_load(&tc->remade_smaller), atomic_load(&tc->collapses));
}

static long total_splits;

static void split_case(int order, bool is_pmd, bool mlocked, int nr)
{
	const char *ml = mlocked ? ", mlocked" : "";
	struct test_case tc;
	int got;

	if (order < 0) {
		ksft_test_result_skip("split: PMD order%s: no THP (%s)\n", ml, PMD_SIZE_PATH);
		return;
	}
	if (!can_split) {
		ksft_test_result_skip("split: order %d%s: %s not writable\n",
				      order, ml, SPLIT_PATH);
		return;
	}
	if (!is_pmd && order >= pmd_order) {
		ksft_test_result_skip("split: order %d%s: not below the PMD order %d\n",
				      order, ml, pmd_order);
		return;
	}
	got = setup(&tc, order, mlocked, false, nr);
	if (got != order) {
		ksft_test_result_skip("split: order %d%s: no folio of order %d at 0 (%s %d)\n",
				      order, ml, order,
				      got < 0 ? "cannot tell the order: no /proc/kpageflags?" :
				      "order", got);
		teardown(&tc);
		return;
	}
	if (mlocked) {
		tc.map = mmap(NULL, tc.fsize, PROT_READ, MAP_SHARED, tc.fd, 0);
		if (tc.map == MAP_FAILED || mlock(tc.map, tc.fsize)) {
			ksft_test_result_skip("split: order %d%s: mlock: %s\n", order, ml,
					      strerror(errno));
			if (tc.map == MAP_FAILED)
				tc.map = NULL;
			teardown(&tc);
			return;
		}
	}
	heat(&tc, tc.fd, 256);

	run(&tc, true);
	ksft_print_msg("order %d%s: %ld reads, %ld short, %ld wrong words\n", order, ml,
		       atomic_load(&tc.reads), atomic_load(&tc.short_reads),
		       atomic_load(&tc.wrong_words));
	ksft_print_msg("order %d%s: %ld splits (%ld not split, %ld write errors)\n",
		       order, ml, atomic_load(&tc.splits), atomic_load(&tc.split_misses),
		       atomic_load(&tc.split_errors));
	print_remakes(&tc, ml);
	/*
	 * A wrong word fails the case whatever else happened. A mapped,
	 * mlocked PMD-sized folio is seldom split (the unmap of the split
	 * mostly loses to the readers' faults): a case in which no split
	 * took tested nothing, and says so as a skip.
	 */
	total_splits += atomic_load(&tc.splits);
	if (atomic_load(&tc.wrong_words) || atomic_load(&tc.short_reads) ||
	    !atomic_load(&tc.reads))
		ksft_test_result_fail("split: order %d%s\n", order, ml);
	else if (!atomic_load(&tc.splits))
		ksft_test_result_skip("split: order %d%s: no split took in %ld attempts\n",
				      order, ml, atomic_load(&tc.split_misses));
	else
		ksft_test_result_pass("split: order %d%s\n", order, ml);
	teardown(&tc);
}

static void consistency_case(int order, int nr)
{
	struct test_case tc;
	int got;

	if (order < 0) {
		ksft_test_result_skip("consistency: PMD order: no THP (%s)\n", PMD_SIZE_PATH);
		return;
	}
	got = setup(&tc, order, false, true, nr);
	if (can_split && got != order) {
		ksft_test_result_skip("consistency: order %d: no folio of order %d at 0 (%s %d)\n",
				      order, order,
				      got < 0 ? "cannot tell the order: no /proc/kpageflags?" :
				      "order", got);
		teardown(&tc);
		return;
	}
	if (!can_split)
		ksft_print_msg("order %d: %s not writable: no splits; folio order at 0: %d\n",
			       order, SPLIT_PATH, got);
	heat(&tc, tc.fd, 256);

	run(&tc, false);
	ksft_print_msg("order %d: %ld reads (%ld next to a write back), %ld short\n",
		       order, atomic_load(&tc.reads), atomic_load(&tc.raced),
		       atomic_load(&tc.short_reads));
	ksft_print_msg("order %d: %ld stamps out of order, %ld wrong words\n",
		       order, atomic_load(&tc.violations), atomic_load(&tc.wrong_words));
	ksft_print_msg("order %d: %ld stamps (%ld resets), %ld pages punched\n",
		       order, atomic_load(&tc.stamps), atomic_load(&tc.resets),
		       atomic_load(&tc.punches));
	ksft_print_msg("order %d: %ld splits (%ld not split, %ld write errors), %ld migrated\n",
		       order, atomic_load(&tc.splits), atomic_load(&tc.split_misses),
		       atomic_load(&tc.split_errors), atomic_load(&tc.migrations));
	print_remakes(&tc, "");
	ksft_test_result(!atomic_load(&tc.violations) && !atomic_load(&tc.wrong_words) &&
			 !atomic_load(&tc.short_reads) && atomic_load(&tc.reads) > 0,
			 "consistency: order %d%s\n", order, can_split ? "" : " (no splits)");
	teardown(&tc);
}

static int read_pmd_order(void)
{
	unsigned long size;
	FILE *f = fopen(PMD_SIZE_PATH, "r");
	int ret;

	if (!f)
		return -1;
	ret = fscanf(f, "%lu", &size);
	fclose(f);
	if (ret != 1 || size < page_size || size & (size - 1))
		return -1;
	return __builtin_ctzl(size / page_size);
}

int main(int argc, char **argv)
{
	bool split_mode = true, consistency_mode = true;
	int opt, sfd, nr = 0;

	while ((opt = getopt(argc, argv, "m:t:d:")) != -1) {
		switch (opt) {
		case 'm':
			split_mode = !strcmp(optarg, "split");
			consistency_mode = !strcmp(optarg, "consistency");
			if (!split_mode && !consistency_mode)
				goto usage;
			break;
		case 't':
			nr_readers = atoi(optarg);
			break;
		case 'd':
			duration = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || nr_readers < 1 || duration < 1)
		goto usage;
	/* split_huge_pages wants an absolute path, of up to 254 bytes with the rest. */
	if (!realpath(argv[optind], dir) || strlen(dir) > 160) {
		fprintf(stderr, "%s: not a directory, or too long a path\n", argv[optind]);
		goto usage;
	}
	page_size = sysconf(_SC_PAGESIZE);
	pmd_order = read_pmd_order();
	sfd = open(SPLIT_PATH, O_WRONLY);
	can_split = sfd >= 0 && pmd_order > 0;
	if (sfd >= 0)
		close(sfd);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	kpageflags_fd = open("/proc/kpageflags", O_RDONLY);

	ksft_print_header();
	ksft_set_plan((split_mode ? 2 * NR_SPLIT_ORDERS + (can_split ? 1 : 0) : 0) +
		      (consistency_mode ? NR_CONSISTENCY_ORDERS : 0));
	ksft_print_msg("%d readers, %d seconds a case, PMD order %d, %s\n", nr_readers,
		       duration, pmd_order, can_split ? "with splits" : "no split_huge_pages");

	if (split_mode) {
		for (size_t i = 0; i < NR_SPLIT_ORDERS; i++) {
			bool is_pmd = split_orders[i] < 0;
			int order = is_pmd ? pmd_order : split_orders[i];

			for (int mlocked = 0; mlocked < 2; mlocked++, nr++)
				split_case(order, is_pmd, mlocked, nr);
		}
		if (can_split)
			ksft_test_result(total_splits > 0, "split: %ld splits in all cases\n",
					 total_splits);
	}
	if (consistency_mode) {
		for (size_t i = 0; i < NR_CONSISTENCY_ORDERS; i++, nr++)
			consistency_case(consistency_orders[i] < 0 ? pmd_order :
					 consistency_orders[i], nr);
	}
	ksft_finished();

usage:
	fprintf(stderr, "usage: %s [-m split|consistency] [-t readers] [-d seconds] <directory>\n",
		argv[0]);
	return KSFT_FAIL;
}
