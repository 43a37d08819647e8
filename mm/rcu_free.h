/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The deferred free of PG_rcu_free folios: what the page allocator calls,
 * and what its engine needs of the page allocator (its per-CPU storage and
 * the shims around it, in mm/page_alloc.c). The engine is mm/rcu_free.c,
 * or mm/rcu_free_rust.rs with CONFIG_PAGE_RCU_FREE_RUST; both implement
 * the same mechanism on the same storage.
 */
#ifndef __MM_RCU_FREE_H
#define __MM_RCU_FREE_H

#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/spinlock_types.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct folio;
struct folio_batch;

#ifdef CONFIG_PAGE_RCU_FREE
/**
 * struct rcu_free_pcp - Folios waiting on one CPU for an RCU grace period.
 * @lock: Protects the lists, the cookies, @nr_pages and @expediting. Taken
 *	with interrupts disabled: folios are freed from any context but NMI.
 * @open: Folios with PG_rcu_free freed on this CPU since @closed was
 *	filled, linked by their lru.
 * @closed: Folios that can be freed once @closed_cookie has passed.
 * @open_cookie: get_state_synchronize_rcu_full() at the latest addition to
 *	@open: a grace period that satisfies it covers all of @open. A full
 *	cookie, so that an expedited grace period satisfies it too.
 * @closed_cookie: The same for @closed.
 * @nr_pages: Pages on @open and @closed.
 * @expediting: @expedite is queued or running: no other is queued meanwhile.
 * @rwork: Frees @closed and closes @open, after a grace period.
 * @expedite: Frees both lists after an expedited grace period.
 *
 * The per-CPU storage of the engine (mm/rcu_free.c or mm/rcu_free_rust.rs).
 */
struct rcu_free_pcp {
	spinlock_t lock;	/* protects all below but the works */
	struct list_head open;
	struct list_head closed;
	struct rcu_gp_seq open_cookie;
	struct rcu_gp_seq closed_cookie;
	unsigned long nr_pages;
	bool expediting;
	struct rcu_work rwork;
	struct work_struct expedite;
};

/* The per-CPU storage, in mm/page_alloc.c. */
struct rcu_free_pcp *rcu_free_pcp_lock(unsigned long *flags);
struct rcu_free_pcp *rcu_free_cpu_pcp(int cpu);
void rcu_free_pcp_lock_cpu(struct rcu_free_pcp *pcp, unsigned long *flags);
void rcu_free_pcp_unlock(struct rcu_free_pcp *pcp, unsigned long flags);
void rcu_free_pcp_stamp(struct rcu_free_pcp *pcp);
bool rcu_free_pcp_closed_done(struct rcu_free_pcp *pcp);
void rcu_free_synchronize_expedited(void);
u64 rcu_free_drain_arrive(void);
int rcu_free_drain_lock(void);
bool rcu_free_drain_begin(u64 arrived);
void rcu_free_drain_unlock(void);
void rcu_free_account(struct folio *folio, long nr_pages);
void rcu_free_count_expedited(void);
bool rcu_free_memory_short(struct folio *folio);
void rcu_free_kick(struct rcu_free_pcp *pcp);
void rcu_free_kick_expedite(struct rcu_free_pcp *pcp);
void rcu_free_release(struct folio_batch *fbatch);
bool rcu_free_flush(struct work_struct *work);

/* The engine: mm/rcu_free.c, or mm/rcu_free_rust.rs. */
void rcu_free_defer(struct folio *folio);
void rcu_free_work(struct work_struct *work);
void rcu_free_expedite(struct work_struct *work);
unsigned long rcu_free_drain_all(void);

#ifdef CONFIG_PAGE_RCU_FREE_KUNIT_TEST
bool rcu_free_pcp_holds(struct rcu_free_pcp *pcp, struct folio *folio);

/* An engine's entry points, for the KUnit suite that compares engines. */
struct rcu_free_engine {
	const char *name;
	void (*defer)(struct folio *folio);
	work_func_t work;
	work_func_t expedite;
	unsigned long (*drain_all)(void);
};

#ifdef CONFIG_PAGE_RCU_FREE_RUST
/* The C engine, built beside the Rust one for the comparison. */
extern const struct rcu_free_engine rcu_free_c_engine;
#endif
#endif
#else
static inline unsigned long rcu_free_drain_all(void)
{
	return 0;
}
#endif

#endif /* __MM_RCU_FREE_H */
