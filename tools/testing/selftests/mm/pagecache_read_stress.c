// SPDX-License-Identifier: GPL-2.0
/*
 * A correctness stress of page cache reads, for the lockless small reads of
 * filemap_read() (CONFIG_PAGE_RCU_FREE) and of whatever else reads the page
 * cache.
 *
 * Every 8-byte word of a file names the file and its own offset: the word
 * at offset o of the file with id i holds (i << 48) | o, stored little
 * endian, never 0. Reader threads pread() 16 bytes, 4 KiB and 64 KiB at
 * random offsets of a file (a quarter of them not aligned to a word), each
 * from its own fd and over and over, so the folios get hot (and
 * PG_rcu_free), and check every byte they get: it is the byte of that word
 * that belongs at that offset, or zero (a hole that a truncate or a hole
 * punch left and no writer has filled yet; a writer filling a hole may be
 * caught halfway through a word). A byte copied from another offset, from
 * another file or from memory that is no longer the file's is wrong. Next
 * to them, for the whole run:
 *
 *   - a writer rewrites the words over random ranges (a quarter of them
 *     starting and ending inside a word: it writes the bytes of the words
 *     that belong there);
 *   - a truncater shrinks the file and extends it again;
 *   - a puncher punches holes (FALLOC_FL_PUNCH_HOLE);
 *   - a dropper drops the file's cache (POSIX_FADV_DONTNEED) and all clean
 *     caches (vm.drop_caches);
 *   - a compactor writes vm.compact_memory;
 *   - a migrator maps the file and moves its pages between NUMA nodes
 *     (migrate_pages(2)), when there are two nodes;
 *   - a churner drops the hot first 64 KiB from the cache and at once fills
 *     fresh anonymous memory with 0xee, on the same CPU, which mostly gets
 *     the pages just freed: a reader that copies from a folio that is freed
 *     and reused under it sees 0xee where the words are not;
 *   - a second file, with another id in its words, is read and rewritten as
 *     well, so that a reader that copies from a folio reused for it sees
 *     wrong bytes.
 *
 * Any other byte is a wrong byte and fails the test. Seeds are fixed: the
 * order of events varies with the scheduler, the set of operations does not.
 *
 * With -b, the argument is a block device instead (its first -s MiB, whose
 * contents it overwrites), read and written through its page cache: the
 * reads of one hot folio take neither a folio reference nor i_rwsem. There
 * is no second file, truncater, puncher or migrator (see main()), and a
 * zero byte is wrong too (a device has no holes). A block sizer changes the block size (BLKBSZSET)
 * between the device's logical block size and a larger one, and with it the
 * order of the page cache's folios: each change writes back and drops the
 * whole page cache under the readers (set_blocksize()). The writer writes
 * the bytes that are there already, so a read that returns data older
 * than a write cannot show; what the words catch is a copy from the wrong
 * offset, or from memory reused for something else (the churner's 0xee).
 *
 * Then, on a file of its own, it checks that the reads the stress is for
 * happen: once a page is hot, small reads of it do not call
 * filemap_get_pages() (its tracepoint, mm_filemap_get_pages, counted in a
 * tracefs instance of the test's own), while the read of a page not in the
 * cache does. Skipped without tracefs or the event, with -b, and on tmpfs,
 * whose reads (shmem_file_read_iter()) never call it.
 *
 * Usage: pagecache_read_stress [-t readers] [-d seconds] [-s MiB] <directory>
 *        pagecache_read_stress [-t readers] [-d seconds] [-s MiB] -b <block device>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kselftest.h"
#include "vm_util.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE	0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE	0x02
#endif

#define MAX_READ	(64 << 10)

static char path_a[4096], path_b[4096];
static size_t file_size = 8 << 20;
static int nr_readers = 4, duration = 10;
static bool blockdev;
static atomic_bool stop;
static atomic_long reads, read_bytes, wrong_bytes, ops[8];
static const char * const op_names[8] = {
	"writes", "truncates", "hole punches", "cache drops", "compactions", "migrations",
	"reuses", "block size changes",
};

/* The ids of the two files: both bytes non-zero, neither 0xee. */
#define ID_A	0xa5a5
#define ID_B	0x3c3c

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

static void write_all(int fd, uint64_t off, size_t len, uint16_t id)
{
	static __thread char buf[MAX_READ];

	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);

		fill(buf, off, n, id);
		if (pwrite(fd, buf, n, off) != (ssize_t)n)
			ksft_exit_fail_perror("pwrite");
		off += n;
		len -= n;
	}
}

static int open_file(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		ksft_exit_fail_perror(path);
	return fd;
}

/* xorshift, one state per thread, fixed seeds. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct reader_arg {
	const char *path;
	uint16_t id;
	uint64_t rng;
};

static void *reader(void *p)
{
	struct reader_arg *arg = p;
	static const size_t sizes[] = { 16, 4096, MAX_READ };
	char *buf = malloc(MAX_READ);
	int fd = open_file(arg->path, O_RDONLY);
	long bad_reported = 0;

	while (!atomic_load(&stop)) {
		uint64_t r = rnd(&arg->rng);
		size_t len = sizes[r % 3];
		/* Mostly the first pages: those get hot. */
		uint64_t span = (r >> 8) % 4 ? 64 << 10 : file_size;
		uint64_t off = ((r >> 16) % span) & ~15ULL;
		ssize_t n;

		/* A quarter of the reads start (and end) inside a word. */
		if ((r >> 12) % 4 == 0)
			off += 1 + (r >> 56) % 7;
		/* A device is larger than the part written. */
		if (blockdev && off + len > file_size)
			len = file_size - off;
		n = pread(fd, buf, len, off);

		if (n < 0)
			ksft_exit_fail_perror("pread");
		atomic_fetch_add(&reads, 1);
		atomic_fetch_add(&read_bytes, n);
		for (ssize_t i = 0; i < n; i++) {
			uint8_t got = buf[i], want = ident_byte(arg->id, off + i);

			if (got == want || (got == 0 && !blockdev))
				continue;
			atomic_fetch_add(&wrong_bytes, 1);
			if (bad_reported++ < 5)
				ksft_print_msg("%s: offset %llu: byte %#x, want %#x%s\n",
					       arg->path, (unsigned long long)(off + i), got, want,
					       blockdev ? "" : " or 0");
		}
	}
	close(fd);
	free(buf);
	return NULL;
}

static void *writer(void *p)
{
	struct reader_arg *arg = p;
	int fd = open_file(arg->path, O_WRONLY);
	uint64_t rng = 0x77726974ULL + arg->id;

	while (!atomic_load(&stop)) {
		uint64_t r = rnd(&rng);
		uint64_t off = (r % file_size) & ~4095ULL;
		size_t len = 4096 << ((r >> 32) % 5);

		/* A quarter of the ranges start and end inside a word. */
		if ((r >> 40) % 4 == 0) {
			off += 1 + (r >> 44) % 4093;
			len -= 1 + (r >> 56) % 7;
		}
		if (off + len > file_size)
			len = file_size - off;
		write_all(fd, off, len, arg->id);
		atomic_fetch_add(&ops[0], 1);
		usleep(1000);
	}
	close(fd);
	return NULL;
}

static void *truncater(void *unused __always_unused)
{
	int fd = open_file(path_a, O_WRONLY);
	uint64_t rng = 0x7475726e;

	while (!atomic_load(&stop)) {
		uint64_t r = rnd(&rng);

		if (ftruncate(fd, file_size / 2 + r % (file_size / 2)) ||
		    ftruncate(fd, file_size))
			ksft_exit_fail_perror("ftruncate");
		atomic_fetch_add(&ops[1], 1);
		usleep(20000);
	}
	close(fd);
	return NULL;
}

static void *puncher(void *unused __always_unused)
{
	int fd = open_file(path_a, O_WRONLY);
	uint64_t rng = 0x70756e63;
	bool can = true;

	while (!atomic_load(&stop) && can) {
		uint64_t r = rnd(&rng);
		/* The hot first pages, most of the time. */
		uint64_t span = r % 2 ? 64 << 10 : file_size;
		uint64_t off = ((r >> 8) % span) & ~4095ULL;

		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, 16384)) {
			if (errno != EOPNOTSUPP)
				ksft_exit_fail_perror("fallocate");
			can = false;
		}
		atomic_fetch_add(&ops[2], 1);
		usleep(5000);
	}
	close(fd);
	return NULL;
}

static void write_proc(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, val, strlen(val)) < 0 && errno != EINVAL)
		ksft_print_msg("%s: %s\n", path, strerror(errno));
	close(fd);
}

static void *dropper(void *unused __always_unused)
{
	int fd = open_file(path_a, O_RDONLY);
	int round = 0;

	while (!atomic_load(&stop)) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (++round % 8 == 0)
			write_proc("/proc/sys/vm/drop_caches", "1");
		atomic_fetch_add(&ops[3], 1);
		usleep(25000);
	}
	close(fd);
	return NULL;
}

static void *compactor(void *unused __always_unused)
{
	while (!atomic_load(&stop)) {
		write_proc("/proc/sys/vm/compact_memory", "1");
		atomic_fetch_add(&ops[4], 1);
		usleep(100000);
	}
	return NULL;
}

/* Maps the file and moves the pages it maps between node 0 and node 1. */
static void *migrator(void *unused __always_unused)
{
	int fd = open_file(path_a, O_RDONLY);
	char *map = mmap(NULL, file_size, PROT_READ, MAP_SHARED, fd, 0);
	unsigned long n0 = 1, n1 = 2;
	int i = 0;

	if (map == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	/* Without a node 1 (or without NUMA) there is nowhere to migrate to. */
	while (!access("/sys/devices/system/node/node1", F_OK) && !atomic_load(&stop)) {
		/* Fault in what is there; a truncated tail would SIGBUS. */
		for (size_t off = 0; off < 64 << 10; off += 4096)
			FORCE_READ(map[off]);
		if (syscall(SYS_migrate_pages, 0, 8 * sizeof(long),
			    i % 2 ? &n1 : &n0, i % 2 ? &n0 : &n1) < 0) {
			if (errno == EINVAL)
				break;	/* one node */
			ksft_exit_fail_perror("migrate_pages");
		}
		i++;
		atomic_fetch_add(&ops[5], 1);
		usleep(50000);
	}
	munmap(map, file_size);
	close(fd);
	return NULL;
}

/* Frees the hot pages and reuses their memory at once for other data. */
static void *churner(void *unused __always_unused)
{
	int fd = open_file(path_a, O_RDONLY);
	size_t len = 64 << 10;
	char *anon = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (anon == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	while (!atomic_load(&stop)) {
		posix_fadvise(fd, 0, len, POSIX_FADV_DONTNEED);
		madvise(anon, len, MADV_DONTNEED);
		memset(anon, 0xee, len);
		atomic_fetch_add(&ops[6], 1);
		usleep(500);
	}
	munmap(anon, len);
	close(fd);
	return NULL;
}

/*
 * Changes the block size of the device between the two sizes of @arg in
 * turn, and back to the third, the size it had, at the end. EBUSY (someone
 * else claimed the device meanwhile) waits for the next turn.
 */
static void *blocksizer(void *arg)
{
	int *sizes = arg;
	int fd = open_file(path_a, O_RDONLY);
	int i = 0;

	while (!atomic_load(&stop)) {
		if (!ioctl(fd, BLKBSZSET, &sizes[++i % 2]))
			atomic_fetch_add(&ops[7], 1);
		else if (errno != EBUSY)
			ksft_exit_fail_perror("BLKBSZSET");
		usleep(20000);
	}
	if (ioctl(fd, BLKBSZSET, &sizes[2]))
		ksft_print_msg("%s: block size %d not restored: %s\n", path_a, sizes[2],
			       strerror(errno));
	close(fd);
	return NULL;
}

/*
 * The block sizes for blocksizer(): the logical block size, the largest of
 * 16K, 8K and 4K above it that the device takes (a block larger than a page
 * needs large folios in the page cache), and the size it has now. Skips the
 * test where the device cannot be claimed (mounted, or no CAP_SYS_ADMIN) or
 * takes no second size.
 */
static void block_sizes(int sizes[3])
{
	static const int larger[] = { 16384, 8192, 4096 };
	int fd = open_file(path_a, O_RDONLY);
	bool found = false;

	if (ioctl(fd, BLKSSZGET, &sizes[0]) || ioctl(fd, BLKBSZGET, &sizes[2]))
		ksft_exit_fail_perror("BLKSSZGET");
	for (size_t i = 0; i < ARRAY_SIZE(larger) && !found; i++) {
		if (larger[i] <= sizes[0])
			continue;
		sizes[1] = larger[i];
		found = !ioctl(fd, BLKBSZSET, &sizes[1]);
		if (!found && errno != EINVAL)
			ksft_exit_skip("%s: BLKBSZSET: %s\n", path_a, strerror(errno));
	}
	if (!found)
		ksft_exit_skip("%s: takes no block size but %d\n", path_a, sizes[0]);
	if (ioctl(fd, BLKBSZSET, &sizes[2]))
		ksft_exit_fail_perror("BLKBSZSET");
	close(fd);
}

static void create(const char *path, uint16_t id)
{
	int fd;

	if (blockdev) {
		uint64_t size;

		fd = open_file(path, O_RDWR);
		if (ioctl(fd, BLKGETSIZE64, &size))
			ksft_exit_fail_perror("BLKGETSIZE64");
		if (size < file_size)
			file_size = size & ~((1ULL << 20) - 1);
		if (file_size < (1 << 20))
			ksft_exit_skip("%s: smaller than 1 MiB\n", path);
		write_all(fd, 0, file_size, id);
		fsync(fd);
		close(fd);
		return;
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		ksft_exit_fail_perror(path);
	write_all(fd, 0, file_size, id);
	fsync(fd);
	close(fd);
}

#define TRACEFS		"/sys/kernel/tracing"
#define GET_PAGES	"/events/filemap/mm_filemap_get_pages"
#define HOT_PAGES	64
#define HOT_READS	1000
#define BIG_READ	(128 << 10)	/* above the lockless reads' 64K */
#define BIG_READS	100

/* The tracefs instance of this run and the file of hot_reads(), for cleanup(). */
static char trace_instance[64], hot_file[4096];

static int write_str(const char *dir, const char *name, const char *str)
{
	char file[256];
	int fd, ret = 0;

	snprintf(file, sizeof(file), "%s%s", dir, name);
	fd = open(file, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (write(fd, str, strlen(str)) != (ssize_t)strlen(str))
		ret = -errno;
	close(fd);
	return ret;
}

/* The mm_filemap_get_pages events in the instance's buffer, -1 if unreadable. */
static long get_pages_events(void)
{
	char file[128], line[512];
	long n = 0;
	FILE *f;

	snprintf(file, sizeof(file), "%s/trace", trace_instance);
	f = fopen(file, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += line[0] != '#' && !!strstr(line, "mm_filemap_get_pages:");
	fclose(f);
	return n;
}

/* Whatever way the test exits: the event off, the instance and the file gone. */
static void cleanup(void)
{
	if (trace_instance[0]) {
		write_str(trace_instance, GET_PAGES "/enable", "0");
		rmdir(trace_instance);
	}
	if (hot_file[0])
		unlink(hot_file);
}

static void pread_all(int fd, char *buf, size_t len, off_t off)
{
	if (pread(fd, buf, len, off) != (ssize_t)len)
		ksft_exit_fail_perror("pread");
}

/*
 * HOT_READS small reads of HOT_PAGES pages of a new file, made hot first
 * (eight rounds of reads of each: every read marks its page accessed, and
 * the reads of the others fill and drain this CPU's LRU batches, which is
 * why it stays on one CPU): most must not call filemap_get_pages(). Two
 * controls first: the read of a page just dropped from the cache must call
 * it (or the event is not seen: tmpfs, whose reads never call it, although
 * they too go without references), and so must every one of BIG_READS
 * reads too large to go without (or events were lost, and a low count
 * would mean nothing).
 */
static void hot_reads(const char *dir)
{
	const char *name = "hot small reads without filemap_get_pages()";
	const long page = sysconf(_SC_PAGESIZE);
	long cold, big, hot, after;
	static char buf[BIG_READ];
	char filter[64];
	cpu_set_t cpus;
	struct stat st;
	int fd, i;

	/* sys/mount.h clashes with vm_util.h's linux/fs.h. */
	if (access(TRACEFS "/instances", F_OK) &&
	    syscall(__NR_mount, "tracefs", TRACEFS, "tracefs", 0UL, NULL)) {
		ksft_test_result_skip("%s: no tracefs at %s\n", name, TRACEFS);
		return;
	}
	snprintf(trace_instance, sizeof(trace_instance),
		 TRACEFS "/instances/pagecache_read_stress.%d", getpid());
	if (mkdir(trace_instance, 0700)) {
		ksft_test_result_skip("%s: no tracefs instance: %s\n", name, strerror(errno));
		trace_instance[0] = 0;
		return;
	}
	atexit(cleanup);
	snprintf(hot_file, sizeof(hot_file), "%s/pagecache_read_stress.hot", dir);
	fd = open(hot_file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		ksft_exit_fail_perror(hot_file);
	write_all(fd, 0, (HOT_PAGES + 1) * page, ID_A);
	if (fsync(fd) || fstat(fd, &st))
		ksft_exit_fail_perror(hot_file);
	snprintf(filter, sizeof(filter), "i_ino == %llu", (unsigned long long)st.st_ino);
	if (write_str(trace_instance, GET_PAGES "/filter", filter)) {
		ksft_test_result_skip("%s: no mm_filemap_get_pages event to filter\n", name);
		goto out;
	}
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		ksft_exit_fail_perror("sched_setaffinity");
	for (i = 0; i < 8 * HOT_PAGES; i++)
		pread_all(fd, buf, 16, (i % HOT_PAGES) * page);
	if (posix_fadvise(fd, HOT_PAGES * page, page, POSIX_FADV_DONTNEED))
		ksft_exit_fail_msg("posix_fadvise\n");
	if (write_str(trace_instance, "/trace", "") ||
	    write_str(trace_instance, GET_PAGES "/enable", "1")) {
		ksft_test_result_skip("%s: cannot enable the event\n", name);
		goto out;
	}
	pread_all(fd, buf, 16, HOT_PAGES * page);
	cold = get_pages_events();
	for (i = 0; i < BIG_READS; i++)
		pread_all(fd, buf, BIG_READ, 0);
	big = get_pages_events();
	for (i = 0; i < HOT_READS; i++)
		pread_all(fd, buf, 16, (i % HOT_PAGES) * page);
	after = get_pages_events();
	write_str(trace_instance, GET_PAGES "/enable", "0");
	if (cold < 0 || big < 0 || after < 0) {
		ksft_test_result_fail("%s: cannot read the trace\n", name);
		goto out;
	}
	hot = after - big;
	big -= cold;
	ksft_print_msg("filemap_get_pages() calls: a cold read %ld, %d large reads %ld\n",
		       cold, BIG_READS, big);
	ksft_print_msg("filemap_get_pages() calls: %d hot small reads %ld\n", HOT_READS, hot);
	if (cold < 1)
		ksft_test_result_skip("%s: a read of a page not cached was not traced (tmpfs?)\n",
				      name);
	else if (big < BIG_READS)
		ksft_test_result_skip("%s: events were lost\n", name);
	else
		ksft_test_result(hot * 2 < HOT_READS, "%s\n", name);
out:
	close(fd);
}

int main(int argc, char **argv)
{
	struct reader_arg *args;
	pthread_t *threads;
	int opt, nr = 0, i, sizes[3];

	while ((opt = getopt(argc, argv, "t:d:s:b")) != -1) {
		switch (opt) {
		case 'b':
			blockdev = true;
			break;
		case 't':
			nr_readers = atoi(optarg);
			break;
		case 'd':
			duration = atoi(optarg);
			break;
		case 's':
			file_size = (size_t)atoi(optarg) << 20;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || nr_readers < 1 || duration < 1 || file_size < (1 << 20))
		goto usage;
	if (blockdev) {
		snprintf(path_a, sizeof(path_a), "%s", argv[optind]);
	} else {
		snprintf(path_a, sizeof(path_a), "%s/pagecache_read_stress.a", argv[optind]);
		snprintf(path_b, sizeof(path_b), "%s/pagecache_read_stress.b", argv[optind]);
	}

	ksft_print_header();
	if (blockdev)
		block_sizes(sizes);
	ksft_set_plan(blockdev ? 4 : 3);
	create(path_a, ID_A);
	if (!blockdev)
		create(path_b, ID_B);

	threads = calloc(nr_readers + 8, sizeof(*threads));
	args = calloc(nr_readers + 2, sizeof(*args));
	for (i = 0; i < nr_readers + (blockdev ? 0 : 2); i++) {
		/* The last two: a reader and a writer of the other file. */
		bool b = i >= nr_readers;

		args[i] = (struct reader_arg){ b ? path_b : path_a, b ? ID_B : ID_A,
					       0x9e3779b97f4a7c15ULL * (i + 1) };
		pthread_create(&threads[nr++], NULL, reader, &args[i]);
	}
	pthread_create(&threads[nr++], NULL, writer, &args[0]);
	if (blockdev) {
		pthread_create(&threads[nr++], NULL, blocksizer, sizes);
	} else {
		pthread_create(&threads[nr++], NULL, writer, &args[nr_readers]);
		pthread_create(&threads[nr++], NULL, truncater, NULL);
		pthread_create(&threads[nr++], NULL, puncher, NULL);
	}
	pthread_create(&threads[nr++], NULL, dropper, NULL);
	pthread_create(&threads[nr++], NULL, compactor, NULL);
	/*
	 * Not on a block device: a fault on its mapping reads the minimum
	 * folio order before page_cache_ra_order() takes invalidate_lock, so a
	 * BLKBSZSET in between makes it add a folio below the new order, and
	 * __filemap_add_folio() hits its VM_BUG_ON_FOLIO(). Nothing of the
	 * lockless reads is on that path: 7.3's own race, which this stress
	 * found with the migrator on.
	 */
	if (!blockdev)
		pthread_create(&threads[nr++], NULL, migrator, NULL);
	pthread_create(&threads[nr++], NULL, churner, NULL);

	sleep(duration);
	atomic_store(&stop, true);
	for (i = 0; i < nr; i++)
		pthread_join(threads[i], NULL);

	for (i = 0; i < 8; i++)
		ksft_print_msg("%s: %ld\n", op_names[i], atomic_load(&ops[i]));
	if (blockdev)
		ksft_test_result(atomic_load(&ops[7]) > 10, "block size %d <-> %d, %ld changes\n",
				 sizes[0], sizes[1], atomic_load(&ops[7]));
	ksft_test_result(atomic_load(&reads) > 1000, "%ld reads, %ld bytes checked\n",
			 atomic_load(&reads), atomic_load(&read_bytes));
	ksft_test_result(atomic_load(&wrong_bytes) == 0, "%ld wrong bytes\n",
			 atomic_load(&wrong_bytes));
	if (blockdev)
		ksft_test_result_skip("hot small reads: not on a block device\n");
	else
		hot_reads(argv[optind]);
	if (!blockdev) {
		unlink(path_a);
		unlink(path_b);
	}
	ksft_finished();

usage:
	fprintf(stderr, "usage: %s [-t readers] [-d seconds] [-s MiB] <directory>\n"
		"       %s [-t readers] [-d seconds] [-s MiB] -b <block device>\n",
		argv[0], argv[0]);
	return KSFT_FAIL;
}
