// SPDX-License-Identifier: GPL-2.0
/*
 * A loop of exactly 8 instructions per iteration (the op marker in it is
 * not counted) between the start and stop markers, in THREADS threads.
 *
 *   icount ITERATIONS [THREADS]
 *
 * Expected: 8 * ITERATIONS user instructions per thread (plus the few
 * instructions around the loop), ITERATIONS ops per thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "../include/tcg_marker.h"

static long iterations;

__attribute__((noinline)) static long loop(long n)
{
	long a = 0, b = 0;

	__asm__ __volatile__("1:\n\t"
			     "add $1, %[a]\n\t"
			     "add $3, %[b]\n\t"
			     "xor %[a], %[b]\n\t"
			     "imul $7, %[a], %[a]\n\t"
			     "lea 1(%[a],%[b]), %[a]\n\t"
			     "shr $1, %[b]\n\t"
			     ".byte 0x0f, 0x1f, 0x84, 0x00\n\t"
			     ".long 0x54430003\n\t" /* TCG_BENCH_OP() */
			     "dec %[n]\n\t"
			     "jnz 1b\n\t"
			     : [a] "+r"(a), [b] "+r"(b), [n] "+r"(n)
			     :
			     : "cc");
	return a + b;
}

static void *worker(void *arg)
{
	return (void *)loop(iterations);
}

int main(int argc, char **argv)
{
	pthread_t t[16];
	int threads;

	if (argc < 2)
		return 2;
	iterations = atol(argv[1]);
	threads = argc > 2 ? atoi(argv[2]) : 1;
	if (threads < 1 || threads > 16)
		return 2;
	if (threads == 1) {
		long r;

		TCG_BENCH_START();
		r = loop(iterations);
		TCG_BENCH_STOP();
		printf("icount: 1 thread x %ld iterations (%ld)\n", iterations, r & 1);
		return 0;
	}
	TCG_BENCH_START();
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	TCG_BENCH_STOP();
	printf("icount: %d threads x %ld iterations\n", threads, iterations);
	return 0;
}
