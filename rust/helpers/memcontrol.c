// SPDX-License-Identifier: GPL-2.0

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
