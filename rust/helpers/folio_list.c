// SPDX-License-Identifier: GPL-2.0

#include <linux/mm.h>
#include <linux/page-flags.h>

__rust_helper void rust_helper_folio_clear_rcu_free(struct folio *folio)
{
	folio_clear_rcu_free(folio);
}
