// SPDX-License-Identifier: GPL-2.0
/*
 * The deferred split workloads of `make bench`, run in the guest.
 *
 *   free:    every thread faults in SIZE MiB of anonymous memory as 16K mTHP,
 *            discards one page of each folio (so that each is partially
 *            mapped and queued for deferred split), then unmaps the rest:
 *            the freed folios are unqueued in the LRU batch free paths
 *            (seed 000's workload, with a partial unmap so that 7.3 queues
 *            the folios).
 *   partial: every thread faults in SIZE MiB as PMD THPs, then discards
 *            PIECES single pages of each THP with separate MADV_DONTNEED
 *            calls (seed 004's non-aligned MADV_DONTNEED): rmap queues
 *            the folio at the first; 7.3 makes no deferred_split_folio()
 *            call for the others, the folio being partially mapped.
 *
 * Usage: deferred_split_bench free|partial THREADS ROUNDS SIZE_MB [PIECES]
 * Prints one JSON object: elapsed wall and system seconds, and "ops", the
 * folios freed (THREADS * ROUNDS * SIZE / folio size).
 *
 * Markers for the tcg-bench QEMU plugin (`make bench COUNT=insn|c2c`,
 * tcg_marker.h): a region from the first thread's creation to the last
 * join, and op markers for the folios each munmap() freed. Each is an
 * 8-byte NOP: without the plugin it costs nothing measurable.
 *
 * DSB_PREFAULT=1 in the environment (`make bench COUNT=...`): every thread
 * first maps and faults in the memory of all its rounds, outside the
 * region; the region then holds only the discards and the unmaps (what
 * seeds 000 and 004 change), not the faults and the zeroing of the pages.
 * It needs THREADS * ROUNDS * SIZE_MB of memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tcg_marker.h"

#define PMD_SIZE	(2UL << 20)
#define MTHP_SIZE	(16UL << 10)

static int partial, rounds, pieces = 8, prefault;
static size_t size;
static long page_size;
/* DSB_PREFAULT: the threads and main meet after the faults, and again after
 * the start marker. */
static pthread_barrier_t faulted, started, done, stopped;

static void *map_aligned(size_t len)
{
	char *p = mmap(NULL, len + PMD_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *aligned;

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	aligned = (char *)(((unsigned long)p + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
	if (aligned > p)
		munmap(p, aligned - p);
	munmap(aligned + len, p + PMD_SIZE - aligned);
	if (madvise(aligned, len, MADV_HUGEPAGE)) {
		perror("madvise(MADV_HUGEPAGE)");
		exit(1);
	}
	return aligned;
}

/* Op markers for @n folios: batches of 1024, then one by one. */
static void ops_freed(size_t n)
{
	for (; n >= 1024; n -= 1024)
		TCG_BENCH_OPS(1024);
	for (; n; n--)
		TCG_BENCH_OP();
}

static char *map_faulted(void)
{
	char *p = map_aligned(size);
	size_t off;

	for (off = 0; off < size; off += page_size)
		p[off] = 1;
	return p;
}

static void *worker(void *arg)
{
	size_t folio = partial ? PMD_SIZE : MTHP_SIZE;
	char **maps = NULL;
	int r, i;

	(void)arg;
	if (prefault) {
		maps = calloc(rounds, sizeof(*maps));
		if (!maps) {
			perror("calloc");
			exit(1);
		}
		for (r = 0; r < rounds; r++)
			maps[r] = map_faulted();
		pthread_barrier_wait(&faulted);
		pthread_barrier_wait(&started);
	}
	for (r = 0; r < rounds; r++) {
		char *p = prefault ? maps[r] : map_faulted();
		size_t off;

		for (off = 0; off < size; off += folio) {
			if (!partial) {
				madvise(p + off, page_size, MADV_DONTNEED);
				continue;
			}
			for (i = 0; i < pieces; i++)
				madvise(p + off + (2 * i + 1) * page_size,
					page_size, MADV_DONTNEED);
		}
		munmap(p, size);
		ops_freed(size / folio);
	}
	free(maps);
	if (prefault) {
		/* The region ends here; the threads' exits are not in it. */
		pthread_barrier_wait(&done);
		pthread_barrier_wait(&stopped);
	}
	return NULL;
}

static double seconds(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	pthread_t *tids;
	int threads, i;

	if (argc < 5 || (strcmp(argv[1], "free") && strcmp(argv[1], "partial"))) {
		fprintf(stderr, "usage: %s free|partial THREADS ROUNDS SIZE_MB [PIECES]\n",
			argv[0]);
		return 2;
	}
	partial = !strcmp(argv[1], "partial");
	threads = atoi(argv[2]);
	rounds = atoi(argv[3]);
	size = (size_t)atoi(argv[4]) << 20;
	if (argc > 5)
		pieces = atoi(argv[5]);
	page_size = sysconf(_SC_PAGESIZE);
	if (threads < 1 || rounds < 1 || size < PMD_SIZE || pieces < 1 ||
	    (size_t)((2 * pieces + 1) * page_size) > PMD_SIZE) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	prefault = getenv("DSB_PREFAULT") && !strcmp(getenv("DSB_PREFAULT"), "1");
	tids = calloc(threads, sizeof(*tids));
	pthread_barrier_init(&faulted, NULL, threads + 1);
	pthread_barrier_init(&started, NULL, threads + 1);
	pthread_barrier_init(&done, NULL, threads + 1);
	pthread_barrier_init(&stopped, NULL, threads + 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	TCG_BENCH_RESET();
	if (!prefault)
		TCG_BENCH_START();
	for (i = 0; i < threads; i++) {
		errno = pthread_create(&tids[i], NULL, worker, NULL);
		if (errno) {
			perror("pthread_create");
			return 1;
		}
	}
	if (prefault) {
		pthread_barrier_wait(&faulted);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		TCG_BENCH_START();
		pthread_barrier_wait(&started);
	}
	if (prefault)
		pthread_barrier_wait(&done);
	else
		for (i = 0; i < threads; i++)
			pthread_join(tids[i], NULL);
	TCG_BENCH_STOP();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (prefault) {
		pthread_barrier_wait(&stopped);
		for (i = 0; i < threads; i++)
			pthread_join(tids[i], NULL);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"workload\": \"%s\", \"threads\": %d, \"rounds\": %d, \"size_mb\": %zu, "
	       "\"wall_s\": %.3f, \"sys_s\": %.3f, \"ops\": %zu}\n", argv[1], threads, rounds,
	       size >> 20, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       seconds(ru.ru_stime), threads * rounds * (size / (partial ? PMD_SIZE : MTHP_SIZE)));
	return 0;
}
