// SPDX-License-Identifier: GPL-2.0
/*
 * /init of the system-mode smoke test (system-smoke.sh): three regions
 * under qemu-system-x86_64 with the tcg-bench plugin, then a reboot
 * (QEMU runs with -no-reboot, so it exits).
 *   1. the 8-instruction loop of icount.c, 1,000,000 iterations: user only
 *   2. getppid() 10,000 times, one op each: user and kernel per op
 *   3. two threads on one counter in lock-step, 2,000 increments each:
 *      2 x 2,000 transfers of the counter's line (keyed by physical address)
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../include/tcg_marker.h"

#define N 2000

_Alignas(64) volatile long turn;
_Alignas(64) long shared_counter;

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
			     ".long 0x54430003\n\t"
			     "dec %[n]\n\t"
			     "jnz 1b\n\t"
			     : [a] "+r"(a), [b] "+r"(b), [n] "+r"(n)
			     :
			     : "cc");
	return a + b;
}

__attribute__((noinline)) static void increment(long *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
	TCG_BENCH_OP();
}

static void *worker(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < N; i++) {
		unsigned spins = 0;

		while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != id)
			if (++spins % 64 == 0)
				sched_yield();
		increment(&shared_counter);
		__atomic_store_n(&turn, 1 - id, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	long r;

	printf("sysinit: %ld CPUs\n", sysconf(_SC_NPROCESSORS_ONLN));
	TCG_BENCH_START();
	r = loop(1000000);
	TCG_BENCH_STOP();

	TCG_BENCH_START();
	for (int i = 0; i < 10000; i++) {
		syscall(SYS_getppid);
		TCG_BENCH_OP();
	}
	TCG_BENCH_STOP();

	TCG_BENCH_START();
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	TCG_BENCH_STOP();
	printf("sysinit: counter %ld (%ld), done\n", shared_counter, r & 1);
	fflush(stdout);
	reboot(RB_AUTOBOOT);
	return 0;
}
