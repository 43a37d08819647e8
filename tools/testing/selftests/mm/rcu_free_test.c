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
 *   (MADV_SOFT_OFFLINE).
 *
 * Usage: rcu_free_test [-t threads] [-d seconds] [-m hog-MiB] <file or block device>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"

#ifndef MADV_HWPOISON
#define MADV_HWPOISON		100
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE	101
#endif

#define READ_SPAN	(64UL << 20)	/* the part of the file the readers read */
#define STRIDE		4096UL

static const char *path;
static int nr_threads = 4;
static int duration = 10;
static long hog_mib;
static volatile bool stop;

static long vmstat(const char *name)
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
			sscanf(line + strlen(name), " %ld", &val);
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
	while (!stop) {
		for (off = 0; off < size && !stop; off += STRIDE)
			if (pread(fd, buf, sizeof(buf), off) < 0)
				ksft_exit_fail_perror("pread");
		/* One thread drops the hot data now and then. */
		if (id == 0 && ++rounds % 4 == 0)
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	close(fd);
	return NULL;
}

/* Touches hog_mib of anonymous memory in a loop until killed. */
static void hog(void)
{
	size_t len = (size_t)hog_mib << 20, i;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(2);
	for (;;)
		for (i = 0; i < len; i += 4096)
			p[i]++;
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
 * Makes a page hot, maps it and applies @advice to it. Its folio has
 * PG_rcu_free. Memory failure keeps the poisoned folio; soft offline
 * migrates it away and frees it, and then the free is deferred
 * (@expect_deferred): rcu_free_deferred grows.
 */
static void poison(int advice, const char *name, off_t off, bool expect_deferred)
{
	long deferred;
	int fd, ret;
	void *p;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		ksft_exit_fail_perror(path);
	make_hot(fd, off);
	p = mmap(NULL, STRIDE, PROT_READ, MAP_SHARED, fd, off);
	if (p == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	(void)*(volatile char *)p;
	deferred = vmstat("rcu_free_deferred");
	ret = madvise(p, STRIDE, advice);
	if (ret && (errno == EPERM || errno == EINVAL)) {
		ksft_test_result_skip("%s: %s\n", name, strerror(errno));
	} else {
		munmap(p, STRIDE);
		p = MAP_FAILED;
		deferred = vmstat("rcu_free_deferred") - deferred;
		ksft_test_result(!ret && (deferred > 0 || !expect_deferred),
				 "%s of a hot page cache folio: %s, %ld pages deferred\n",
				 name, ret ? strerror(errno) : "ok", deferred);
	}
	if (p != MAP_FAILED)
		munmap(p, STRIDE);
	close(fd);
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
	return vmstat("nr_free_rcu_pages");
}

int main(int argc, char **argv)
{
	long deferred, expedited, waiting = -1;
	pthread_t *threads;
	int opt, status;
	double t0;
	pid_t pid;
	long i;

	while ((opt = getopt(argc, argv, "t:d:m:")) != -1) {
		switch (opt) {
		case 't': nr_threads = atoi(optarg); break;
		case 'd': duration = atoi(optarg); break;
		case 'm': hog_mib = atol(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-t threads] [-d seconds] [-m hog-MiB] <file|blockdev>\n",
				argv[0]);
			return KSFT_FAIL;
		}
	}
	if (optind != argc - 1 || nr_threads < 1 || duration < 1 || hog_mib < 0) {
		fprintf(stderr, "usage: %s [-t threads] [-d seconds] [-m hog-MiB] <file|blockdev>\n",
			argv[0]);
		return KSFT_FAIL;
	}
	path = argv[optind];

	ksft_print_header();
	deferred = vmstat("rcu_free_deferred");
	expedited = vmstat("rcu_free_expedited");
	if (deferred < 0)
		ksft_exit_skip("no rcu_free_deferred in /proc/vmstat (CONFIG_PAGE_RCU_FREE off)\n");
	ksft_set_plan(5);

	/* Most of what is available: reclaim has to free page cache, flagged folios too. */
	if (!hog_mib)
		hog_mib = meminfo_kib("MemAvailable:") / 1024 * 8 / 10;
	ksft_print_msg("%d readers of %s and a %ld MiB hog for %d s\n", nr_threads, path,
		       hog_mib, duration);

	pid = fork();
	if (pid < 0)
		ksft_exit_fail_perror("fork");
	if (!pid)
		hog();

	threads = calloc(nr_threads, sizeof(*threads));
	for (i = 0; i < nr_threads; i++)
		if (pthread_create(&threads[i], NULL, reader, (void *)i))
			ksft_exit_fail_msg("pthread_create\n");
	sleep(duration);
	stop = true;
	for (i = 0; i < nr_threads; i++)
		pthread_join(threads[i], NULL);

	/* The hog must still be running: killed by the OOM killer is a failure. */
	if (waitpid(pid, &status, WNOHANG) == pid)
		ksft_test_result_fail("the memory hog died: %s %d\n",
				      WIFSIGNALED(status) ? "signal" : "exit",
				      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	else
		ksft_test_result_pass("the memory hog ran next to the hot reads, no OOM kill\n");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);

	deferred = vmstat("rcu_free_deferred") - deferred;
	expedited = vmstat("rcu_free_expedited") - expedited;
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

	poison(MADV_HWPOISON, "MADV_HWPOISON", 0, false);
	poison(MADV_SOFT_OFFLINE, "MADV_SOFT_OFFLINE", 128 * STRIDE, true);

	ksft_finished();
}
