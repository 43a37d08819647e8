// SPDX-License-Identifier: GPL-2.0
/*
 * The deferred free of PG_rcu_free folios, in C.
 *
 * A folio with PG_rcu_free may be read by a lockless page cache reader that
 * found it under rcu_read_lock() and took no reference. When its reference
 * count reaches zero, the page allocator's free paths hand it here instead
 * of freeing it, and it is freed once an RCU grace period that started after
 * that has passed: no reader can still see it then.
 *
 * Each CPU keeps two lists. "open" takes the folios freed on the CPU, with
 * the full RCU cookie (get_state_synchronize_rcu_full()) taken at the latest
 * addition: a grace period that satisfies it covers every folio on the list,
 * and an expedited one does too. "closed" holds the folios of an earlier
 * "open", with its cookie. The CPU's rcu_work runs after a grace period: it
 * frees "closed" if its cookie has passed, moves "open" to "closed" once
 * "closed" is empty and queues itself again while anything waits. A folio
 * waits one or two grace periods, and a steady stream of frees cannot keep a
 * list from ever being freed. Documentation/mm/rcu_free.rst describes the
 * mechanism; mm/tests/rcu_free_kunit.c tests it.
 *
 * With CONFIG_PAGE_RCU_FREE_RUST, mm/rcu_free_rust.rs is the engine
 * instead. It is this file function for function: the same lists and
 * cookies (struct rcu_free_pcp, mm/rcu_free.h), works, expedite and drain
 * protocol. This file is then built for the KUnit suite only, which runs
 * scripts through both and checks that they make the same calls in the same
 * order; a change to one engine changes the other in the same patch.
 */
#include <linux/mm.h>
#include <linux/folio_batch.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/workqueue.h>

#include "rcu_free.h"

/* The storage of the first CPU from *@cpu on that has one, or NULL. */
static struct rcu_free_pcp *rcu_free_next_pcp(int *cpu)
{
	for (; *cpu < nr_cpu_ids; (*cpu)++) {
		struct rcu_free_pcp *pcp = rcu_free_cpu_pcp(*cpu);

		if (pcp)
			return pcp;
	}
	return NULL;
}

/* Each CPU's storage, skipping the CPUs that have none. */
#define for_each_rcu_free_pcp(cpu, pcp)					\
	for ((cpu) = 0; ((pcp) = rcu_free_next_pcp(&(cpu))); (cpu)++)

/*
 * Pages a CPU may hold before it expedites the grace period when memory runs
 * short: 2 MiB whatever the page size.
 */
#define RCU_FREE_EXPEDITE_PAGES	(SZ_2M / PAGE_SIZE)

/*
 * Adds @folio, whose reference count is zero, to the open list of @pcp,
 * locked, with a cookie that covers it. Accounted before the lock is
 * dropped: a drain may free it right after.
 */
static void rcu_free_pcp_add(struct rcu_free_pcp *pcp, struct folio *folio)
{
	long nr = folio_nr_pages(folio);

	list_add_tail(&folio->lru, &pcp->open);
	rcu_free_pcp_stamp(pcp);
	pcp->nr_pages += nr;
	rcu_free_account(folio, nr);
}

/* Moves all of the open list to the closed one, under its newer cookie. */
static void rcu_free_pcp_close(struct rcu_free_pcp *pcp)
{
	if (list_empty(&pcp->open))
		return;
	list_splice_tail_init(&pcp->open, &pcp->closed);
	pcp->closed_cookie = pcp->open_cookie;
}

/*
 * Moves up to a batch of folios off the closed list of @pcp, locked, to
 * @fbatch if its grace period has passed. Returns the pages it took.
 */
static unsigned long rcu_free_pcp_take_done(struct rcu_free_pcp *pcp,
					    struct folio_batch *fbatch)
{
	unsigned long taken = 0;

	if (list_empty(&pcp->closed) || !rcu_free_pcp_closed_done(pcp))
		return 0;
	while (folio_batch_space(fbatch)) {
		struct folio *folio;

		folio = list_first_entry_or_null(&pcp->closed, struct folio, lru);
		if (!folio)
			break;
		list_del(&folio->lru);
		folio_batch_add(fbatch, folio);
		taken += folio_nr_pages(folio);
	}
	pcp->nr_pages -= taken;
	return taken;
}

/* Frees a batch taken off a closed list whose grace period has passed. */
static void rcu_free_batch(struct folio_batch *fbatch)
{
	unsigned int i;

	for (i = 0; i < folio_batch_count(fbatch); i++) {
		struct folio *folio = fbatch->folios[i];

		folio_clear_rcu_free(folio);
		rcu_free_account(folio, -folio_nr_pages(folio));
	}
	rcu_free_release(fbatch);
}

/*
 * Frees what @pcp holds whose grace period has passed, a batch at a time,
 * yielding after each. Returns the pages freed. May sleep.
 */
static unsigned long rcu_free_done(struct rcu_free_pcp *pcp)
{
	struct folio_batch fbatch;
	unsigned long freed = 0;

	folio_batch_init(&fbatch);
	for (;;) {
		unsigned long flags, taken;

		rcu_free_pcp_lock_cpu(pcp, &flags);
		taken = rcu_free_pcp_take_done(pcp, &fbatch);
		rcu_free_pcp_unlock(pcp, flags);
		if (!taken)
			return freed;
		freed += taken;
		rcu_free_batch(&fbatch);
		cond_resched();
	}
}

static void rcu_free_c_defer(struct folio *folio)
{
	struct rcu_free_pcp *pcp;
	unsigned long flags;
	bool expedite;

	pcp = rcu_free_pcp_lock(&flags);
	rcu_free_pcp_add(pcp, folio);
	/*
	 * One expedite at a time per CPU: it takes all the CPU holds, and the
	 * next one is queued by a free after it is done that finds 2 MiB
	 * waiting (which may have come during its grace period).
	 */
	expedite = !pcp->expediting &&
		   pcp->nr_pages >= RCU_FREE_EXPEDITE_PAGES &&
		   rcu_free_memory_short(folio);
	if (expedite)
		pcp->expediting = true;
	rcu_free_pcp_unlock(pcp, flags);
	/* From here on a drain on another CPU may free the folio. */
	rcu_free_kick(pcp);
	if (expedite)
		rcu_free_kick_expedite(pcp);
}

static void rcu_free_c_work(struct work_struct *work)
{
	struct rcu_free_pcp *pcp = container_of(to_rcu_work(work),
						struct rcu_free_pcp, rwork);
	unsigned long flags;
	bool pending;

	rcu_free_done(pcp);
	rcu_free_pcp_lock_cpu(pcp, &flags);
	if (list_empty(&pcp->closed))
		rcu_free_pcp_close(pcp);
	pending = !list_empty(&pcp->closed);
	rcu_free_pcp_unlock(pcp, flags);
	if (pending)
		rcu_free_kick(pcp);
}

static void rcu_free_c_expedite(struct work_struct *work)
{
	struct rcu_free_pcp *pcp = container_of(work, struct rcu_free_pcp,
						expedite);
	unsigned long flags;

	rcu_free_pcp_lock_cpu(pcp, &flags);
	rcu_free_pcp_close(pcp);
	rcu_free_pcp_unlock(pcp, flags);
	rcu_free_synchronize_expedited();
	rcu_free_count_expedited();
	rcu_free_done(pcp);
	rcu_free_pcp_lock_cpu(pcp, &flags);
	pcp->expediting = false;
	rcu_free_pcp_unlock(pcp, flags);
}

/*
 * Waits for the works of every CPU that run or are queued to run: what they
 * took off their lists is free when it returns. Returns whether it waited.
 * A work still waiting for its grace period (the call_rcu() stage of
 * queue_rcu_work()) is not waited for: it has taken nothing off its list.
 */
static bool rcu_free_flush_works(void)
{
	struct rcu_free_pcp *pcp;
	bool waited = false;
	int cpu;

	for_each_rcu_free_pcp(cpu, pcp) {
		waited |= rcu_free_flush(&pcp->rwork.work);
		waited |= rcu_free_flush(&pcp->expedite);
	}
	return waited;
}

static unsigned long rcu_free_c_drain_all(void)
{
	u64 arrived = rcu_free_drain_arrive();
	struct rcu_free_pcp *pcp;
	unsigned long freed = 0;
	bool waiting = false;
	int cpu;

	if (rcu_free_drain_lock())
		return 0;	/* a fatal signal */
	if (!rcu_free_drain_begin(arrived)) {
		/* A whole drain began after the caller arrived: look again. */
		rcu_free_drain_unlock();
		return 1;
	}
	for_each_rcu_free_pcp(cpu, pcp) {
		unsigned long flags;

		rcu_free_pcp_lock_cpu(pcp, &flags);
		rcu_free_pcp_close(pcp);
		waiting |= !list_empty(&pcp->closed);
		rcu_free_pcp_unlock(pcp, flags);
	}
	if (waiting) {
		rcu_free_synchronize_expedited();
		for_each_rcu_free_pcp(cpu, pcp)
			freed += rcu_free_done(pcp);
	}
	/*
	 * A work may have taken a batch off its list before we looked, or the
	 * expedite work closed a list again under a newer cookie: wait for them.
	 */
	if (rcu_free_flush_works() && !freed)
		freed = 1;
	rcu_free_drain_unlock();
	return freed;
}

#ifndef CONFIG_PAGE_RCU_FREE_RUST
/* The entry points of mm/rcu_free.h: see there and mm/rcu_free_rust.rs. */
void rcu_free_defer(struct folio *folio)
{
	rcu_free_c_defer(folio);
}

void rcu_free_work(struct work_struct *work)
{
	rcu_free_c_work(work);
}

void rcu_free_expedite(struct work_struct *work)
{
	rcu_free_c_expedite(work);
}

unsigned long rcu_free_drain_all(void)
{
	return rcu_free_c_drain_all();
}
#endif

#if defined(CONFIG_PAGE_RCU_FREE_RUST) && defined(CONFIG_PAGE_RCU_FREE_KUNIT_TEST)
/* Built beside the Rust engine for the KUnit suite, which runs both. */
const struct rcu_free_engine rcu_free_c_engine = {
	.name = "C",
	.defer = rcu_free_c_defer,
	.work = rcu_free_c_work,
	.expedite = rcu_free_c_expedite,
	.drain_all = rcu_free_c_drain_all,
};
#endif
