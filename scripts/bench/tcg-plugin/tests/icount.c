// SPDX-License-Identifier: GPL-2.0
/*
 * A loop of exactly 8 instructions per iteration (the op marker in it is
 * not counted) between the start and stop markers, in THREADS threads.
 *
 *   icount ITERATIONS [THREADS]
 *
 * Expected: 8 * ITERATIONS user instructions per thread (plus the few
 * instructions around the loop), ITERATIONS ops per thread.
 *
 *   icount rep ITERATIONS LEN
 *
 * A loop of 6 instructions, one of them `rep movsb` of LEN bytes in the
 * middle of its block: expected 6 * ITERATIONS instructions and LEN - 1 or
 * LEN executions of the rep block per op (the first iteration runs as the
 * instruction; QEMU 7.2 executes the instruction once more to find the
 * count at 0).
 *
 *   icount reset
 *
 * A region of 500 iterations left open (a workload that died inside it),
 * a reset marker, then a region of 1000: expected two regions, the first
 * incomplete with 500 ops, the second complete with 1000 ops and 8000
 * instructions (without the reset, the second start would nest in the
 * first and no region would close).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

__attribute__((noinline)) static void rep_loop(long n, long len)
{
	static char src[1 << 16], dst[1 << 16];
	long c;
	char *s, *d;

	__asm__ __volatile__("1:\n\t"
			     "mov %[len], %[c]\n\t"
			     "mov %[src], %[s]\n\t"
			     "mov %[dst], %[d]\n\t"
			     "rep movsb\n\t"
			     ".byte 0x0f, 0x1f, 0x84, 0x00\n\t"
			     ".long 0x54430003\n\t" /* TCG_BENCH_OP() */
			     "dec %[n]\n\t"
			     "jnz 1b\n\t"
			     : [n] "+r"(n), [c] "=&c"(c), [s] "=&S"(s), [d] "=&D"(d)
			     : [len] "r"(len), [src] "r"(src), [dst] "r"(dst)
			     : "cc", "memory");
}

static pthread_barrier_t all_alive;

/*
 * The threads wait for each other before their loops: alive at the same
 * time, they are distinct vCPUs in QEMU user mode, which gives a thread
 * created after another one exited that one's vCPU index.
 */
static void *worker(void *arg)
{
	pthread_barrier_wait(&all_alive);
	return (void *)loop(iterations);
}

int main(int argc, char **argv)
{
	pthread_t t[16];
	int threads;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "rep") && argc == 4) {
		long len = atol(argv[3]);

		if (len < 1 || len > 1 << 16)
			return 2;
		TCG_BENCH_START();
		rep_loop(atol(argv[2]), len);
		TCG_BENCH_STOP();
		printf("icount: rep movsb %ld x %ld bytes\n", atol(argv[2]), len);
		return 0;
	}
	if (!strcmp(argv[1], "reset")) {
		TCG_BENCH_START();
		loop(500);
		TCG_BENCH_RESET();
		TCG_BENCH_START();
		loop(1000);
		TCG_BENCH_STOP();
		printf("icount: reset, then 1000 iterations\n");
		return 0;
	}
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
	pthread_barrier_init(&all_alive, NULL, threads);
	TCG_BENCH_START();
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	TCG_BENCH_STOP();
	printf("icount: %d threads x %ld iterations\n", threads, iterations);
	return 0;
}
