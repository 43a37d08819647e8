// SPDX-License-Identifier: GPL-2.0

#include <linux/lockdep.h>
#include <linux/memcontrol.h>

__rust_helper bool rust_helper_folio_matches_lruvec(struct folio *folio, struct lruvec *lruvec)
{
	return folio_matches_lruvec(folio, lruvec);
}

#ifndef CONFIG_MEMCG
/* A function in mm/memcontrol.c with CONFIG_MEMCG. */
__rust_helper struct lruvec *rust_helper_folio_lruvec_lock_irq_disable(struct folio *folio)
{
	return folio_lruvec_lock_irq_disable(folio);
}
#endif

__rust_helper void rust_helper_lruvec_unlock_irq_enable(struct lruvec *lruvec)
{
	lruvec_unlock_irq_enable(lruvec);
}

#ifdef CONFIG_LOCKDEP
__rust_helper int rust_helper_lruvec_lock_is_held(struct lruvec *lruvec)
{
	return lockdep_is_held(&lruvec->lru_lock);
}
#endif
