// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the lockless page cache reads of filemap_read().
 *
 * Included from mm/filemap.c, so that the tests can reach the window
 * between the copy and the checks of filemap_read_nolock(): a static stub
 * of filemap_read_nolock_window() makes the reader lose a race there, and
 * the read must then return what the normal path returns, not the bytes it
 * copied. Each test runs on a file of an internal ramfs mount (filemap_read())
 * and on a shmem file (shmem_file_read_iter()).
 *
 * A second suite checks that the folios these reads make wait for a grace
 * period before they are freed do not look unmovable to page isolation,
 * and that soft offline and memory failure take a page that waits.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/kthread.h>
#include <linux/mount.h>
#include <linux/page-isolation.h>
#include <linux/ramfs.h>
#include <linux/shmem_fs.h>

#include "../page_alloc.h"

#define FNK_SIZE	64

struct filemap_nolock_test {
	struct vfsmount *mnt;	/* the ramfs mount, or NULL for shmem */
	struct file *file;
	struct folio *folio;	/* the folio at index 0, a reference held */
	unsigned int windows;	/* copies that reached the checks */
	struct folio *copied;	/* the folio of the last of them */
	unsigned int done;	/* copies that passed the checks */
	void (*race)(struct filemap_nolock_test *t, struct folio *folio);
};

/*
 * Between the copy and the checks, under rcu_read_lock(): nothing that may
 * sleep, so no KUNIT_EXPECT_*() here either.
 */
static void filemap_nolock_window_stub(struct folio *folio)
{
	struct filemap_nolock_test *t = kunit_get_current_test()->priv;

	t->copied = folio;
	t->windows++;
	if (t->race)
		t->race(t, folio);
}

/* After the checks, once the read is done: it was copied without a reference. */
static void filemap_nolock_done_stub(void)
{
	struct filemap_nolock_test *t = kunit_get_current_test()->priv;

	t->done++;
}

static const char * const filemap_nolock_fs[] = { "ramfs", "shmem" };

static void filemap_nolock_fs_desc(const char * const *fs, char *desc)
{
	strscpy(desc, *fs, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(filemap_nolock_fs, filemap_nolock_fs, filemap_nolock_fs_desc);

/* A file of an internal ramfs mount, read by filemap_read(). */
static int fnk_ramfs_file(struct filemap_nolock_test *t)
{
	struct file_system_type *type = get_fs_type("ramfs");
	struct inode *inode;

	if (!type)
		return -ENODEV;
	t->mnt = kern_mount(type);
	put_filesystem(type);
	if (IS_ERR(t->mnt))
		return PTR_ERR(t->mnt);
	inode = ramfs_get_inode(t->mnt->mnt_sb, NULL, S_IFREG | 0600, 0);
	if (!inode)
		goto unmount;
	t->file = alloc_file_pseudo(inode, t->mnt, "filemap_nolock_kunit",
				    O_RDWR, &ramfs_file_operations);
	if (IS_ERR(t->file)) {
		iput(inode);
		goto unmount;
	}
	return 0;

unmount:
	kern_unmount(t->mnt);
	return -ENOMEM;
}

static void fnk_put_file(struct filemap_nolock_test *t)
{
	fput(t->file);
	if (t->mnt)
		kern_unmount(t->mnt);
}

/* Reads @len bytes at @pos; returns what read returned. */
static ssize_t fnk_read(struct filemap_nolock_test *t, char *buf, size_t len, loff_t pos)
{
	memset(buf, 0x5a, len);
	return kernel_read(t->file, buf, len, &pos);
}

/*
 * One read copied without a reference since @before. The checks after the
 * copy come after the window stub: only the count of reads that passed them
 * (t->done) tells such a read from one undone and read again by the normal
 * path.
 */
static void fnk_expect_copied(struct kunit *test, unsigned int before)
{
	struct filemap_nolock_test *t = test->priv;

	KUNIT_EXPECT_EQ(test, t->done, before + 1);
}

/* Whether the next read of the file may be tried without a reference. */
static bool fnk_nolock(struct filemap_nolock_test *t)
{
	return READ_ONCE(t->file->f_ra.nolock);
}

static int filemap_nolock_test_init(struct kunit *test)
{
	const char * const *fs = test->param_value;
	struct filemap_nolock_test *t;
	char buf[FNK_SIZE];
	loff_t pos = 0;
	int i, ret;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	if (!strcmp(*fs, "ramfs")) {
		ret = fnk_ramfs_file(t);
		if (ret)
			return ret;
	} else {
		t->file = shmem_kernel_file_setup("filemap_nolock_kunit", 0,
						  mk_vma_flags(VMA_NORESERVE_BIT));
		if (IS_ERR(t->file))
			return PTR_ERR(t->file);
	}

	for (i = 0; i < FNK_SIZE; i++)
		buf[i] = 'a' + i % 26;
	if (kernel_write(t->file, buf, FNK_SIZE, &pos) != FNK_SIZE)
		goto put;
	t->folio = filemap_get_folio(t->file->f_mapping, 0);
	if (IS_ERR(t->folio))
		goto put;
	/*
	 * Hot, as reads leave it: reads until the read path finds the folio as
	 * accessed as the LRU records and sets PG_rcu_free (on ramfs, an
	 * unevictable folio). Each read starts where the last one did not end,
	 * so that it marks the folio accessed. The drains take it out of the
	 * per-CPU LRU batches, which hold references: the tests compare
	 * reference counts.
	 */
	for (i = 0; i < 8 && !folio_test_rcu_free(t->folio); i++) {
		lru_add_drain_all();
		t->file->f_ra.prev_pos = -1;
		if (fnk_read(t, buf, 16, 0) != 16)
			break;
	}
	/*
	 * One more read, from where the last one ended, so that it marks
	 * nothing: through the normal path, it sets f_ra.nolock now that the
	 * drained folio reads as hot. The tests' first read marks the folio
	 * accessed again.
	 */
	lru_add_drain_all();
	fnk_read(t, buf, 16, 16);
	t->file->f_ra.prev_pos = -1;
	if (!folio_test_rcu_free(t->folio) || !filemap_nolock_hot(t->folio) ||
	    !fnk_nolock(t)) {
		kunit_err(test, "reads did not make the folio hot: flags %#lx, f_ra.nolock %d\n",
			  t->folio->flags.f, fnk_nolock(t));
		folio_put(t->folio);
		fnk_put_file(t);
		return -EAGAIN;
	}

	test->priv = t;
	kunit_activate_static_stub(test, filemap_read_nolock_window,
				   filemap_nolock_window_stub);
	kunit_activate_static_stub(test, filemap_read_nolock_done,
				   filemap_nolock_done_stub);
	return 0;

put:
	fnk_put_file(t);
	return -ENOMEM;
}

static void filemap_nolock_test_exit(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;

	/* Nothing to undo after a failed init. */
	if (!t)
		return;
	kunit_deactivate_static_stub(test, filemap_read_nolock_window);
	if (t->folio)
		folio_put(t->folio);
	fnk_put_file(t);
}

static bool fnk_is_pattern(const char *buf, size_t len, loff_t pos)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != 'a' + (pos + i) % 26)
			return false;
	return true;
}

static bool fnk_is_zero(const char *buf, size_t len)
{
	return !memchr_inv(buf, 0, len);
}

/* A read of a flagged, uptodate folio is copied without a reference. */
static void filemap_nolock_read_hit(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	int refs = folio_ref_count(t->folio);
	unsigned int copied = t->done;
	char buf[16];

	KUNIT_ASSERT_EQ(test, fnk_read(t, buf, sizeof(buf), 8), sizeof(buf));
	fnk_expect_copied(test, copied);
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf, sizeof(buf), 8));
	KUNIT_EXPECT_EQ(test, t->windows, 1);
	KUNIT_EXPECT_PTR_EQ(test, t->copied, t->folio);
	KUNIT_EXPECT_EQ(test, folio_ref_count(t->folio), refs);
}

/* A folio without PG_rcu_free takes the normal path. */
static void filemap_nolock_read_unflagged(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	char buf[16];

	folio_clear_rcu_free(t->folio);
	KUNIT_ASSERT_EQ(test, fnk_read(t, buf, sizeof(buf), 0), sizeof(buf));
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf, sizeof(buf), 0));
	KUNIT_EXPECT_EQ(test, t->windows, 0);
}

/*
 * A read is tried without a reference only if the last read that took one
 * found its folio hot (f_ra.nolock): not after the normal path read a folio
 * without PG_rcu_free, and again once it read a hot one.
 */
static void filemap_nolock_read_learns(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	unsigned int copied;
	char buf[16];

	KUNIT_ASSERT_TRUE(test, fnk_nolock(t));
	/*
	 * Each read starts in the folio where the last one ended, so that the
	 * normal path does not mark the folio (which would flag it again).
	 */
	t->file->f_ra.prev_pos = sizeof(buf);
	folio_clear_rcu_free(t->folio);
	KUNIT_ASSERT_EQ(test, fnk_read(t, buf, sizeof(buf), 0), sizeof(buf));
	KUNIT_EXPECT_FALSE(test, fnk_nolock(t));
	/* Flagged again: not tried, since the last read said no; it learns. */
	folio_set_rcu_free(t->folio);
	KUNIT_ASSERT_EQ(test, fnk_read(t, buf, sizeof(buf), 0), sizeof(buf));
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf, sizeof(buf), 0));
	KUNIT_EXPECT_EQ(test, t->windows, 0);
	KUNIT_EXPECT_TRUE(test, fnk_nolock(t));
	/* The next read is copied without a reference. */
	copied = t->done;
	KUNIT_ASSERT_EQ(test, fnk_read(t, buf, sizeof(buf), 0), sizeof(buf));
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf, sizeof(buf), 0));
	KUNIT_EXPECT_EQ(test, t->windows, 1);
	fnk_expect_copied(test, copied);
}

/*
 * A whole small file read with a buffer larger than FILEMAP_NOLOCK_MAX, as
 * cat(1) reads (128K): cut at i_size, it is small, and copied without a
 * reference.
 */
static void filemap_nolock_read_big_buffer(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	size_t len = 2 * FILEMAP_NOLOCK_MAX;
	unsigned int copied = t->done;
	char *buf = kunit_kmalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, fnk_read(t, buf, len, 0), FNK_SIZE);
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf, FNK_SIZE, 0));
	KUNIT_EXPECT_EQ(test, t->windows, 1);
	fnk_expect_copied(test, copied);
	KUNIT_EXPECT_TRUE(test, fnk_nolock(t));
}

/*
 * A folio that reclaim aged (PG_referenced cleared, as
 * folio_check_references() does) takes the normal path, which records the
 * access again.
 */
static void filemap_nolock_read_aged(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	char buf[16];

	folio_clear_referenced(t->folio);
	KUNIT_ASSERT_EQ(test, fnk_read(t, buf, sizeof(buf), 0), sizeof(buf));
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf, sizeof(buf), 0));
	KUNIT_EXPECT_EQ(test, t->windows, 0);
	KUNIT_EXPECT_TRUE(test, folio_test_referenced(t->folio));
}

/*
 * A folio marked for readahead takes the normal path, which starts it. shmem
 * has no readahead: there the bit is PG_reclaim, which drop_caches sets on
 * its dirty folios (deactivate_file_folio()), and the read stays lockless.
 */
static void filemap_nolock_read_readahead(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	unsigned int windows = t->mnt ? 0 : 1;
	char buf[16];

	folio_set_readahead(t->folio);
	KUNIT_ASSERT_EQ(test, fnk_read(t, buf, sizeof(buf), 0), sizeof(buf));
	folio_clear_readahead(t->folio);
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf, sizeof(buf), 0));
	KUNIT_EXPECT_EQ(test, t->windows, windows);
}

/*
 * A read past i_size is cut there, as filemap_read() cuts it, and copied
 * without a reference; a read that starts past i_size takes the normal
 * path, which returns 0.
 */
static void filemap_nolock_read_bounds(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	unsigned int copied = t->done;
	char buf[32];

	KUNIT_EXPECT_EQ(test, fnk_read(t, buf, sizeof(buf), FNK_SIZE - 8), 8);
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf, 8, FNK_SIZE - 8));
	fnk_expect_copied(test, copied);
	/* Nothing past the count returned. */
	KUNIT_EXPECT_EQ(test, buf[8], 0x5a);
	KUNIT_EXPECT_EQ(test, t->windows, 1);
	KUNIT_EXPECT_EQ(test, fnk_read(t, buf, sizeof(buf), PAGE_SIZE - 8), 0);
	KUNIT_EXPECT_EQ(test, t->windows, 1);
}

/*
 * A read across the end of the folio, within i_size, takes the normal path,
 * even with the next folio flagged too: the copy is of one folio, and the
 * page after its end is not its own.
 */
static void filemap_nolock_read_across_folios(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	unsigned int copied = t->done;
	char buf[16], next_bytes[16];
	loff_t pos = PAGE_SIZE;
	struct folio *next;
	size_t i;

	for (i = 0; i < sizeof(next_bytes); i++)
		next_bytes[i] = 'a' + (PAGE_SIZE + i) % 26;
	KUNIT_ASSERT_EQ(test, kernel_write(t->file, next_bytes, sizeof(next_bytes), &pos),
			sizeof(next_bytes));
	next = filemap_get_folio(t->file->f_mapping, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(next));
	if (next == t->folio) {
		folio_put(next);
		kunit_skip(test, "one folio holds both pages");
	}
	folio_set_rcu_free(next);
	folio_put(next);
	KUNIT_ASSERT_TRUE(test, fnk_nolock(t));

	/* The 8 bytes before PAGE_SIZE are a hole in the first folio. */
	KUNIT_ASSERT_EQ(test, fnk_read(t, buf, sizeof(buf), PAGE_SIZE - 8), sizeof(buf));
	KUNIT_EXPECT_TRUE(test, fnk_is_zero(buf, 8));
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf + 8, 8, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, t->windows, 0);
	KUNIT_EXPECT_EQ(test, t->done, copied);
}

/*
 * Truncation takes the folio out of the page cache after the copy. The test
 * holds the folio lock for it: the window may not sleep.
 */
static void fnk_remove(struct filemap_nolock_test *t, struct folio *folio)
{
	filemap_remove_folio(folio);
}

static void filemap_nolock_race_removed(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	ssize_t ret;
	char buf[16];

	t->race = fnk_remove;
	folio_lock(t->folio);
	ret = fnk_read(t, buf, sizeof(buf), 0);
	folio_unlock(t->folio);
	KUNIT_ASSERT_EQ(test, ret, sizeof(buf));
	KUNIT_EXPECT_EQ(test, t->windows, 1);
	KUNIT_EXPECT_PTR_EQ(test, t->copied, t->folio);
	KUNIT_EXPECT_EQ(test, t->done, 0);
	KUNIT_EXPECT_NULL(test, READ_ONCE(t->folio->mapping));
	/* The bytes of the folio the reader copied from are gone: a hole. */
	KUNIT_EXPECT_TRUE(test, fnk_is_zero(buf, sizeof(buf)));
}

/* i_size shrinks below the bytes after the copy. */
static void fnk_shrink(struct filemap_nolock_test *t, struct folio *folio)
{
	i_size_write(file_inode(t->file), 4);
}

static void filemap_nolock_race_shrunk(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	char buf[16];

	t->race = fnk_shrink;
	KUNIT_EXPECT_EQ(test, fnk_read(t, buf, sizeof(buf), 0), 4);
	KUNIT_EXPECT_EQ(test, t->windows, 1);
	KUNIT_EXPECT_EQ(test, t->done, 0);
	KUNIT_EXPECT_PTR_EQ(test, t->copied, t->folio);
	KUNIT_EXPECT_TRUE(test, fnk_is_pattern(buf, 4, 0));
}

/* The folio stops being uptodate after the copy. */
static void fnk_not_uptodate(struct filemap_nolock_test *t, struct folio *folio)
{
	folio_clear_uptodate(folio);
}

static void filemap_nolock_race_not_uptodate(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	char buf[16];

	t->race = fnk_not_uptodate;
	KUNIT_ASSERT_EQ(test, fnk_read(t, buf, sizeof(buf), 0), sizeof(buf));
	KUNIT_EXPECT_EQ(test, t->windows, 1);
	KUNIT_EXPECT_EQ(test, t->done, 0);
	KUNIT_EXPECT_PTR_EQ(test, t->copied, t->folio);
	/*
	 * The normal path takes the folio as not read in yet: ramfs reads it
	 * in again and fills it with zeroes, shmem reads a hole.
	 */
	KUNIT_EXPECT_TRUE(test, fnk_is_zero(buf, sizeof(buf)));
}

#ifdef CONFIG_MEMORY_FAILURE
struct fnk_soft_offline {
	unsigned long pfn;
	int ret;
	struct completion done;
};

static int fnk_soft_offline_fn(void *arg)
{
	struct fnk_soft_offline *so = arg;

	so->ret = soft_offline_page(so->pfn, 0);
	complete(&so->done);
	return 0;
}

/*
 * Soft offline of a hot folio migrates it, then waits for a grace period (a
 * lockless reader may still copy from the old folio) before it sets
 * PG_hwpoison: memory offline takes a poisoned page for isolated whatever
 * its refcount, and must not complete while soft offline still holds the
 * page and sleeps. Here a reader holds rcu_read_lock() while soft offline
 * runs in a kthread: once the folio has left the page cache, it must stay
 * flagged and unpoisoned for as long as the reader holds on. With the flag
 * set before the wait, the reader sees PG_hwpoison at once.
 */
static void filemap_nolock_soft_offline_waits_unpoisoned(struct kunit *test)
{
	struct filemap_nolock_test *t = test->priv;
	struct address_space *mapping = t->file->f_mapping;
	struct folio *folio = t->folio;
	struct fnk_soft_offline so = { .pfn = folio_pfn(folio) };
	bool left = false, poisoned = false, flagged;
	struct task_struct *task;
	int i, ret;

	if (!mapping->a_ops->migrate_folio)
		kunit_skip(test, "soft offline cannot migrate a folio of this file");
	if (num_online_cpus() < 2)
		kunit_skip(test, "soft offline needs another CPU while the test spins");
	init_completion(&so.done);
	task = kthread_create(fnk_soft_offline_fn, &so, "fnk_soft_offline");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	/* The page cache's reference alone: soft offline can migrate the folio. */
	t->folio = NULL;
	folio_put(folio);

	rcu_read_lock();
	wake_up_process(task);
	/* Up to a second for the migration, then 100 ms of soft offline waiting. */
	for (i = 0; i < 1000 && !left; i++) {
		left = xa_load(&mapping->i_pages, 0) != folio;
		if (!left)
			udelay(1000);
	}
	for (i = 0; left && i < 100 && !poisoned; i++) {
		poisoned = PageHWPoison(&folio->page);
		udelay(1000);
	}
	flagged = test_bit(PG_rcu_free, &folio->flags.f);
	rcu_read_unlock();
	wait_for_completion(&so.done);

	if (!so.ret) {
		ret = unpoison_memory(so.pfn);
		if (ret != -EOPNOTSUPP)
			KUNIT_EXPECT_EQ(test, ret, 0);
	}
	if (so.ret == -EOPNOTSUPP)
		kunit_skip(test, "soft offline is disabled");
	/* Soft offline itself is filemap_nolock_waiting_page_soft_offline's. */
	if (!left)
		kunit_skip(test,
			   "the folio did not leave the page cache within a second (soft offline: %d)",
			   so.ret);
	KUNIT_EXPECT_EQ(test, so.ret, 0);
	KUNIT_EXPECT_FALSE(test, poisoned);
	KUNIT_EXPECT_TRUE(test, flagged);
}
#endif

static struct kunit_case filemap_nolock_test_cases[] = {
	KUNIT_CASE_PARAM(filemap_nolock_read_hit, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_read_unflagged, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_read_learns, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_read_big_buffer, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_read_aged, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_read_readahead, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_read_bounds, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_read_across_folios, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_race_removed, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_race_shrunk, filemap_nolock_fs_gen_params),
	KUNIT_CASE_PARAM(filemap_nolock_race_not_uptodate, filemap_nolock_fs_gen_params),
#ifdef CONFIG_MEMORY_FAILURE
	KUNIT_CASE_PARAM(filemap_nolock_soft_offline_waits_unpoisoned,
			 filemap_nolock_fs_gen_params),
#endif
	{}
};

static struct kunit_suite filemap_nolock_test_suite = {
	.name = "filemap_nolock",
	.init = filemap_nolock_test_init,
	.exit = filemap_nolock_test_exit,
	.test_cases = filemap_nolock_test_cases,
};

#ifdef CONFIG_MEMORY_ISOLATION
/*
 * A large folio with PG_rcu_free whose last reference is put waits for a
 * grace period, off the LRU: it is about to be free, and must not make
 * memory offline or alloc_contig_range() refuse its range at isolation.
 */
static void filemap_nolock_waiting_folio_is_movable(struct kunit *test)
{
	const unsigned long *order = test->param_value;
	unsigned long step = 0;
	bool unmovable, waiting;
	struct folio *folio;

	if (*order > MAX_PAGE_ORDER)
		kunit_skip(test, "order %lu is above MAX_PAGE_ORDER", *order);
	folio = folio_alloc(GFP_KERNEL, *order);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	folio_set_rcu_free(folio);
	/* Holds its free off until the tests below are done. */
	rcu_read_lock();
	folio_put(folio);
	waiting = folio_rcu_free_waiting(folio);
	unmovable = page_is_unmovable(folio_zone(folio), &folio->page,
				      PB_ISOLATE_MODE_MEM_OFFLINE, &step);
	rcu_read_unlock();
	KUNIT_EXPECT_TRUE(test, waiting);
	KUNIT_EXPECT_FALSE(test, unmovable);
	KUNIT_EXPECT_EQ(test, step, 1UL << *order);
}

static const unsigned long filemap_nolock_orders[] = { 2, PMD_ORDER };

static void filemap_nolock_order_desc(const unsigned long *order, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "order %lu", *order);
}

KUNIT_ARRAY_PARAM(filemap_nolock_order, filemap_nolock_orders,
		  filemap_nolock_order_desc);
#endif

#ifdef CONFIG_MEMORY_FAILURE
/*
 * Soft offline of a page that waits for a grace period: neither on the LRU
 * nor free, it is unhandlable until get_any_page() frees the waiting folios
 * and looks again. Whether it still waits when get_any_page() looks is a
 * race, which a few function calls usually win against a grace period and
 * a work item; without the drain the test fails with -EIO.
 */
static void filemap_nolock_waiting_page_soft_offline(struct kunit *test)
{
	unsigned long pfn = 0;
	bool waiting = false;
	struct folio *folio;
	int attempt, ret = -EINVAL;

	for (attempt = 0; attempt < 5 && !waiting; attempt++) {
		folio = folio_alloc(GFP_KERNEL, 0);
		KUNIT_ASSERT_NOT_NULL(test, folio);
		pfn = folio_pfn(folio);
		folio_set_rcu_free(folio);
		folio_put(folio);
		/* Racy, but a grace period takes far longer than this. */
		waiting = folio_rcu_free_waiting(folio);
		if (waiting)
			ret = soft_offline_page(pfn, 0);
	}
	if (!waiting)
		kunit_skip(test, "no page caught waiting for its grace period");
	if (ret == -EOPNOTSUPP)
		kunit_skip(test, "soft offline is disabled");
	KUNIT_EXPECT_EQ(test, ret, 0);
	if (!ret) {
		KUNIT_EXPECT_TRUE(test, PageHWPoison(pfn_to_page(pfn)));
		/* Give the page back, unless a real memory failure forbids it. */
		ret = unpoison_memory(pfn);
		if (ret != -EOPNOTSUPP)
			KUNIT_EXPECT_EQ(test, ret, 0);
	}
}

/*
 * An injected memory failure of a page that waits for a grace period.
 * memory_failure() sets PG_hwpoison before it looks at the page, and an
 * order-0 page freed with that flag is held out of the buddy lists by
 * free_pages_prepare(), neither free nor referenced: for an injected error
 * memory_failure() must free the waiting folio before it sets the flag, and
 * then take the page off the buddy lists as any free page (recovered, with a
 * reference), from where unpoison_memory() gives it back to the allocator.
 * Freed after the flag, the page is reported unhandlable (-EBUSY) with no
 * reference, and unpoison leaves it out of the allocator for good. Racy as
 * the soft offline case above; like any injection into a free page, it
 * poisons whoever allocates the page in the window before the flag is set.
 */
static void filemap_nolock_waiting_page_memory_failure(struct kunit *test)
{
	unsigned long pfn = 0;
	bool waiting = false;
	struct folio *folio;
	struct page *page;
	int attempt, ret = -EINVAL;

	for (attempt = 0; attempt < 5 && !waiting; attempt++) {
		folio = folio_alloc(GFP_KERNEL, 0);
		KUNIT_ASSERT_NOT_NULL(test, folio);
		pfn = folio_pfn(folio);
		folio_set_rcu_free(folio);
		folio_put(folio);
		/* Racy, but a grace period takes far longer than this. */
		waiting = folio_rcu_free_waiting(folio);
		if (waiting)
			ret = memory_failure(pfn, MF_SW_SIMULATED);
	}
	if (!waiting)
		kunit_skip(test, "no page caught waiting for its grace period");
	page = pfn_to_page(pfn);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, PageHWPoison(page));
	/* Taken off the buddy lists: take_page_off_buddy() and a reference. */
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 1);
	KUNIT_EXPECT_EQ(test, page_private(page), (unsigned long)MAGIC_HWPOISON);
	if (!PageHWPoison(page))
		return;

	ret = unpoison_memory(pfn);
	if (ret == -EOPNOTSUPP)
		kunit_skip(test, "unpoison is disabled after a hardware memory failure");
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_FALSE(test, PageHWPoison(page));
	/* Back in the allocator (racy against an allocation elsewhere). */
	KUNIT_EXPECT_TRUE(test, is_free_buddy_page(page));
}
#endif

#if defined(CONFIG_MEMORY_ISOLATION) && defined(CONFIG_MEMORY_FAILURE)
/*
 * A poisoned order-0 page that waits for a grace period is still linked on
 * a deferred free list: memory offline, which takes a poisoned page for
 * isolated whatever its refcount, must not pass it, or it would poison the
 * struct page of a list entry. A real memory failure sets PG_hwpoison
 * before it frees the waiting pages (get_any_page()), so a page can be in
 * that state. Here the folio is held frozen at a zero refcount with the
 * flag, which folio_rcu_free_waiting() cannot tell from one that waits, and
 * which stays put for the test; it is allocated movable, so that its
 * pageblock can be isolated (ZONE_MOVABLE, where there is one).
 */
static void filemap_nolock_poisoned_waiting_page_not_offline(struct kunit *test)
{
	unsigned long pfn = 0, start = 0;
	struct folio *folio = NULL, *tried[16];
	int isolated = -EBUSY, ret = 0, n;

	/* A folio whose pageblock can be isolated: the others' may not be. */
	for (n = 0; n < ARRAY_SIZE(tried) && isolated; n++) {
		folio = folio_alloc(GFP_HIGHUSER_MOVABLE, 0);
		if (!folio)
			break;
		tried[n] = folio;
		pfn = folio_pfn(folio);
		start = ALIGN_DOWN(pfn, pageblock_nr_pages);
		folio_set_rcu_free(folio);
		if (!folio_ref_freeze(folio, 1)) {
			folio_clear_rcu_free(folio);
			continue;
		}
		SetPageHWPoison(&folio->page);
		isolated = start_isolate_page_range(start, start + pageblock_nr_pages,
						    PB_ISOLATE_MODE_MEM_OFFLINE);
		if (!isolated) {
			ret = test_pages_isolated(pfn, pfn + 1, PB_ISOLATE_MODE_MEM_OFFLINE);
			undo_isolate_page_range(start, start + pageblock_nr_pages);
		}
		ClearPageHWPoison(&folio->page);
		folio_ref_unfreeze(folio, 1);
		folio_clear_rcu_free(folio);
	}
	while (n--)
		folio_put(tried[n]);
	if (isolated)
		kunit_skip(test, "no pageblock of a movable folio could be isolated: %d",
			   isolated);
	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
}
#endif

static struct kunit_case filemap_nolock_free_test_cases[] = {
#ifdef CONFIG_MEMORY_ISOLATION
	KUNIT_CASE_PARAM(filemap_nolock_waiting_folio_is_movable,
			 filemap_nolock_order_gen_params),
#endif
#ifdef CONFIG_MEMORY_FAILURE
	KUNIT_CASE(filemap_nolock_waiting_page_soft_offline),
	KUNIT_CASE(filemap_nolock_waiting_page_memory_failure),
#endif
#if defined(CONFIG_MEMORY_ISOLATION) && defined(CONFIG_MEMORY_FAILURE)
	KUNIT_CASE(filemap_nolock_poisoned_waiting_page_not_offline),
#endif
	{}
};

static struct kunit_suite filemap_nolock_free_test_suite = {
	.name = "filemap_nolock_free",
	.test_cases = filemap_nolock_free_test_cases,
};

kunit_test_suites(&filemap_nolock_test_suite, &filemap_nolock_free_test_suite);
