// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the deferred free of PG_rcu_free folios.
 *
 * The first cases free flagged folios through the page allocator's own
 * paths (folio_put(), folios_put_refs()) and check, on whichever engine is
 * built (mm/rcu_free.c or mm/rcu_free_rust.rs), what a lockless reader
 * relies on: a flagged folio stays out of the allocator while a reader
 * holds rcu_read_lock(), an unflagged one is freed at once, batches drain,
 * the drain frees what waits with a normal grace period in flight, and the
 * expedite work frees a CPU's folios when memory runs short. They check
 * what their own folios do, never global counts: page cache folios may be
 * flagged and freed meanwhile.
 *
 * The last two cases run each engine through scripts of frees, works,
 * drains and grace periods, on storage and grace periods of their own
 * (static stubs of the shims in mm/page_alloc.c), one CPU's and then two
 * CPUs', and check that it frees every folio in the step the mechanism
 * says; with both engines built (CONFIG_PAGE_RCU_FREE_RUST), that both
 * make the same calls of those shims in the same order.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/folio_batch.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>
#include <linux/vmstat.h>

#include "../rcu_free.h"

static struct folio *alloc_flagged(struct kunit *test, unsigned int order)
{
	struct folio *folio = folio_alloc(GFP_KERNEL, order);

	KUNIT_ASSERT_NOT_NULL(test, folio);
	folio_set_rcu_free(folio);
	return folio;
}

/* Whether @folio waits on one of the deferred free lists. */
static bool waits(struct folio *folio)
{
	bool found = false;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct rcu_free_pcp *pcp = rcu_free_cpu_pcp(cpu);
		unsigned long flags;

		rcu_free_pcp_lock_cpu(pcp, &flags);
		found |= rcu_free_pcp_holds(pcp, folio);
		rcu_free_pcp_unlock(pcp, flags);
	}
	return found;
}

/* Waits for every CPU's works: a batch a work took off its list is free. */
static void flush_works(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct rcu_free_pcp *pcp = rcu_free_cpu_pcp(cpu);

		flush_work(&pcp->rwork.work);
		flush_work(&pcp->expedite);
	}
}

/* Waits up to ten seconds for the works to free @folios. */
static bool wait_freed(struct folio **folios, int nr)
{
	int tries, i;

	for (tries = 0; tries < 1000; tries++) {
		for (i = 0; i < nr; i++)
			if (waits(folios[i]))
				break;
		if (i == nr) {
			flush_works();
			return true;
		}
		fsleep(10 * USEC_PER_MSEC);
	}
	return false;
}

static unsigned long deferred_events(void)
{
#ifdef CONFIG_VM_EVENT_COUNTERS
	unsigned long events[NR_VM_EVENT_ITEMS];

	all_vm_events(events);
	return events[RCU_FREE_DEFERRED];
#else
	return 0;
#endif
}

static void flagged_waits_for_a_grace_period(struct kunit *test)
{
	unsigned long deferred = deferred_events();
	struct folio *folio = alloc_flagged(test, 0);
	bool flagged, waiting;
	int refs, i;

	rcu_read_lock();
	folio_put(folio);
	/*
	 * A reader in this critical section may still copy from the folio:
	 * it must stay out of the allocator while we hold the read lock.
	 * Spin long enough for many grace periods to end if nothing held it.
	 */
	for (i = 0; i < 100; i++)
		mdelay(1);
	/* As a lockless reader: only the refcount and flags are read. */
	refs = folio_ref_count(folio);
	flagged = folio_test_rcu_free(folio);
	waiting = waits(folio);
	rcu_read_unlock();

	KUNIT_EXPECT_EQ(test, refs, 0);
	KUNIT_EXPECT_TRUE(test, flagged);
	KUNIT_EXPECT_TRUE(test, waiting);
	if (IS_ENABLED(CONFIG_VM_EVENT_COUNTERS))
		KUNIT_EXPECT_GE(test, deferred_events(), deferred + 1);
	/* After the read lock is dropped, the per-CPU work frees it. */
	KUNIT_EXPECT_TRUE(test, wait_freed(&folio, 1));
}

/*
 * The drain before OOM and before alloc_contig_range() frees what waits at
 * once, also while a normal grace period is in flight: its expedited grace
 * period must satisfy the list's cookie, which a get_state_synchronize_rcu()
 * cookie taken then would not.
 */
static void drain_all_with_a_normal_grace_period_in_flight(struct kunit *test)
{
	struct folio *folio = alloc_flagged(test, 0);
	bool waiting;

	start_poll_synchronize_rcu();
	/* Holds off a drain elsewhere until the folio has been looked for. */
	rcu_read_lock();
	folio_put(folio);
	waiting = waits(folio);
	rcu_read_unlock();
	KUNIT_EXPECT_TRUE(test, waiting);
	rcu_free_drain_all();
	KUNIT_EXPECT_FALSE(test, waits(folio));
}

static void unflagged_is_freed_at_once(struct kunit *test)
{
	struct folio *folio = folio_alloc(GFP_KERNEL, 2);
	bool waiting;

	KUNIT_ASSERT_NOT_NULL(test, folio);
	rcu_read_lock();
	folio_put(folio);
	waiting = waits(folio);
	rcu_read_unlock();
	KUNIT_EXPECT_FALSE(test, waiting);
}

#define BATCHES_NR	100	/* more than three folio batches */

static void batches_drain(struct kunit *test)
{
	struct folio_batch fbatch;
	struct folio **folios;
	bool all_waiting = true;
	int i;

	folios = kunit_kcalloc(test, BATCHES_NR, sizeof(*folios), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, folios);
	for (i = 0; i < BATCHES_NR; i++)
		folios[i] = alloc_flagged(test, i % 10 ? 0 : 2);

	/* All freed in one read-side critical section: none can be freed yet. */
	folio_batch_init(&fbatch);
	rcu_read_lock();
	for (i = 0; i < BATCHES_NR; i++) {
		if (i % 2 == 0) {
			folio_put(folios[i]);
			continue;
		}
		/* The other half as reclaim and truncation free them. */
		if (!folio_batch_add(&fbatch, folios[i]))
			folios_put_refs(&fbatch, NULL);
	}
	if (folio_batch_count(&fbatch))
		folios_put_refs(&fbatch, NULL);
	for (i = 0; i < BATCHES_NR; i++)
		all_waiting &= waits(folios[i]);
	rcu_read_unlock();

	KUNIT_EXPECT_TRUE(test, all_waiting);
	rcu_free_drain_all();
	for (i = 0; i < BATCHES_NR; i++)
		KUNIT_EXPECT_FALSE(test, waits(folios[i]));
}

static bool memory_always_short(struct folio *folio)
{
	return true;
}

static void expedites_when_memory_runs_short(struct kunit *test)
{
	/* One folio of 2 MiB crosses the threshold of the CPU it is freed on. */
	unsigned int order = ilog2(SZ_2M / PAGE_SIZE);
	int tries, cpu;

	if (order > MAX_PAGE_ORDER)
		kunit_skip(test, "no folio of 2 MiB (MAX_PAGE_ORDER is below)");
	/* Every zone looks short of memory to this test's frees. */
	kunit_activate_static_stub(test, rcu_free_memory_short,
				   memory_always_short);
	/*
	 * Proof that the expedite freed the folio: it is free before any
	 * normal grace period ended since its free, which the normal works
	 * need at least one of. If one ends meanwhile all the same, again.
	 */
	for (tries = 0; tries < 5; tries++) {
		struct folio *folio = folio_alloc(GFP_KERNEL | __GFP_NOWARN, order);
		unsigned long normal;
		bool freed;

		if (!folio)
			kunit_skip(test, "no folio of 2 MiB to allocate");
		folio_set_rcu_free(folio);
		folio_put(folio);
		normal = get_state_synchronize_rcu();
		for_each_possible_cpu(cpu)
			flush_work(&rcu_free_cpu_pcp(cpu)->expedite);
		freed = !waits(folio);
		if (!poll_state_synchronize_rcu(normal)) {
			KUNIT_EXPECT_TRUE(test, freed);
			return;
		}
		KUNIT_ASSERT_TRUE(test, wait_freed(&folio, 1));
	}
	kunit_skip(test, "a normal grace period ended before every check");
}

/*
 * The scripts. Each engine runs them on private storage (struct
 * rcu_free_pcp), whose cookies are steps of a grace period counter the
 * script advances ("gp") and the expedited grace periods advance too. The
 * works are called by the script, not queued: a kick is recorded, and a
 * flush returns what the script says. The first script runs on one CPU's
 * storage, CPU 0's; the second on two, CPU 0's and the last possible
 * CPU's, with none for the CPUs between them.
 *
 * What the scripts cannot see: two engines' calls running at once. They
 * check the order of what one thread does; the stresses (rcu_free_test,
 * pagecache_read_stress) run the engine that is built under real
 * concurrency.
 */
#define SCRIPT_MANY	520	/* 2 MiB of 4K pages and 8 more: they expedite */
#define SCRIPT_AGAIN	33	/* 2 MiB of 64K folios and one more */
#define SCRIPT_AGAIN_ORDER	4

/* The folios of the first script, by the steps that free them. */
enum {
	F_MANY = 4,				/* 5-6: memory short */
	F_DRAIN = F_MANY + SCRIPT_MANY,		/* 7: a drain */
	F_DRAIN_TWO,				/* 9: two, a drain */
	F_TWICE = F_DRAIN_TWO + 2,		/* 10-11: the work twice */
	F_EXPEDITE,				/* 12-14: two, an expedite */
	F_AGAIN = F_EXPEDITE + 2,		/* 15-16: memory short again */
	F_IN_SYNC = F_AGAIN + SCRIPT_AGAIN,	/* 17-18: a work in a drain */
	F_RACED,				/* 19-21: a drain raced */
	F_SIGNAL,				/* 20-21: a drain interrupted */
	SCRIPT_FOLIOS,
};

#define SCRIPT_EVENTS	(5 * SCRIPT_FOLIOS)

enum script_event {
	EV_RELEASE,		/* a folio handed to free_unref_folios() */
	EV_BATCH,		/* the end of a batch handed there */
	EV_ACCOUNT,		/* pages counted waiting (or, negative, no more) */
	EV_KICK,		/* the work of a storage (its index) kicked */
	EV_KICK_EXPEDITE,
	EV_SYNC,		/* an expedited grace period begins */
	EV_EXPEDITED,		/* one counted for the expedite work */
	EV_DRAIN_LOCK,		/* the drain lock: what taking it returned */
	EV_DRAIN_BEGIN,		/* what beginning a drain returned */
	EV_DRAIN_UNLOCK,
	EV_FLUSH,		/* a work flushed: 2 * storage, + 1 the expedite */
	EV_STEP,		/* end of a step: its drain result, then per storage */
				/* its pages and whether it is expediting */
};

struct script_run {
	struct rcu_free_pcp pcp[2];
	unsigned int nr_pcp;	/* storages of the script: 1 or 2 */
	unsigned int cpu;	/* the storage that frees go to */
	struct folio **folios;
	unsigned int nr_folios;
	unsigned long gp;	/* grace periods ended */
	u64 drain_gen;		/* the drain generation */
	int drain_held;		/* the drain lock taken, less released */
	bool drain_raced;	/* a whole drain runs while the next waits */
	bool fatal_signal;	/* the next drain lock is interrupted */
	unsigned int flush_waits; /* flushes that find their work running */
	bool short_of_memory;
	bool work_in_sync;	/* run the work inside the next expedited GP */
	const struct rcu_free_engine *engine;
	long accounted;		/* pages rcu_free_account() counts waiting */
	unsigned int foreign;	/* folios released that were not the script's */
	unsigned int misplaced;	/* calls made with a storage locked, or not */
	unsigned int flushes, syncs, expedite_kicks;
	unsigned int step;
	unsigned int nr;
	struct {
		u8 event;
		u16 step;
		long arg;
	} log[SCRIPT_EVENTS];
	int release_step[SCRIPT_FOLIOS];
};

/* A script: its steps, and the step in which each of its folios is freed. */
struct script {
	unsigned int nr_folios;
	unsigned int nr_pcp;
	void (*run)(struct kunit *test, struct script_run *run,
		    const struct rcu_free_engine *engine);
	int (*expected_step)(int index);
};

static struct script_run *script_run(void)
{
	return kunit_get_current_test()->priv;
}

static void script_log(struct script_run *run, enum script_event event, long arg)
{
	if (WARN_ON_ONCE(run->nr == SCRIPT_EVENTS))
		return;
	run->log[run->nr].event = event;
	run->log[run->nr].step = run->step;
	run->log[run->nr].arg = arg;
	run->nr++;
}

/* Whether spin_is_locked() tells (always false on UP without DEBUG_SPINLOCK). */
#define SCRIPT_SEES_LOCKS	(IS_ENABLED(CONFIG_SMP) || IS_ENABLED(CONFIG_DEBUG_SPINLOCK))

/*
 * Counts a call that must not be made under a storage's lock (with
 * interrupts disabled): one that frees folios, kicks a work or sleeps.
 */
static void script_check_unlocked(struct script_run *run)
{
	unsigned int i;

	for (i = 0; i < run->nr_pcp; i++)
		if (spin_is_locked(&run->pcp[i].lock))
			run->misplaced++;
}

static struct rcu_free_pcp *script_pcp_lock(unsigned long *flags)
{
	struct script_run *run = script_run();
	struct rcu_free_pcp *pcp = &run->pcp[run->cpu];

	spin_lock_irqsave(&pcp->lock, *flags);
	return pcp;
}

/* The second storage is the last possible CPU's: the engines skip a gap. */
static struct rcu_free_pcp *script_cpu_pcp(int cpu)
{
	struct script_run *run = script_run();

	if (!cpu)
		return &run->pcp[0];
	if (run->nr_pcp > 1 && cpu == nr_cpu_ids - 1)
		return &run->pcp[1];
	return NULL;
}

static void script_stamp(struct rcu_free_pcp *pcp)
{
	pcp->open_cookie.norm = script_run()->gp + 1;
	pcp->open_cookie.exp = 0;
}

static bool script_closed_done(struct rcu_free_pcp *pcp)
{
	return script_run()->gp >= pcp->closed_cookie.norm;
}

static void script_end_step(struct script_run *run, long drained);

/*
 * An expedited grace period; with work_in_sync, the work runs first, as if
 * it raced with the expedite or the drain between its close and the grace
 * period: it must free nothing of the lists they just closed.
 */
static void script_synchronize_expedited(void)
{
	struct script_run *run = script_run();

	script_check_unlocked(run);
	run->syncs++;
	script_log(run, EV_SYNC, 0);
	if (run->work_in_sync) {
		run->work_in_sync = false;
		run->engine->work(&run->pcp[0].rwork.work);
		script_end_step(run, 0);
	}
	run->gp++;
}

/*
 * The drains of the script have a generation of their own, and a lock that
 * is only counted: with drain_raced, a whole drain begins and ends while the
 * next one waits for the lock; with fatal_signal, the wait is interrupted.
 */
static u64 script_drain_arrive(void)
{
	return script_run()->drain_gen;
}

static int script_drain_lock(void)
{
	struct script_run *run = script_run();
	int ret = 0;

	if (run->drain_raced) {
		run->drain_raced = false;
		run->drain_gen++;
	}
	if (run->fatal_signal) {
		run->fatal_signal = false;
		ret = -EINTR;
	} else {
		run->drain_held++;
	}
	script_log(run, EV_DRAIN_LOCK, ret);
	return ret;
}

static bool script_drain_begin(u64 arrived)
{
	struct script_run *run = script_run();
	bool begun = run->drain_gen == arrived;

	if (begun)
		run->drain_gen++;
	script_log(run, EV_DRAIN_BEGIN, begun);
	return begun;
}

static void script_drain_unlock(void)
{
	struct script_run *run = script_run();

	run->drain_held--;
	script_log(run, EV_DRAIN_UNLOCK, 0);
}

/* A flush finds its work running while the script says so (flush_waits). */
static bool script_flush(struct work_struct *work)
{
	struct script_run *run = script_run();
	long which = -1;
	unsigned int i;
	bool waited;

	script_check_unlocked(run);
	for (i = 0; i < run->nr_pcp; i++) {
		if (work == &run->pcp[i].rwork.work)
			which = 2 * i;
		else if (work == &run->pcp[i].expedite)
			which = 2 * i + 1;
	}
	script_log(run, EV_FLUSH, which);
	run->flushes++;
	waited = run->flush_waits;
	if (waited)
		run->flush_waits--;
	return waited;
}

/*
 * A folio is counted waiting before its storage is unlocked (a drain may
 * free it right after), and uncounted as it is freed, unlocked.
 */
static void script_account(struct folio *folio, long nr_pages)
{
	struct script_run *run = script_run();

	if (nr_pages < 0)
		script_check_unlocked(run);
	else if (SCRIPT_SEES_LOCKS && !spin_is_locked(&run->pcp[run->cpu].lock))
		run->misplaced++;
	run->accounted += nr_pages;
	script_log(run, EV_ACCOUNT, nr_pages);
}

static void script_count_expedited(void)
{
	script_log(script_run(), EV_EXPEDITED, 0);
}

static bool script_memory_short(struct folio *folio)
{
	return script_run()->short_of_memory;
}

static void script_kick(struct rcu_free_pcp *pcp)
{
	struct script_run *run = script_run();

	script_check_unlocked(run);
	script_log(run, EV_KICK, pcp - run->pcp);
}

static void script_kick_expedite(struct rcu_free_pcp *pcp)
{
	struct script_run *run = script_run();

	script_check_unlocked(run);
	run->expedite_kicks++;
	script_log(run, EV_KICK_EXPEDITE, pcp - run->pcp);
}

static int script_index(struct script_run *run, struct folio *folio)
{
	int i;

	for (i = 0; i < run->nr_folios; i++)
		if (run->folios[i] == folio)
			return i;
	return -1;
}

/* The folios come back to the script, which frees them at the end. */
static void script_release(struct folio_batch *fbatch)
{
	struct script_run *run = script_run();
	unsigned int i;

	script_check_unlocked(run);
	for (i = 0; i < folio_batch_count(fbatch); i++) {
		struct folio *folio = fbatch->folios[i];
		int index = script_index(run, folio);

		script_log(run, EV_RELEASE, index);
		if (index < 0) {
			run->foreign++;
			continue;
		}
		/* Freed twice: no step matches. */
		run->release_step[index] = run->release_step[index] < 0 ?
					   run->step : -2;
		folio_ref_unfreeze(folio, 1);
	}
	script_log(run, EV_BATCH, folio_batch_count(fbatch));
	folio_batch_reinit(fbatch);
}

static void script_defer(struct script_run *run, const struct rcu_free_engine *engine,
			 int index)
{
	struct folio *folio = run->folios[index];

	/* As the page allocator hands it over: flagged, at refcount zero. */
	folio_set_rcu_free(folio);
	if (WARN_ON_ONCE(!folio_ref_freeze(folio, 1)))
		return;
	engine->defer(folio);
}

/* Frees folio @index of the script on the CPU of storage @cpu. */
static void script_defer_on(struct script_run *run, const struct rcu_free_engine *engine,
			    unsigned int cpu, int index)
{
	run->cpu = cpu;
	script_defer(run, engine, index);
	run->cpu = 0;
}

static void script_end_step(struct script_run *run, long drained)
{
	unsigned int i;

	script_log(run, EV_STEP, drained);
	for (i = 0; i < run->nr_pcp; i++) {
		script_log(run, EV_STEP, run->pcp[i].nr_pages);
		script_log(run, EV_STEP, run->pcp[i].expediting);
	}
	run->step++;
}

/*
 * A drain, which must return @result, flush both works of every storage
 * when it runs (@ran) and wait for @syncs expedited grace periods; it ends
 * the step.
 */
static void script_drain(struct kunit *test, struct script_run *run,
			 const struct rcu_free_engine *engine, long result,
			 bool ran, unsigned int syncs)
{
	unsigned int flushes = run->flushes, synced = run->syncs;
	long drained = engine->drain_all();

	KUNIT_EXPECT_EQ_MSG(test, drained, result, "%s engine, step %u",
			    engine->name, run->step);
	KUNIT_EXPECT_EQ_MSG(test, run->flushes - flushes, ran ? 2 * run->nr_pcp : 0,
			    "%s engine, step %u", engine->name, run->step);
	KUNIT_EXPECT_EQ_MSG(test, run->syncs - synced, syncs, "%s engine, step %u",
			    engine->name, run->step);
	script_end_step(run, drained);
}

/*
 * Two steps: @nr folios from @first freed on CPU 0 while memory is short,
 * after which the expedite work must have been kicked @kicks times in all;
 * then that work runs.
 */
static void script_short_of_memory(struct kunit *test, struct script_run *run,
				   const struct rcu_free_engine *engine, int first,
				   int nr, unsigned int kicks)
{
	int i;

	run->short_of_memory = true;
	for (i = first; i < first + nr; i++)
		script_defer(run, engine, i);
	run->short_of_memory = false;
	KUNIT_EXPECT_EQ_MSG(test, run->expedite_kicks, kicks, "%s engine", engine->name);
	script_end_step(run, 0);
	engine->expedite(&run->pcp[0].expedite);
	script_end_step(run, 0);
}

/* The first script, on CPU 0's storage alone. */
static void script_one_cpu(struct kunit *test, struct script_run *run,
			   const struct rcu_free_engine *engine)
{
	struct rcu_work *rwork = &run->pcp[0].rwork;
	int i;

	/* 0: three folios freed, one of order 2. */
	for (i = 0; i < 3; i++)
		script_defer(run, engine, i);
	script_end_step(run, 0);
	/* 1: the work before a grace period: frees nothing, closes open. */
	engine->work(&rwork->work);
	script_end_step(run, 0);
	/* 2: another folio, on open. */
	script_defer(run, engine, 3);
	script_end_step(run, 0);
	/* 3: a grace period; the work frees closed (0-2) and closes 3. */
	run->gp++;
	engine->work(&rwork->work);
	script_end_step(run, 0);
	/* 4: 3 was stamped before that grace period: freed now. */
	engine->work(&rwork->work);
	script_end_step(run, 0);
	/*
	 * 5: memory short: the free that reaches 2 MiB expedites; the frees
	 * after it, while that expedite is pending, do not. 6: the expedite
	 * work frees them all, in batches.
	 */
	script_short_of_memory(test, run, engine, F_MANY, SCRIPT_MANY, 1);
	/* 7: a drain frees a folio on open. */
	script_defer(run, engine, F_DRAIN);
	script_drain(test, run, engine, 1, true, 1);
	/* 8: a drain with nothing waiting: no grace period. */
	script_drain(test, run, engine, 0, true, 0);
	/* 9: a folio on closed, one on open, a grace period: a drain frees both. */
	script_defer(run, engine, F_DRAIN_TWO);
	engine->work(&rwork->work);
	script_defer(run, engine, F_DRAIN_TWO + 1);
	run->gp++;
	script_drain(test, run, engine, 2, true, 1);
	/*
	 * 10: a folio closed by a work, then the work again before a grace
	 * period: its cookie has not passed, nothing is freed.
	 */
	script_defer(run, engine, F_TWICE);
	engine->work(&rwork->work);
	engine->work(&rwork->work);
	script_end_step(run, 0);
	/* 11: after a grace period, the work frees it. */
	run->gp++;
	engine->work(&rwork->work);
	script_end_step(run, 0);
	/*
	 * 12: a folio closed by a work, a grace period that covers it, and a
	 * folio on open after that.
	 */
	script_defer(run, engine, F_EXPEDITE);
	engine->work(&rwork->work);
	run->gp++;
	script_defer(run, engine, F_EXPEDITE + 1);
	script_end_step(run, 0);
	/*
	 * 13: the expedite closes open onto the closed list: both now wait for
	 * the newer cookie. A work between that close and the expedited grace
	 * period frees neither (an engine that kept the older cookie frees
	 * both there); 14: the expedite frees both after its grace period.
	 */
	run->work_in_sync = true;
	engine->expedite(&run->pcp[0].expedite);
	script_end_step(run, 0);
	/*
	 * 15: memory short again, with larger folios: the expedite is done, so
	 * the free that reaches 2 MiB expedites again, once. 16: the expedite
	 * work frees them all.
	 */
	script_short_of_memory(test, run, engine, F_AGAIN, SCRIPT_AGAIN, 2);
	/*
	 * 17: a drain closes a folio on open, and the work runs between that
	 * close and the drain's grace period: it frees nothing; 18: the drain
	 * frees it after its grace period.
	 */
	script_defer(run, engine, F_IN_SYNC);
	run->work_in_sync = true;
	script_drain(test, run, engine, 1, true, 1);
	/*
	 * 19: a folio freed; a whole drain begins and ends while the next one
	 * waits for the lock: that one frees nothing, waits for nothing and
	 * says to look again (1).
	 */
	script_defer(run, engine, F_RACED);
	run->drain_raced = true;
	script_drain(test, run, engine, 1, false, 0);
	/*
	 * 20: a folio freed; a fatal signal interrupts the wait for the drain
	 * lock: nothing is freed, the lock is not released, the drain
	 * returns 0.
	 */
	script_defer(run, engine, F_SIGNAL);
	run->fatal_signal = true;
	script_drain(test, run, engine, 0, false, 0);
	/* 21: a drain frees both. */
	script_drain(test, run, engine, 2, true, 1);
	/*
	 * 22: nothing waits, but a work is still freeing what it took off its
	 * list: the drain waits for it and returns 1 (freed meanwhile).
	 */
	run->flush_waits = 1;
	script_drain(test, run, engine, 1, true, 0);
}

static int script_one_cpu_step(int index)
{
	if (index < 3)
		return 3;
	if (index == 3)
		return 4;
	if (index < F_DRAIN)
		return 6;
	if (index == F_DRAIN)
		return 7;
	if (index < F_TWICE)
		return 9;
	if (index == F_TWICE)
		return 11;
	if (index < F_AGAIN)
		return 14;
	if (index < F_IN_SYNC)
		return 16;
	if (index == F_IN_SYNC)
		return 18;
	return 21;
}

/*
 * The second script: two CPUs' storage, CPU 0's and the last possible
 * CPU's, with none for the CPUs between them.
 */
static void script_two_cpus(struct kunit *test, struct script_run *run,
			    const struct rcu_free_engine *engine)
{
	struct rcu_work *rwork0 = &run->pcp[0].rwork, *rwork1 = &run->pcp[1].rwork;

	/* 0: a folio freed on CPU 0, one of order 2 on the last CPU. */
	script_defer_on(run, engine, 0, 0);
	script_defer_on(run, engine, 1, 1);
	script_end_step(run, 0);
	/*
	 * 1: the last CPU's work closes its folio; a grace period; CPU 0's
	 * work closes its own and frees nothing of the other CPU's.
	 */
	engine->work(&rwork1->work);
	run->gp++;
	engine->work(&rwork0->work);
	script_end_step(run, 0);
	/* 2: the last CPU's work frees its folio. */
	engine->work(&rwork1->work);
	script_end_step(run, 0);
	/*
	 * 3: a folio freed on the last CPU: a drain frees it and CPU 0's
	 * closed one, past the CPUs that have no storage.
	 */
	script_defer_on(run, engine, 1, 2);
	script_drain(test, run, engine, 2, true, 1);
	/* 4: a folio freed on the last CPU: the drain frees it. */
	script_defer_on(run, engine, 1, 3);
	script_drain(test, run, engine, 1, true, 1);
}

static int script_two_cpus_step(int index)
{
	static const int steps[] = { 3, 2, 3, 4 };

	return steps[index];
}

static unsigned int script_order(int index)
{
	if (index == 1)
		return 2;
	if (index >= F_AGAIN && index < F_AGAIN + SCRIPT_AGAIN)
		return SCRIPT_AGAIN_ORDER;
	return 0;
}

static const struct script scripts[] = {
	{
		.nr_folios = SCRIPT_FOLIOS,
		.nr_pcp = 1,
		.run = script_one_cpu,
		.expected_step = script_one_cpu_step,
	},
	{
		.nr_folios = 4,
		.nr_pcp = 2,
		.run = script_two_cpus,
		.expected_step = script_two_cpus_step,
	},
};

/* Runs @script on @engine; returns the log in @run. */
static void run_script(struct kunit *test, const struct script *script,
		       const struct rcu_free_engine *engine, struct script_run *run)
{
	unsigned int noreclaim;
	int i;

	for (i = 0; i < script->nr_pcp; i++) {
		struct rcu_free_pcp *pcp = &run->pcp[i];

		spin_lock_init(&pcp->lock);
		INIT_LIST_HEAD(&pcp->open);
		INIT_LIST_HEAD(&pcp->closed);
		INIT_RCU_WORK(&pcp->rwork, engine->work);
		INIT_WORK(&pcp->expedite, engine->expedite);
	}
	run->nr_pcp = script->nr_pcp;
	for (i = 0; i < SCRIPT_FOLIOS; i++)
		run->release_step[i] = -1;
	run->engine = engine;
	test->priv = run;

	/*
	 * No reclaim on this thread while the stubs are active (activating
	 * them allocates): a page cache folio it freed would go to the
	 * script's storage. The storage stubs go on last and off first.
	 */
	noreclaim = memalloc_noreclaim_save();
	kunit_activate_static_stub(test, rcu_free_pcp_stamp, script_stamp);
	kunit_activate_static_stub(test, rcu_free_pcp_closed_done, script_closed_done);
	kunit_activate_static_stub(test, rcu_free_synchronize_expedited,
				   script_synchronize_expedited);
	kunit_activate_static_stub(test, rcu_free_account, script_account);
	kunit_activate_static_stub(test, rcu_free_count_expedited, script_count_expedited);
	kunit_activate_static_stub(test, rcu_free_memory_short, script_memory_short);
	kunit_activate_static_stub(test, rcu_free_kick, script_kick);
	kunit_activate_static_stub(test, rcu_free_kick_expedite, script_kick_expedite);
	kunit_activate_static_stub(test, rcu_free_release, script_release);
	kunit_activate_static_stub(test, rcu_free_drain_arrive, script_drain_arrive);
	kunit_activate_static_stub(test, rcu_free_drain_lock, script_drain_lock);
	kunit_activate_static_stub(test, rcu_free_drain_begin, script_drain_begin);
	kunit_activate_static_stub(test, rcu_free_drain_unlock, script_drain_unlock);
	kunit_activate_static_stub(test, rcu_free_flush, script_flush);
	kunit_activate_static_stub(test, rcu_free_cpu_pcp, script_cpu_pcp);
	kunit_activate_static_stub(test, rcu_free_pcp_lock, script_pcp_lock);

	script->run(test, run, engine);

	kunit_deactivate_static_stub(test, rcu_free_pcp_lock);
	kunit_deactivate_static_stub(test, rcu_free_cpu_pcp);
	kunit_deactivate_static_stub(test, rcu_free_flush);
	kunit_deactivate_static_stub(test, rcu_free_drain_unlock);
	kunit_deactivate_static_stub(test, rcu_free_drain_begin);
	kunit_deactivate_static_stub(test, rcu_free_drain_lock);
	kunit_deactivate_static_stub(test, rcu_free_drain_arrive);
	kunit_deactivate_static_stub(test, rcu_free_release);
	kunit_deactivate_static_stub(test, rcu_free_kick_expedite);
	kunit_deactivate_static_stub(test, rcu_free_kick);
	kunit_deactivate_static_stub(test, rcu_free_memory_short);
	kunit_deactivate_static_stub(test, rcu_free_count_expedited);
	kunit_deactivate_static_stub(test, rcu_free_account);
	kunit_deactivate_static_stub(test, rcu_free_synchronize_expedited);
	kunit_deactivate_static_stub(test, rcu_free_pcp_closed_done);
	kunit_deactivate_static_stub(test, rcu_free_pcp_stamp);
	memalloc_noreclaim_restore(noreclaim);
}

/* Frees what an engine left on the script's lists, for a failed run. */
static void script_clean(struct script_run *run)
{
	struct folio *folio, *next;
	unsigned int i;

	for (i = 0; i < run->nr_pcp; i++) {
		struct rcu_free_pcp *pcp = &run->pcp[i];

		list_splice_tail_init(&pcp->open, &pcp->closed);
		list_for_each_entry_safe(folio, next, &pcp->closed, lru) {
			list_del(&folio->lru);
			folio_clear_rcu_free(folio);
			folio_ref_unfreeze(folio, 1);
			folio_put(folio);
		}
	}
}

static const struct rcu_free_engine built_engine = {
	.name = IS_ENABLED(CONFIG_PAGE_RCU_FREE_RUST) ? "Rust" : "C",
	.defer = rcu_free_defer,
	.work = rcu_free_work,
	.expedite = rcu_free_expedite,
	.drain_all = rcu_free_drain_all,
};

static const struct rcu_free_engine *const engines[] = {
	&built_engine,
#ifdef CONFIG_PAGE_RCU_FREE_RUST
	&rcu_free_c_engine,
#endif
};

/*
 * Runs @script on every engine built: each frees every folio in the step
 * the mechanism says, and all do the same releases, batches, kicks, drain
 * lock and drain results, in the same order.
 */
static void engines_follow(struct kunit *test, const struct script *script)
{
	struct script_run *runs[ARRAY_SIZE(engines)];
	struct folio **folios;
	int e, i;

	folios = kunit_kcalloc(test, script->nr_folios, sizeof(*folios), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, folios);
	for (e = 0; e < ARRAY_SIZE(engines); e++) {
		const char *name = engines[e]->name;
		struct script_run *run;

		run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, run);
		runs[e] = run;
		/* Allocated before the stubs are on: no reclaim under them. */
		for (i = 0; i < script->nr_folios; i++) {
			folios[i] = folio_alloc(GFP_KERNEL, script_order(i));
			KUNIT_ASSERT_NOT_NULL(test, folios[i]);
		}
		run->folios = folios;
		run->nr_folios = script->nr_folios;
		run_script(test, script, engines[e], run);
		for (i = 0; i < script->nr_folios; i++) {
			/* Freed by the engine, back at refcount one here. */
			if (run->release_step[i] >= 0)
				folio_put(folios[i]);
			KUNIT_EXPECT_EQ_MSG(test, run->release_step[i],
					    script->expected_step(i),
					    "%s engine, folio %d", name, i);
		}
		KUNIT_EXPECT_EQ_MSG(test, run->foreign, 0, "%s engine", name);
		KUNIT_EXPECT_EQ_MSG(test, run->accounted, 0, "%s engine", name);
		KUNIT_EXPECT_EQ_MSG(test, run->drain_held, 0, "%s engine", name);
		KUNIT_EXPECT_EQ_MSG(test, run->misplaced, 0, "%s engine", name);
		for (i = 0; i < script->nr_pcp; i++) {
			KUNIT_EXPECT_EQ_MSG(test, run->pcp[i].nr_pages, 0,
					    "%s engine, storage %d", name, i);
			KUNIT_EXPECT_TRUE_MSG(test, list_empty(&run->pcp[i].open),
					      "%s engine, storage %d", name, i);
			KUNIT_EXPECT_TRUE_MSG(test, list_empty(&run->pcp[i].closed),
					      "%s engine, storage %d", name, i);
		}
		script_clean(run);
	}
	for (e = 1; e < ARRAY_SIZE(engines); e++) {
		KUNIT_EXPECT_EQ(test, runs[e]->nr, runs[0]->nr);
		for (i = 0; i < min(runs[e]->nr, runs[0]->nr); i++) {
			KUNIT_EXPECT_EQ_MSG(test, runs[e]->log[i].event, runs[0]->log[i].event,
					    "event %d", i);
			KUNIT_EXPECT_EQ_MSG(test, runs[e]->log[i].step, runs[0]->log[i].step,
					    "event %d", i);
			KUNIT_EXPECT_EQ_MSG(test, runs[e]->log[i].arg, runs[0]->log[i].arg,
					    "event %d", i);
			if (runs[e]->log[i].event != runs[0]->log[i].event ||
			    runs[e]->log[i].arg != runs[0]->log[i].arg)
				break;
		}
	}
	test->priv = NULL;
}

static void engines_follow_the_script(struct kunit *test)
{
	engines_follow(test, &scripts[0]);
}

static void engines_follow_the_script_on_two_cpus(struct kunit *test)
{
	/* The last possible CPU, with a CPU that has no storage before it. */
	if (nr_cpu_ids < 3)
		kunit_skip(test, "fewer than 3 possible CPUs");
	engines_follow(test, &scripts[1]);
}

static struct kunit_case rcu_free_cases[] = {
	KUNIT_CASE(flagged_waits_for_a_grace_period),
	KUNIT_CASE(drain_all_with_a_normal_grace_period_in_flight),
	KUNIT_CASE(unflagged_is_freed_at_once),
	KUNIT_CASE(batches_drain),
	KUNIT_CASE(expedites_when_memory_runs_short),
	KUNIT_CASE(engines_follow_the_script),
	KUNIT_CASE(engines_follow_the_script_on_two_cpus),
	{}
};

static struct kunit_suite rcu_free_suite = {
	.name = "rcu_free",
	.test_cases = rcu_free_cases,
};

kunit_test_suite(rcu_free_suite);

MODULE_DESCRIPTION("KUnit tests of the deferred free of PG_rcu_free folios");
MODULE_LICENSE("GPL");
