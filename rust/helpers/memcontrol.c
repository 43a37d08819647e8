// SPDX-License-Identifier: GPL-2.0

#include <linux/lockdep.h>
#include <linux/memcontrol.h>

__rust_helper bool rust_helper_mem_cgroup_disabled(void)
{
	return mem_cgroup_disabled();
}

__rust_helper struct mem_cgroup *rust_helper_folio_memcg(struct folio *folio)
{
	return folio_memcg(folio);
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

__rust_helper void rust_helper_mem_cgroup_uncharge(struct folio *folio)
{
	mem_cgroup_uncharge(folio);
}

#ifndef CONFIG_MEMCG
/* Out of line with CONFIG_MEMCG. */
__rust_helper struct lruvec *rust_helper_folio_lruvec_lock_irq(struct folio *folio)
{
	return folio_lruvec_lock_irq(folio);
}

__rust_helper struct lruvec *rust_helper_folio_lruvec_lock_irqsave(struct folio *folio,
								   unsigned long *flags)
{
	return folio_lruvec_lock_irqsave(folio, flags);
}
#endif

__rust_helper void rust_helper_lruvec_unlock_irq(struct lruvec *lruvec)
{
	lruvec_unlock_irq(lruvec);
}

__rust_helper void rust_helper_lruvec_unlock_irqrestore(struct lruvec *lruvec,
							unsigned long flags)
{
	lruvec_unlock_irqrestore(lruvec, flags);
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
