// SPDX-License-Identifier: GPL-2.0
/*
 * rcu_hold: a test module of the guest (`make module`), never mailed. A write
 * of N to /sys/kernel/debug/rcu_hold_ms holds rcu_read_lock() for N
 * milliseconds (at most 10000) in the writing task, spinning: every grace
 * period that starts meanwhile waits for it. rcu_free_test uses it to keep
 * soft offline in its synchronize_rcu() while memory offline runs.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/rcupdate.h>

#define RCU_HOLD_MAX_MS	10000

static struct dentry *rcu_hold_file;

static ssize_t rcu_hold_write(struct file *file, const char __user *buf,
			      size_t count, loff_t *ppos)
{
	unsigned int ms;
	int ret;

	ret = kstrtouint_from_user(buf, count, 0, &ms);
	if (ret)
		return ret;
	if (ms > RCU_HOLD_MAX_MS)
		return -EINVAL;
	rcu_read_lock();
	while (ms--)
		udelay(1000);
	rcu_read_unlock();
	return count;
}

static const struct file_operations rcu_hold_fops = {
	.owner = THIS_MODULE,
	.write = rcu_hold_write,
	.llseek = noop_llseek,
};

static int __init rcu_hold_init(void)
{
	rcu_hold_file = debugfs_create_file("rcu_hold_ms", 0200, NULL, NULL,
					    &rcu_hold_fops);
	return PTR_ERR_OR_ZERO(rcu_hold_file);
}

static void __exit rcu_hold_exit(void)
{
	debugfs_remove(rcu_hold_file);
}

module_init(rcu_hold_init);
module_exit(rcu_hold_exit);
MODULE_DESCRIPTION("Hold rcu_read_lock() for a while, from debugfs (test helper)");
MODULE_LICENSE("GPL");
