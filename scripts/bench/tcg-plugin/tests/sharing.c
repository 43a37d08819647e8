// SPDX-License-Identifier: GPL-2.0
/*
 * Known cache-line sharing for the tcg-bench plugin's c2c mode.
 *
 *   sharing MODE N [THREADS]
 *
 * THREADS threads (default 2) each do N increments between the start and
 * stop markers:
 *   counter   all increment one counter (its own line), in lock-step
 *             (a turn flag on another line passes the turn round):
 *             every increment moves the counter's line, THREADS*N in all
 *   false     thread i increments field i of one line (false sharing),
 *             in lock-step: THREADS*N transfers of that line
 *   separate  thread i increments a counter on its own line, in
 *             lock-step: 0 transfers of those lines
 *   free      as separate, without lock-step: 0 transfers
 * Each increment is an atomic fetch-and-add, counted as an operation with
 * the op marker. Static, non-PIE: the test finds the lines by symbol (nm).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../include/tcg_marker.h"

#define MAXT 8
#define LINE 64

_Alignas(LINE) volatile long turn;
_Alignas(LINE) long shared_counter;
_Alignas(LINE) long false_line[MAXT];
_Alignas(LINE) struct {
	long v;
	char pad[LINE - sizeof(long)];
} separate_lines[MAXT];

static long n;
static int nthreads;
static enum { COUNTER, FALSE, SEPARATE, FREE } mode;

static void wait_turn(int id)
{
	unsigned spins = 0;

	while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != id)
		if (++spins % 64 == 0)
			sched_yield();
}

static void pass_turn(int id)
{
	__atomic_store_n(&turn, (id + 1) % nthreads, __ATOMIC_RELEASE);
}

__attribute__((noinline)) static void increment(long *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
	TCG_BENCH_OP();
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	long *p = mode == COUNTER ? &shared_counter :
		  mode == FALSE	  ? &false_line[id] :
				    &separate_lines[id].v;

	for (long i = 0; i < n; i++) {
		if (mode != FREE)
			wait_turn(id);
		increment(p);
		if (mode != FREE)
			pass_turn(id);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAXT];
	long total = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s counter|false|separate|free N [THREADS]\n", argv[0]);
		return 2;
	}
	mode = !strcmp(argv[1], "counter") ? COUNTER :
	       !strcmp(argv[1], "false")   ? FALSE :
	       !strcmp(argv[1], "separate") ? SEPARATE :
	       !strcmp(argv[1], "free")    ? FREE : (fprintf(stderr, "bad mode\n"), exit(2), 0);
	n = atol(argv[2]);
	nthreads = argc > 3 ? atoi(argv[3]) : 2;
	if (nthreads < 1 || nthreads > MAXT)
		return 2;
	TCG_BENCH_START();
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	TCG_BENCH_STOP();
	for (int i = 0; i < nthreads; i++)
		total += false_line[i] + separate_lines[i].v;
	total += shared_counter;
	printf("%s: %d threads x %ld increments, total %ld\n", argv[1], nthreads, n, total);
	return total != nthreads * n;
}
