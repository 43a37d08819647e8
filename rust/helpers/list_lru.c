// SPDX-License-Identifier: GPL-2.0

#include <linux/list_lru.h>
#include <linux/spinlock.h>

/*
 * list_lru_lock() with the counted interrupt disable of spin_lock_irq_disable(), which lets the
 * Rust guard be dropped in any order with other such guards (SpinLockIrq); as there, interrupts
 * stay enabled on PREEMPT_RT, where the sublist lock sleeps.
 */
__rust_helper struct list_lru_one *
rust_helper_list_lru_lock_irq_disable(struct list_lru *lru, int nid, struct mem_cgroup **memcg)
{
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		local_interrupt_disable();
	return list_lru_lock(lru, nid, memcg);
}

/* In the order of spin_unlock_irq_enable(): interrupts on before the preemption check. */
__rust_helper void rust_helper_list_lru_unlock_irq_enable(struct list_lru_one *l)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT)) {
		list_lru_unlock(l);
		return;
	}
	preempt_disable();
	list_lru_unlock(l);
	local_interrupt_enable();
	preempt_enable();
}
