// SPDX-License-Identifier: GPL-2.0

#include <linux/compiler.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/page-flags.h>

__rust_helper struct folio *rust_helper_folio_alloc(gfp_t gfp, unsigned int order)
{
	return folio_alloc(gfp, order);
}

__rust_helper struct folio *rust_helper___folio_alloc_node(gfp_t gfp, unsigned int order, int nid)
{
	return __folio_alloc_node(gfp, order, nid);
}

__rust_helper unsigned int rust_helper_folio_order(const struct folio *folio)
{
	return folio_order(folio);
}

__rust_helper int rust_helper_folio_nid(const struct folio *folio)
{
	return folio_nid(folio);
}

__rust_helper int rust_helper_folio_ref_count(const struct folio *folio)
{
	return folio_ref_count(folio);
}

__rust_helper void rust_helper_folio_put(struct folio *folio)
{
	folio_put(folio);
}

__rust_helper bool rust_helper_folio_put_testzero(struct folio *folio)
{
	return folio_put_testzero(folio);
}

__rust_helper void rust_helper_folio_ref_unfreeze(struct folio *folio, int count)
{
	folio_ref_unfreeze(folio, count);
}

__rust_helper bool rust_helper_folio_test_large_rmappable(const struct folio *folio)
{
	return folio_test_large_rmappable(folio);
}

#ifdef CONFIG_TRANSPARENT_HUGEPAGE
__rust_helper bool rust_helper_folio_test_partially_mapped(const struct folio *folio)
{
	return folio_test_partially_mapped(folio);
}

__rust_helper void rust_helper_folio_clear_partially_mapped(struct folio *folio)
{
	folio_clear_partially_mapped(folio);
}

/* Whether the folio's deferred split link is empty, read without the lock. */
__rust_helper bool rust_helper_folio_deferred_list_empty_racy(struct folio *folio)
{
	/*
	 * Races with the plain stores of list_add(), list_del_init() and the
	 * list_splice_init() of memcg reparenting, which Rust cannot mark as
	 * the data race it tolerates: none of them changes whether the link is
	 * empty except under the sublist's lock.
	 */
	return data_race(list_empty(&folio->_deferred_list));
}
#endif
