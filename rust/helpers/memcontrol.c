// SPDX-License-Identifier: GPL-2.0

#include <linux/lockdep.h>
#include <linux/memcontrol.h>

__rust_helper bool rust_helper_mem_cgroup_disabled(void)
{
	return mem_cgroup_disabled();
}

__rust_helper struct mem_cgroup *rust_helper_folio_memcg_check(struct folio *folio)
{
	return folio_memcg_check(folio);
}

__rust_helper bool rust_helper_folio_memcg_charged(struct folio *folio)
{
	return folio_memcg_charged(folio);
}

__rust_helper int rust_helper_mem_cgroup_charge(struct folio *folio, struct mm_struct *mm,
						gfp_t gfp)
{
	return mem_cgroup_charge(folio, mm, gfp);
}

__rust_helper bool rust_helper_folio_matches_lruvec(struct folio *folio, struct lruvec *lruvec)
{
	return folio_matches_lruvec(folio, lruvec);
}

/* 1 if held, 0 if not, -1 if lockdep cannot tell (off, or disabled by a taint). */
__rust_helper int rust_helper_lruvec_lock_is_held(struct lruvec *lruvec)
{
#ifdef CONFIG_LOCKDEP
	return lockdep_is_held(&lruvec->lru_lock);
#else
	return -1;
#endif
}

/*
 * folio_lruvec_lock_irq() with the counted interrupt disable of spin_lock_irq_disable(), which
 * lets the Rust guard be dropped in any order with other such guards (SpinLockIrq). NULL, with
 * nothing held, for a folio that is not charged while memcg is enabled: it has no lruvec, and
 * the loop below would never end. The memcg is read once per try: the Rust caller holds a
 * reference to the folio but need not keep its memcg binding stable (C's callers do, by the
 * folio lock or isolation), and mem_cgroup_migrate() may clear it meanwhile; folio_lruvec()
 * would read it again and warn if it found it cleared.
 */
__rust_helper struct lruvec *rust_helper_folio_lruvec_lock_irq_disable(struct folio *folio)
{
	struct mem_cgroup *memcg;
	struct lruvec *lruvec;

	rcu_read_lock();
retry:
	memcg = folio_memcg(folio);
	if (!mem_cgroup_disabled() && !memcg) {
		rcu_read_unlock();
		return NULL;
	}
	lruvec = mem_cgroup_lruvec(memcg, folio_pgdat(folio));
	spin_lock_irq_disable(&lruvec->lru_lock);
	if (unlikely(lruvec_memcg(lruvec) != folio_memcg(folio))) {
		spin_unlock_irq_enable(&lruvec->lru_lock);
		goto retry;
	}
	return lruvec;
}

__rust_helper void rust_helper_lruvec_unlock_irq_enable(struct lruvec *lruvec)
{
	spin_unlock_irq_enable(&lruvec->lru_lock);
	rcu_read_unlock();
}
