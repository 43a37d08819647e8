// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded, deterministic stress test of the THP deferred split paths.
 *
 * Every thread repeatedly maps an anonymous region backed by PMD-sized THPs
 * or by 16kB mTHPs, fills it with a pattern that only depends on the thread,
 * the round and the offset, and then MADV_DONTNEEDs a range of every chunk
 * whose length is not a multiple of the folio size: the large folios at both
 * ends of the range stay partially mapped, so rmap queues them for deferred
 * split. The region is checked (kept bytes still hold the pattern, discarded
 * bytes read back as zero) and unmapped, which frees the queued folios: this
 * exercises unqueueing folios whose refcount dropped to zero in the free
 * paths, concurrently with other threads queueing folios on the same lists
 * and with the deferred split shrinker.
 *
 * Once everything is unmapped, nr_anon_partially_mapped of every mTHP size
 * must be back to its value from before the run: a higher value means that a
 * partially mapped folio was freed without being taken off the deferred split
 * queue, or that the accounting went wrong.
 *
 * With -c, the test runs in a new child memory cgroup (cgroup v2; mounted
 * for the test if it is not), so that the folios are charged to it and sit
 * on its own deferred split sublists; afterwards its "anon" in memory.stat
 * must be below 1 MiB: all the large folios the workers mapped were freed
 * and uncharged (what is left is the test's own stacks and heap). Then one
 * more round runs in a child of that cgroup, "dying", and keeps its
 * partially mapped PMD THPs mapped; the test leaves "dying" and removes it,
 * and unmaps them only then: half at once, while the memcg is removed but
 * still online (its folios on its own sublists), half once it is offline.
 * Going offline, a memcg moves its deferred split sublists to its parent's,
 * then its folios to the parent (their obj_cgroup): those folios are freed
 * from the parent's sublist. The parent's memory.current must then be below
 * 1 MiB.
 *
 * A broken unqueue may only show in the kernel log (uncharge_folio() warns
 * about a folio still queued, and takes it off itself): the test fails if
 * the kernel gets tainted with a warning while it runs.
 *
 * Needs root (it changes the THP settings, restored on exit) and THP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "vm_util.h"
#include "kselftest.h"
#include "hugepage_settings.h"

#define PATTERN_SEED		0x5eedde7e2a5b1e55ULL
#define HOLE_SALT		0x40fe1dc0ffee0dd5ULL
/* PMD chunks keep 1..MAX_PMD_EDGE_PAGES pages mapped at either end. */
#define MAX_PMD_EDGE_PAGES	8
#define MTHP_SIZE		(16 * 1024UL)
#define SETTLE_TRIES		20
#define SETTLE_DELAY_US		100000
/* What the test itself may keep charged to its memory cgroup (-c). */
#define CGROUP_ANON_LEFT	(1024 * 1024L)

enum {
	MODE_PMD = 1 << 0,
	MODE_MTHP = 1 << 1,
};

struct mode {
	const char *name;
	/* Order of the large folios this mode allocates, 0 if unsupported. */
	unsigned int order;
	/* One MADV_DONTNEED hole per chunk. */
	size_t chunk_size;
	/* Pages kept mapped at the start and at the end of each chunk. */
	unsigned int max_edge_pages;
};

struct counters {
	unsigned long thp_deferred_split_page;
	unsigned long thp_split_page;
	unsigned long thp_fault_alloc;
	unsigned long split_deferred[NR_ORDERS];
	unsigned long nr_anon_partially_mapped[NR_ORDERS];
	unsigned long anon_fault_alloc[NR_ORDERS];
};

struct worker {
	pthread_t thread;
	const struct mode *mode;
	unsigned int id;
	unsigned long rounds;
	unsigned long wrong_bytes;
	const char *failed_op;
	int err;
	/* Keep the region of a round mapped, in kept, for the caller. */
	bool keep;
	char *kept;
};

/* The results reported for each mode, in this order. */
static const char * const check_names[] = {
	"data intact",
	"partially mapped folios queued",
	"nr_anon_partially_mapped back to base",
};

static size_t pagesize;
static size_t pmdsize;
static unsigned int pmd_order;
static unsigned long thp_orders;
static size_t region_size;
static unsigned long max_rounds = 200;
static struct timespec deadline;

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t round_seed(unsigned int id, unsigned long round)
{
	return mix64(PATTERN_SEED ^ ((uint64_t)id << 32) ^ round);
}

/* The hole punched into a chunk: [*start, *end), offsets into the chunk. */
static void chunk_hole(const struct mode *mode, uint64_t seed,
		       unsigned long chunk, size_t *start, size_t *end)
{
	uint64_t h = mix64(seed ^ HOLE_SALT ^ chunk);
	unsigned int head = 1 + (h & 0xffffffff) % mode->max_edge_pages;
	unsigned int tail = 1 + (h >> 32) % mode->max_edge_pages;

	*start = head * pagesize;
	*end = mode->chunk_size - tail * pagesize;
}

static unsigned int nr_wrong_bytes(uint64_t got, uint64_t want)
{
	uint64_t diff = got ^ want;
	unsigned int nr = 0;

	for (; diff; diff >>= 8)
		nr += !!(diff & 0xff);
	return nr;
}

static bool deadline_passed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec &&
		now.tv_nsec >= deadline.tv_nsec);
}

/* mmap() region_size bytes aligned to pmdsize. */
static char *map_region(void)
{
	size_t len = region_size + pmdsize;
	char *map, *start;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;

	start = (char *)(((uintptr_t)map + pmdsize - 1) & ~(pmdsize - 1));
	if (start != map)
		munmap(map, start - map);
	munmap(start + region_size, map + len - (start + region_size));
	return start;
}

static void report_mismatch(const struct worker *w, size_t offset,
			    bool discarded, uint64_t got, uint64_t want)
{
	ksft_print_msg("%s: thread %u round %lu: %s offset 0x%zx\n",
		       w->mode->name, w->id, w->rounds,
		       discarded ? "discarded" : "kept", offset);
	ksft_print_msg("%s: got 0x%016llx, want 0x%016llx\n", w->mode->name,
		       (unsigned long long)got, (unsigned long long)want);
}

static unsigned long verify_range(struct worker *w, const uint64_t *words,
				  size_t first, size_t last, uint64_t seed,
				  bool discarded)
{
	unsigned long wrong = 0;
	size_t i;

	for (i = first; i < last; i++) {
		uint64_t want = discarded ? 0 : mix64(seed + i);
		unsigned int nr = nr_wrong_bytes(words[i], want);

		/* Report the first bad word of each thread. */
		if (nr && !w->wrong_bytes && !wrong)
			report_mismatch(w, i * sizeof(*words), discarded,
					words[i], want);
		wrong += nr;
	}
	return wrong;
}

static int worker_fail(struct worker *w, const char *op)
{
	w->failed_op = op;
	w->err = errno;
	return -1;
}

static int run_round(struct worker *w)
{
	const struct mode *mode = w->mode;
	const size_t chunk_words = mode->chunk_size / sizeof(uint64_t);
	const unsigned long nr_chunks = region_size / mode->chunk_size;
	uint64_t seed = round_seed(w->id, w->rounds);
	size_t start, end, base, i;
	unsigned long chunk;
	uint64_t *words;
	char *region;

	region = map_region();
	if (!region)
		return worker_fail(w, "mmap");
	if (madvise(region, region_size, MADV_HUGEPAGE)) {
		worker_fail(w, "madvise(MADV_HUGEPAGE)");
		munmap(region, region_size);
		return -1;
	}

	/* Fault everything in, as large folios where possible. */
	words = (uint64_t *)region;
	for (i = 0; i < region_size / sizeof(uint64_t); i++)
		words[i] = mix64(seed + i);

	/* Leave the large folios at both ends of every hole partially mapped. */
	for (chunk = 0; chunk < nr_chunks; chunk++) {
		chunk_hole(mode, seed, chunk, &start, &end);
		if (madvise(region + chunk * mode->chunk_size + start,
			    end - start, MADV_DONTNEED)) {
			worker_fail(w, "madvise(MADV_DONTNEED)");
			munmap(region, region_size);
			return -1;
		}
	}

	for (chunk = 0; chunk < nr_chunks; chunk++) {
		chunk_hole(mode, seed, chunk, &start, &end);
		base = chunk * chunk_words;
		start = base + start / sizeof(uint64_t);
		end = base + end / sizeof(uint64_t);
		w->wrong_bytes += verify_range(w, words, base, start, seed,
					       false);
		w->wrong_bytes += verify_range(w, words, start, end, seed,
					       true);
		w->wrong_bytes += verify_range(w, words, end,
					       base + chunk_words, seed, false);
	}

	if (w->keep) {
		w->kept = region;
		return 0;
	}
	/* Free the partially mapped folios while they are still queued. */
	if (munmap(region, region_size))
		return worker_fail(w, "munmap");
	return 0;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;

	while (w->rounds < max_rounds) {
		if (run_round(w))
			break;
		w->rounds++;
		if (deadline_passed())
			break;
	}
	return NULL;
}

static void read_vmstat(struct counters *c)
{
	char name[64];
	unsigned long val;
	FILE *f;

	f = fopen("/proc/vmstat", "r");
	if (!f)
		ksft_exit_fail_perror("/proc/vmstat");
	while (fscanf(f, "%63s %lu", name, &val) == 2) {
		if (!strcmp(name, "thp_deferred_split_page"))
			c->thp_deferred_split_page = val;
		else if (!strcmp(name, "thp_split_page"))
			c->thp_split_page = val;
		else if (!strcmp(name, "thp_fault_alloc"))
			c->thp_fault_alloc = val;
	}
	fclose(f);
}

static unsigned long read_mthp_stat(unsigned int order, const char *stat)
{
	char name[64];

	snprintf(name, sizeof(name), "hugepages-%zukB/stats/%s",
		 (pagesize << order) / 1024, stat);
	return thp_read_num(name);
}

static void read_counters(struct counters *c)
{
	unsigned int order;

	memset(c, 0, sizeof(*c));
	read_vmstat(c);
	for (order = 0; order < NR_ORDERS; order++) {
		if (!(thp_orders & (1UL << order)))
			continue;
		c->split_deferred[order] =
			read_mthp_stat(order, "split_deferred");
		c->nr_anon_partially_mapped[order] =
			read_mthp_stat(order, "nr_anon_partially_mapped");
		c->anon_fault_alloc[order] =
			read_mthp_stat(order, "anon_fault_alloc");
	}
}

/*
 * Frees of the folios may lag behind munmap() (e.g. references held by the
 * deferred split shrinker or by compaction), so poll for a while. Other
 * processes may free partially mapped folios meanwhile: only an increase
 * counts as a leak.
 */
static bool partially_mapped_settled(const struct counters *before,
				     struct counters *after)
{
	unsigned int order, try;
	bool settled;

	for (try = 0; try < SETTLE_TRIES; try++) {
		if (try)
			usleep(SETTLE_DELAY_US);
		read_counters(after);
		settled = true;
		for (order = 0; order < NR_ORDERS; order++)
			if (after->nr_anon_partially_mapped[order] >
			    before->nr_anon_partially_mapped[order])
				settled = false;
		if (settled)
			return true;
	}
	return false;
}

static void print_counter(const char *mode, const char *name,
			  unsigned long before, unsigned long after)
{
	ksft_print_msg("%s: %s: %lu -> %lu (%+ld)\n", mode, name, before,
		       after, (long)(after - before));
}

static void print_counters(const struct mode *mode,
			   const struct counters *before,
			   const struct counters *after)
{
	unsigned int order = mode->order;
	char name[80];

	print_counter(mode->name, "thp_fault_alloc", before->thp_fault_alloc,
		      after->thp_fault_alloc);
	print_counter(mode->name, "thp_deferred_split_page",
		      before->thp_deferred_split_page,
		      after->thp_deferred_split_page);
	print_counter(mode->name, "thp_split_page", before->thp_split_page,
		      after->thp_split_page);

	snprintf(name, sizeof(name), "hugepages-%zukB/anon_fault_alloc",
		 (pagesize << order) / 1024);
	print_counter(mode->name, name, before->anon_fault_alloc[order],
		      after->anon_fault_alloc[order]);
	snprintf(name, sizeof(name), "hugepages-%zukB/split_deferred",
		 (pagesize << order) / 1024);
	print_counter(mode->name, name, before->split_deferred[order],
		      after->split_deferred[order]);
}

static void print_partially_mapped(const struct mode *mode,
				   const struct counters *before,
				   const struct counters *after)
{
	unsigned int order;
	char name[80];

	for (order = 0; order < NR_ORDERS; order++) {
		if (!(thp_orders & (1UL << order)))
			continue;
		snprintf(name, sizeof(name),
			 "hugepages-%zukB/nr_anon_partially_mapped",
			 (pagesize << order) / 1024);
		print_counter(mode->name, name,
			      before->nr_anon_partially_mapped[order],
			      after->nr_anon_partially_mapped[order]);
	}
}

/* Only the large folio order under test may be allocated. */
static void push_mode_settings(const struct mode *mode)
{
	struct thp_settings settings = *thp_current_settings();

	if (mode->order == pmd_order)
		settings.hugepages[mode->order].enabled = THP_INHERIT;
	else
		settings.hugepages[mode->order].enabled = THP_MADVISE;
	thp_push_settings(&settings);
}

static void run_mode(const struct mode *mode, unsigned int nr_threads,
		     unsigned int duration)
{
	unsigned long rounds = 0, wrong_bytes = 0;
	struct counters before, after;
	unsigned long alloc, queued;
	struct worker *workers;
	const char *failed_op = NULL;
	unsigned int i;
	bool settled;
	int err = 0;

	if (!mode->order) {
		for (i = 0; i < ARRAY_SIZE(check_names); i++)
			ksft_test_result_skip("%s: %s (16kB mTHP not supported)\n",
					      mode->name, check_names[i]);
		return;
	}

	workers = calloc(nr_threads, sizeof(*workers));
	if (!workers)
		ksft_exit_fail_perror("calloc");

	push_mode_settings(mode);
	read_counters(&before);

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += duration;
	for (i = 0; i < nr_threads; i++) {
		workers[i].mode = mode;
		workers[i].id = i;
		errno = pthread_create(&workers[i].thread, NULL, worker_fn,
				       &workers[i]);
		if (errno)
			ksft_exit_fail_perror("pthread_create");
	}
	for (i = 0; i < nr_threads; i++) {
		pthread_join(workers[i].thread, NULL);
		rounds += workers[i].rounds;
		wrong_bytes += workers[i].wrong_bytes;
		if (workers[i].failed_op && !failed_op) {
			failed_op = workers[i].failed_op;
			err = workers[i].err;
		}
	}
	free(workers);

	read_counters(&after);
	thp_pop_settings();

	ksft_print_msg("%s: %u threads, %lu rounds, %zu MiB per thread, %zu kB folios\n",
		       mode->name, nr_threads, rounds, region_size >> 20,
		       (pagesize << mode->order) / 1024);
	print_counters(mode, &before, &after);

	if (failed_op)
		ksft_test_result_fail("%s: %s (%s failed: %s)\n", mode->name,
				      check_names[0], failed_op, strerror(err));
	else if (wrong_bytes)
		ksft_test_result_fail("%s: %s (%lu wrong bytes)\n", mode->name,
				      check_names[0], wrong_bytes);
	else
		ksft_test_result_pass("%s: %s\n", mode->name, check_names[0]);

	if (mode->order == pmd_order) {
		alloc = after.thp_fault_alloc - before.thp_fault_alloc;
		queued = after.thp_deferred_split_page -
			 before.thp_deferred_split_page;
	} else {
		alloc = after.anon_fault_alloc[mode->order] -
			before.anon_fault_alloc[mode->order];
		queued = after.split_deferred[mode->order] -
			 before.split_deferred[mode->order];
	}
	if (!alloc)
		ksft_test_result_skip("%s: %s (no THP was allocated)\n",
				      mode->name, check_names[1]);
	else
		ksft_test_result(queued, "%s: %s\n", mode->name,
				 check_names[1]);

	settled = partially_mapped_settled(&before, &after);
	print_partially_mapped(mode, &before, &after);
	ksft_test_result(settled, "%s: %s\n", mode->name, check_names[2]);
}

static char cgroup_root[PATH_MAX], cgroup_dir[PATH_MAX + 64];
static char orig_dir[2 * PATH_MAX], dying_dir[PATH_MAX + 128];

static int cg_write(const char *dir, const char *name, const char *val)
{
	char path[PATH_MAX + 128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* The value of key in file of the child cgroup (key NULL: its first value), or -1. */
static long cg_read(const char *file, const char *key)
{
	char path[PATH_MAX + 128], line[256], name[64], *end;
	long val = -1, v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cgroup_dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			v = strtol(line, &end, 10);
			if (end != line)
				val = v;
			break;
		}
		if (sscanf(line, "%63s %ld", name, &v) == 2 && !strcmp(name, key)) {
			val = v;
			break;
		}
	}
	fclose(f);
	return val;
}

/* Whatever happened, the test leaves no cgroup behind. */
static void cleanup_cgroups(void)
{
	char pid[32];

	if (!cgroup_dir[0])
		return;
	snprintf(pid, sizeof(pid), "%d", getpid());
	cg_write(orig_dir, "cgroup.procs", pid);
	if (dying_dir[0])
		rmdir(dying_dir);
	rmdir(cgroup_dir);
	cgroup_dir[0] = '\0';
}

/* The cgroup this process is in, below the cgroup2 mount cgroup_root. */
static void find_orig_cgroup(void)
{
	char line[PATH_MAX + 16];
	FILE *f = fopen("/proc/self/cgroup", "r");

	snprintf(orig_dir, sizeof(orig_dir), "%s", cgroup_root);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(orig_dir, sizeof(orig_dir), "%s%s", cgroup_root,
			 strcmp(line + 3, "/") ? line + 3 : "");
		break;
	}
	fclose(f);
}

/* Move this process into a new child memory cgroup; skip if impossible. */
static void enter_cgroup(void)
{
	char line[512], pid[32], fs[64], mnt[PATH_MAX];
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/mounts", "r");
	if (!f)
		ksft_exit_fail_perror("/proc/self/mounts");
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %4095s %63s", mnt, fs) == 2 &&
			!strcmp(fs, "cgroup2");
	fclose(f);
	if (found) {
		snprintf(cgroup_root, sizeof(cgroup_root), "%s", mnt);
	} else {
		snprintf(cgroup_root, sizeof(cgroup_root), "/tmp/deferred_split_stress.cg");
		if ((mkdir(cgroup_root, 0755) && errno != EEXIST) ||
		    mount("none", cgroup_root, "cgroup2", 0, NULL))
			ksft_exit_skip("cannot mount cgroup v2: %s\n", strerror(errno));
	}
	if (cg_write(cgroup_root, "cgroup.subtree_control", "+memory"))
		ksft_exit_skip("cannot enable the memory controller: %s\n",
			       strerror(errno));
	find_orig_cgroup();
	snprintf(cgroup_dir, sizeof(cgroup_dir), "%s/deferred_split_stress.%d",
		 cgroup_root, getpid());
	if (mkdir(cgroup_dir, 0755))
		ksft_exit_fail_perror("mkdir cgroup");
	atexit(cleanup_cgroups);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (cg_write(cgroup_dir, "cgroup.procs", pid))
		ksft_exit_fail_perror("moving into the cgroup");
	ksft_print_msg("running in memory cgroup %s\n", cgroup_dir);
}

/* cg_read(file, key) once the last frees are done (below 1 MiB), or its last value. */
static long settled_cg_read(const char *file, const char *key)
{
	long val = -1;
	int i;

	/* The last frees may still sit in per-CPU LRU batches: let them drain. */
	for (i = 0; i < SETTLE_TRIES; i++) {
		val = cg_read(file, key);
		if (val >= 0 && val < CGROUP_ANON_LEFT)
			break;
		usleep(SETTLE_DELAY_US);
	}
	return val;
}

static void move_to(const char *dir)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (cg_write(dir, "cgroup.procs", pid))
		ksft_exit_fail_perror("moving to another cgroup");
}

/* Back to the cgroup it came from; the workers' memory must be unmapped. */
static void leave_cgroup(void)
{
	long anon = settled_cg_read("memory.stat", "anon");

	move_to(orig_dir);
	ksft_test_result(anon >= 0 && anon < CGROUP_ANON_LEFT,
			 "memcg: anon below 1 MiB after the run (%ld bytes)\n", anon);
}

static const char reparent_check[] = "memcg: queued folios of a removed memcg freed";

/* Whether the kernel command line turns kmem accounting off. */
static bool kmem_disabled(void)
{
	char cmdline[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(cmdline, sizeof(cmdline), f))
			cmdline[0] = '\0';
		fclose(f);
	}
	return strstr(cmdline, "cgroup.memory=nokmem");
}

/*
 * One round of PMD THPs in "dying", a child of the test's cgroup, whose
 * partially mapped folios are unmapped only once "dying" is removed.
 */
static void reparent_round(const struct mode *mode)
{
	struct worker w = { .mode = mode, .keep = true };
	struct counters before, queued, after;
	size_t size = region_size, half;
	const char *why = NULL;
	bool settled, offline = false;
	long cur;
	int i;

	/* Without kmem accounting the queue has no sublist per memcg. */
	if (kmem_disabled()) {
		ksft_test_result_skip("%s (%s)\n", reparent_check, "cgroup.memory=nokmem");
		return;
	}
	/* At least a PMD for each half. */
	if (region_size < 2 * pmdsize)
		region_size = 2 * pmdsize;
	half = region_size / pmdsize / 2 * pmdsize;
	/* The test's cgroup has no process once it is left: it may get children. */
	if (cg_write(cgroup_dir, "cgroup.subtree_control", "+memory"))
		ksft_exit_fail_perror("enabling the memory controller below the test's cgroup");
	snprintf(dying_dir, sizeof(dying_dir), "%s/dying", cgroup_dir);
	if (mkdir(dying_dir, 0755))
		ksft_exit_fail_perror("mkdir dying");
	push_mode_settings(mode);
	read_counters(&before);
	move_to(dying_dir);
	run_round(&w);
	move_to(orig_dir);
	read_counters(&queued);
	if (rmdir(dying_dir))
		ksft_exit_fail_perror("rmdir dying");
	dying_dir[0] = '\0';
	/*
	 * Removed, the memcg is still online (its offline runs from a work
	 * item two grace periods later): the first half is freed from its own
	 * sublists. It is offline, and released, once the test's cgroup
	 * counts no dying memory css: the second half is freed from the
	 * parent's sublist, where the offline moved it.
	 */
	if (w.kept && munmap(w.kept, half))
		ksft_exit_fail_perror("munmap");
	for (i = 0; i < 10 * SETTLE_TRIES && !offline; i++) {
		offline = !cg_read("cgroup.stat", "nr_dying_subsys_memory");
		if (!offline)
			usleep(SETTLE_DELAY_US);
	}
	if (!offline)
		ksft_print_msg("memcg: dying not released after %d s: %s\n",
			       10 * SETTLE_TRIES * SETTLE_DELAY_US / 1000000,
			       "the second half may not be reparented");
	if (w.kept && munmap(w.kept + half, region_size - half))
		ksft_exit_fail_perror("munmap");
	thp_pop_settings();
	settled = partially_mapped_settled(&before, &after);
	cur = settled_cg_read("memory.current", NULL);
	print_counter("memcg", "thp_deferred_split_page",
		      before.thp_deferred_split_page,
		      queued.thp_deferred_split_page);
	print_partially_mapped(mode, &before, &after);
	ksft_print_msg("memcg: memory.current of the parent after the frees: %ld\n", cur);
	region_size = size;
	if (w.failed_op)
		why = w.failed_op;
	else if (w.wrong_bytes)
		why = "wrong bytes";
	else if (!settled)
		why = "nr_anon_partially_mapped not back to base";
	else if (cur < 0 || cur >= CGROUP_ANON_LEFT)
		why = "memory.current of the parent not below 1 MiB";
	if (!why && queued.thp_deferred_split_page == before.thp_deferred_split_page)
		ksft_test_result_skip("%s (%s)\n", reparent_check, "none queued");
	else
		ksft_test_result(!why, "%s%s%s%s\n", reparent_check,
				 why ? " (" : "", why ? why : "", why ? ")" : "");
}

static void remove_cgroup(void)
{
	if (rmdir(cgroup_dir))
		ksft_print_msg("rmdir %s: %s\n", cgroup_dir, strerror(errno));
	cgroup_dir[0] = '\0';
}

/* TAINT_WARN (bit 9) of /proc/sys/kernel/tainted: a WARN() fired. */
static bool kernel_warned(void)
{
	unsigned long taint = 0;
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");

	if (f) {
		if (fscanf(f, "%lu", &taint) != 1)
			taint = 0;
		fclose(f);
	}
	return (taint >> 9) & 1;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s [-t THREADS] [-d SECONDS] [-s MB] [-r ROUNDS] [-m MODE] [-c]\n"
		"  -t THREADS  worker threads (default: online CPUs)\n"
		"  -d SECONDS  stop each mode's workers after SECONDS (default 10)\n"
		"  -s MB       memory per thread, rounded up to the PMD size (default 16)\n"
		"  -r ROUNDS   stop each worker after ROUNDS rounds (default 200)\n"
		"  -m MODE     pmd, mthp16k or both (default both)\n"
		"  -c          run in a new child memory cgroup (cgroup v2)\n",
		prog);
	exit(KSFT_FAIL);
}

static unsigned long parse_num(const char *prog, const char *arg)
{
	unsigned long val;
	char *end;

	errno = 0;
	val = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || !val || val > UINT32_MAX)
		usage(prog);
	return val;
}

int main(int argc, char **argv)
{
	long nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int nr_threads = nr_cpus > 0 ? nr_cpus : 1;
	unsigned int duration = 10, modes = MODE_PMD | MODE_MTHP;
	unsigned long size_mb = 16;
	struct thp_settings settings;
	struct mode pmd, mthp;
	bool in_cgroup = false;
	bool warned;
	unsigned int order;
	int opt;

	while ((opt = getopt(argc, argv, "t:d:s:r:m:c")) != -1) {
		switch (opt) {
		case 'c':
			in_cgroup = true;
			break;
		case 't':
			nr_threads = parse_num(argv[0], optarg);
			break;
		case 'd':
			duration = parse_num(argv[0], optarg);
			break;
		case 's':
			size_mb = parse_num(argv[0], optarg);
			break;
		case 'r':
			max_rounds = parse_num(argv[0], optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "pmd"))
				modes = MODE_PMD;
			else if (!strcmp(optarg, "mthp16k"))
				modes = MODE_MTHP;
			else if (!strcmp(optarg, "both"))
				modes = MODE_PMD | MODE_MTHP;
			else
				usage(argv[0]);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);

	ksft_print_header();

	if (!thp_available())
		ksft_exit_skip("Transparent Hugepages not available\n");
	if (geteuid())
		ksft_exit_skip("Please run the test as root\n");

	pagesize = getpagesize();
	pmdsize = read_pmd_pagesize();
	if (!pmdsize)
		ksft_exit_skip("Cannot read the PMD THP size\n");
	thp_orders = thp_supported_orders();
	region_size = ((size_mb << 20) + pmdsize - 1) & ~(pmdsize - 1);

	pmd_order = sz2ord(pmdsize, pagesize);
	pmd = (struct mode) {
		.name = "pmd",
		.order = pmd_order,
		.chunk_size = pmdsize,
		.max_edge_pages = MAX_PMD_EDGE_PAGES,
	};

	/* Order 1 folios are never queued for deferred split. */
	mthp = (struct mode) { .name = "mthp16k" };
	if (pagesize < MTHP_SIZE) {
		order = sz2ord(MTHP_SIZE, pagesize);
		if (order >= 2 && (thp_orders & (1UL << order))) {
			mthp.order = order;
			mthp.chunk_size = 2 * MTHP_SIZE;
			mthp.max_edge_pages = (1U << order) - 1;
		}
	}

	ksft_set_plan(ARRAY_SIZE(check_names) * __builtin_popcount(modes) +
		      2 * in_cgroup + 1);
	warned = kernel_warned();

	/* Restored by an atexit() handler, also on failure and on signals. */
	thp_save_settings();
	thp_read_settings(&settings);
	settings.thp_enabled = THP_MADVISE;
	settings.khugepaged.max_ptes_none = 0;
	for (order = 0; order < NR_ORDERS; order++)
		settings.hugepages[order].enabled = THP_NEVER;
	thp_push_settings(&settings);

	if (in_cgroup)
		enter_cgroup();
	if (modes & MODE_PMD)
		run_mode(&pmd, nr_threads, duration);
	if (modes & MODE_MTHP)
		run_mode(&mthp, nr_threads, duration);
	if (in_cgroup) {
		leave_cgroup();
		reparent_round(&pmd);
		remove_cgroup();
	}
	if (warned)
		ksft_test_result_skip("no kernel warning during the run (one before it)\n");
	else
		ksft_test_result(!kernel_warned(), "no kernel warning during the run\n");

	ksft_finished();
}
