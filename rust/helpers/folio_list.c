// SPDX-License-Identifier: GPL-2.0

#include <linux/list.h>
#include <linux/mm.h>
#include <linux/page-flags.h>

__rust_helper bool rust_helper_folio_test_rcu_free(const struct folio *folio)
{
	return folio_test_rcu_free(folio);
}

__rust_helper void rust_helper_folio_set_rcu_free(struct folio *folio)
{
	folio_set_rcu_free(folio);
}

__rust_helper void rust_helper_folio_clear_rcu_free(struct folio *folio)
{
	folio_clear_rcu_free(folio);
}

__rust_helper void rust_helper_folio_list_add_tail(struct folio *folio, struct list_head *head)
{
	list_add_tail(&folio->lru, head);
}

__rust_helper struct folio *rust_helper_folio_list_pop(struct list_head *head)
{
	struct folio *folio = list_first_entry_or_null(head, struct folio, lru);

	if (folio)
		list_del(&folio->lru);
	return folio;
}
