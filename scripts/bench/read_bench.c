// SPDX-License-Identifier: GPL-2.0
/*
 * The page cache read workloads of `make bench` (seed 002), run in the guest.
 *
 *   small FILE THREADS SECONDS   16-byte pread() at offset 0, each thread
 *                                with its own fd: reads/s.
 *   large FILE THREADS SECONDS   64 KiB pread() at offset 0 (one large folio
 *                                on huge tmpfs or ext4 with large folios):
 *                                MiB/s.
 *   seq FILE THREADS ROUNDS      every thread reads the whole file in 1 MiB
 *                                preads, ROUNDS times: MiB/s.
 *   dontneed FILE THREADS SECONDS  16-byte reads of every page of the file
 *                                by all threads; thread 0 drops the file's
 *                                cache (POSIX_FADV_DONTNEED) after each of
 *                                its passes: MiB/s read.
 *   refault FILE THREADS SECONDS each thread reads its own 4 KiB pages of
 *                                the file and drops each after reading it,
 *                                so that every read faults it in again:
 *                                reads/s.
 *   lockstep FILE THREADS SECONDS  16-byte pread() at offset 0 as small,
 *                                but the threads take turns, one read each
 *                                in order: every read follows one by
 *                                another thread (on another CPU: the
 *                                threads are pinned), the case of the most
 *                                cache-line transfers per read with the
 *                                fewest in flight.
 *   heat FILE [PAGES]            makes the first PAGES (64) pages hot
 *                                (PG_rcu_free where the series is in): 8
 *                                passes over them, each read from a fresh
 *                                open file; with the series' counter and
 *                                switch on, more passes until one is
 *                                copied without a folio reference entire
 *                                (see heat()).
 *   pfn FILE                     prints the PFN of the file's page 0.
 *   folio FILE                   makes the file's first 2 MiB one large
 *                                folio where the file system allows it: drops
 *                                them (POSIX_FADV_DONTNEED) and faults them
 *                                back through a MADV_HUGEPAGE mapping, whose
 *                                readahead allocates PMD-sized folios; then
 *                                prints the order of the folio at page 0
 *                                (/proc/kpageflags). A read brings page 0 in
 *                                as order 0, and readahead only grows the
 *                                folios after it.
 *
 * Prints one JSON object.
 *
 * RB_OPS=N in the environment (`make bench COUNT=...`): the same work in a
 * fixed amount, not for SECONDS: small, large, lockstep and refault stop
 * after N reads per thread, dontneed after the pass in which N is reached;
 * and thread i runs on CPU i (modulo the CPUs), so that the threads of a
 * cache-line count are on distinct vCPUs. RB_SETTLE_MS=N: dontneed's
 * thread 0 sleeps N ms after its last drop, inside the region, so that
 * frees deferred to an RCU grace period are counted with the drop that
 * caused them, not in the next region.
 *
 * Markers for the tcg-bench QEMU plugin (`make bench COUNT=insn|c2c`,
 * tcg_marker.h): a region from the release of the threads until all have
 * done their work (their exits are outside), one op marker per operation counted in "ops" (a read; for seq a
 * 1 MiB read), and a reset marker before the start (a run that died inside
 * its region leaves it open). Each is an 8-byte NOP: without the plugin it
 * costs nothing measurable beside a system call.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tcg_marker.h"

#define PAGE		4096L

static const char *path;
static int nr_threads;
static double seconds;
static long rounds;
static off_t file_size;
static long max_ops;
static atomic_bool stop;
static atomic_long turn;
/* ready: the threads are set up (outside the region); start: go. */
static pthread_barrier_t ready, start, passed, done, stopped;
static long settle_ms;
static void *(*work)(void *);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int open_file(void)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		die(path);
	return fd;
}

/*
 * A line of its own: each thread counts its reads in it, and two workers in
 * one line would move it between the CPUs at every read (false sharing,
 * found by make bench COUNT=c2c).
 */
struct worker {
	pthread_t thread;
	long id;
	long ops;
	long bytes;
} __attribute__((aligned(64)));

/* A thread set up (pinned, its file open) waits for the region to open. */
static void go(void)
{
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&start);
}

/* Go on: not stopped, and (RB_OPS) fewer than max_ops done. */
static bool more(const struct worker *w)
{
	return !atomic_load_explicit(&stop, memory_order_relaxed) &&
	       (!max_ops || w->ops < max_ops);
}

/* One pread() of @len at @off, from its own fd, until stopped. */
static void fixed_reads(struct worker *w, size_t len, off_t off)
{
	char *buf = malloc(len);
	int fd = open_file();

	go();
	while (more(w)) {
		if (pread(fd, buf, len, off) != (ssize_t)len)
			die("pread");
		TCG_BENCH_OP();
		w->ops++;
		w->bytes += len;
	}
	close(fd);
	free(buf);
}

static void *small(void *arg)
{
	fixed_reads(arg, 16, 0);
	return NULL;
}

static void *large(void *arg)
{
	fixed_reads(arg, 64 << 10, 0);
	return NULL;
}

static void *seq(void *arg)
{
	struct worker *w = arg;
	size_t len = 1 << 20;
	char *buf = malloc(len);
	int fd = open_file();
	off_t off;
	ssize_t n;
	long r;

	go();
	for (r = 0; r < rounds; r++) {
		for (off = 0; off < file_size; off += n) {
			n = pread(fd, buf, len, off);
			if (n <= 0)
				die("pread");
			TCG_BENCH_OP();
			w->ops++;
			w->bytes += n;
		}
	}
	close(fd);
	free(buf);
	return NULL;
}

/* 16-byte reads at offset 0, the threads in turn (turn % nr_threads). */
static void *lockstep(void *arg)
{
	struct worker *w = arg;
	int fd = open_file();
	char buf[16];
	long t;

	go();
	while (more(w)) {
		while ((t = atomic_load_explicit(&turn, memory_order_acquire)) % nr_threads != w->id)
			if (atomic_load_explicit(&stop, memory_order_relaxed))
				goto out;
		if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
			die("pread");
		TCG_BENCH_OP();
		w->ops++;
		w->bytes += sizeof(buf);
		atomic_store_explicit(&turn, t + 1, memory_order_release);
	}
out:
	close(fd);
	return NULL;
}

static void *dontneed(void *arg)
{
	struct worker *w = arg;
	int fd = open_file();
	char buf[16];
	off_t off;

	go();
	while (more(w)) {
		for (off = 0; off < file_size; off += PAGE) {
			if (pread(fd, buf, sizeof(buf), off) != sizeof(buf))
				die("pread");
			TCG_BENCH_OP();
			w->ops++;
			w->bytes += PAGE;
		}
		/*
		 * RB_OPS: every thread makes the same passes; thread 0 drops
		 * the file once all have read it (a reader still in its pass
		 * would read pages back in).
		 */
		if (max_ops)
			pthread_barrier_wait(&passed);
		if (w->id == 0)
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	if (w->id == 0 && settle_ms)
		usleep(settle_ms * 1000);
	close(fd);
	return NULL;
}

static void *refault(void *arg)
{
	struct worker *w = arg;
	off_t span = file_size / nr_threads / PAGE * PAGE, base = w->id * span, off = 0;
	int fd = open_file();
	char buf[PAGE];

	if (span < PAGE)
		die("refault: file too small for the threads");
	go();
	while (more(w)) {
		if (pread(fd, buf, PAGE, base + off) != PAGE)
			die("pread");
		posix_fadvise(fd, base + off, PAGE, POSIX_FADV_DONTNEED);
		TCG_BENCH_OP();
		w->ops++;
		w->bytes += PAGE;
		off = (off + PAGE) % span;
	}
	close(fd);
	return NULL;
}

/* Reads copied without a folio reference, or -1 without the counter. */
#define COPIED "/sys/kernel/debug/filemap/lockless_reads_copied"

static long lockless_copied(void)
{
	FILE *f = fopen(COPIED, "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* One 16-byte read of each of the first @pages pages, a fresh open each. */
static void heat_pass(long pages)
{
	char buf[16];
	long k;
	int fd;

	for (k = 0; k < pages; k++) {
		fd = open_file();
		if (pread(fd, buf, sizeof(buf), k * PAGE) < 0)
			die("pread");
		close(fd);
	}
}

/*
 * A read counts as an access of its folio unless it starts in the folio
 * where the last read of the same open file ended: a fresh open file for
 * every read makes each one count, whatever the folio size.
 *
 * How many accesses make a folio hot is not fixed: an access that finds the
 * folio still in another CPU's LRU batch, not yet on the LRU, activates
 * nothing and only clears PG_referenced. Where the series' counter is (the
 * switch on), the passes after the eighth are also the test: the pages are
 * hot when a pass over them is copied without a reference, every read of
 * it. Up to 64 passes; prints how many it took and whether they got hot
 * (null: no counter to tell, 8 passes).
 */
static void heat(long pages)
{
	long before = -1, after = -1;
	int pass;

	for (pass = 1; pass <= 64; pass++) {
		before = pass > 8 ? lockless_copied() : -1;
		heat_pass(pages);
		if (pass < 8)
			continue;
		if (pass == 8 && lockless_copied() < 0)
			break;
		after = lockless_copied();
		if (before >= 0 && after - before >= pages)
			break;
	}
	printf("{\"heat\": \"%s\", \"passes\": %d, \"hot\": %s}\n", path,
	       pass > 64 ? 64 : pass,
	       before < 0 ? "null" : after - before >= pages ? "true" : "false");
}

#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16

static uint64_t kpageflags(int fd, uint64_t pfn)
{
	uint64_t flags;

	if (pread(fd, &flags, 8, pfn * 8) != 8)
		die("kpageflags");
	return flags;
}

static uint64_t page0_pfn(void)
{
	int fd = open_file(), pagemap = open("/proc/self/pagemap", O_RDONLY);
	char *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	uint64_t entry;

	if (p == MAP_FAILED || pagemap < 0)
		die("pfn");
	*(volatile char *)p;
	if (pread(pagemap, &entry, 8, (uintptr_t)p / PAGE * 8) != 8)
		die("pagemap");
	munmap(p, PAGE);
	close(pagemap);
	close(fd);
	return entry & ((1ULL << 55) - 1);
}

static void pfn(void)
{
	printf("%llu\n", (unsigned long long)page0_pfn());
}

static void folio(void)
{
	const size_t len = 2L << 20;
	int fd = open_file(), kpf = open("/proc/kpageflags", O_RDONLY);
	uint64_t head;
	char *p;
	int nr;

	if (kpf < 0)
		die("/proc/kpageflags");
	if (posix_fadvise(fd, 0, len, POSIX_FADV_DONTNEED))
		die("fadvise");
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	if (madvise(p, len, MADV_HUGEPAGE))
		die("madvise");
	*(volatile char *)p;
	munmap(p, len);
	close(fd);
	head = page0_pfn();
	nr = 1;
	if (kpageflags(kpf, head) & (1ULL << KPF_COMPOUND_HEAD))
		while (nr < 512 && kpageflags(kpf, head + nr) & (1ULL << KPF_COMPOUND_TAIL))
			nr++;
	printf("{\"folio_order\": %d}\n", __builtin_ctz(nr));
}

/* The thread's start: on CPU id (modulo the CPUs) in count mode. */
static void *worker_start(void *arg)
{
	struct worker *w = arg;

	if (max_ops) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->id % (cpus > 0 ? cpus : 1), &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
			die("pthread_setaffinity_np");
	}
	work(arg);
	/*
	 * The region ends here, when every thread has done its work: their
	 * exits (glibc gives a thread's stack back with MADV_DONTNEED, a zap
	 * of varying size) are not the workload's.
	 */
	pthread_barrier_wait(&done);
	/* ... and on one vCPU they must not exit before the stop marker. */
	pthread_barrier_wait(&stopped);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn)(void *);
	struct worker *w;
	long ops = 0, bytes = 0;
	struct stat st;
	double t0, t;
	long copied0, copied1;
	int i, fd;

	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "heat")) {
		path = argv[2];
		heat(argc == 4 ? atol(argv[3]) : 64);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "pfn")) {
		path = argv[2];
		pfn();
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "folio")) {
		path = argv[2];
		folio();
		return 0;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: %s small|large|lockstep|seq|dontneed|refault FILE THREADS SECONDS|ROUNDS\n"
			"       %s heat FILE [PAGES]\n"
			"       %s pfn|folio FILE\n", argv[0], argv[0], argv[0]);
		return 2;
	}
	path = argv[2];
	nr_threads = atoi(argv[3]);
	if (!strcmp(argv[1], "small"))
		fn = small;
	else if (!strcmp(argv[1], "large"))
		fn = large;
	else if (!strcmp(argv[1], "lockstep"))
		fn = lockstep;
	else if (!strcmp(argv[1], "seq"))
		fn = seq;
	else if (!strcmp(argv[1], "dontneed"))
		fn = dontneed;
	else if (!strcmp(argv[1], "refault"))
		fn = refault;
	else
		return fprintf(stderr, "unknown workload %s\n", argv[1]), 2;
	if (fn == seq)
		rounds = atol(argv[4]);
	else
		seconds = atof(argv[4]);
	if (nr_threads < 1 || (fn == seq ? rounds < 1 : seconds <= 0))
		return fprintf(stderr, "bad THREADS or SECONDS/ROUNDS\n"), 2;
	if (getenv("RB_OPS"))
		max_ops = atol(getenv("RB_OPS"));
	if (getenv("RB_SETTLE_MS"))
		settle_ms = atol(getenv("RB_SETTLE_MS"));
	if (max_ops < 0 || settle_ms < 0)
		return fprintf(stderr, "bad RB_OPS or RB_SETTLE_MS\n"), 2;

	fd = open_file();
	if (fstat(fd, &st))
		die("fstat");
	file_size = S_ISBLK(st.st_mode) ? lseek(fd, 0, SEEK_END) : st.st_size;
	close(fd);
	if (file_size < PAGE)
		return fprintf(stderr, "%s: too small\n", path), 2;

	w = aligned_alloc(64, nr_threads * sizeof(*w));
	if (!w)
		die("aligned_alloc");
	memset(w, 0, nr_threads * sizeof(*w));
	pthread_barrier_init(&ready, NULL, nr_threads + 1);
	pthread_barrier_init(&start, NULL, nr_threads + 1);
	pthread_barrier_init(&passed, NULL, nr_threads);
	pthread_barrier_init(&done, NULL, nr_threads + 1);
	pthread_barrier_init(&stopped, NULL, nr_threads + 1);
	work = fn;
	for (i = 0; i < nr_threads; i++) {
		w[i].id = i;
		if (pthread_create(&w[i].thread, NULL, worker_start, &w[i]))
			die("pthread_create");
	}
	pthread_barrier_wait(&ready);
	/* Read here, outside the region: only the run's reads in between. */
	copied0 = lockless_copied();
	TCG_BENCH_RESET();
	TCG_BENCH_START();
	pthread_barrier_wait(&start);
	t0 = now();
	if (fn != seq && !max_ops) {
		usleep(seconds * 1e6);
		atomic_store(&stop, true);
	}
	pthread_barrier_wait(&done);
	TCG_BENCH_STOP();
	t = now() - t0;
	copied1 = lockless_copied();
	pthread_barrier_wait(&stopped);
	for (i = 0; i < nr_threads; i++) {
		pthread_join(w[i].thread, NULL);
		ops += w[i].ops;
		bytes += w[i].bytes;
	}
	printf("{\"threads\": %d, \"seconds\": %.3f, \"ops\": %ld, \"ops_per_s\": %.0f, \"mib_per_s\": %.1f",
	       nr_threads, t, ops, ops / t, bytes / t / (1 << 20));
	/*
	 * The run's reads copied without a folio reference (the series'
	 * counter, read before the start and after the stop, when no other
	 * thread of ours reads): null without the counter.
	 */
	if (copied0 >= 0 && copied1 >= 0)
		printf(", \"copied\": %ld}\n", copied1 - copied0);
	else
		printf(", \"copied\": null}\n");
	return 0;
}
