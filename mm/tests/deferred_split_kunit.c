// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the batch unqueue from the THP deferred split queue.
 *
 * Included from mm/huge_memory.c, for deferred_split_lru. The unqueue cases
 * run on every implementation built: the C one, and with
 * CONFIG_DEFERRED_SPLIT_RUST the Rust one (mm/deferred_split.rs), which
 * is folio_batch_unqueue_deferred_split() then. They check what the test's
 * own folios do, never the queue's length: THPs of others may be queued and
 * unqueued meanwhile.
 */
#include <kunit/test.h>
#include <linux/memcontrol.h>

struct deferred_split_impl {
	const char *name;
	/* Unqueues @fbatch; returns the lock round trips if @counts. */
	unsigned int (*unqueue)(struct folio_batch *fbatch);
	bool counts;
};

#ifdef CONFIG_DEFERRED_SPLIT_RUST
static unsigned int deferred_split_unqueue_rust(struct folio_batch *fbatch)
{
	folio_batch_unqueue_deferred_split(fbatch);
	return 0;
}
#endif

static const struct deferred_split_impl deferred_split_impls[] = {
	{ "C", __folio_batch_unqueue_deferred_split, true },
#ifdef CONFIG_DEFERRED_SPLIT_RUST
	{ "Rust", deferred_split_unqueue_rust, false },
#endif
};

static void deferred_split_impl_desc(const struct deferred_split_impl *impl, char *desc)
{
	strscpy(desc, impl->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(deferred_split_impl, deferred_split_impls, deferred_split_impl_desc);

/*
 * Whether THP initialised the queue: hugepage_init() returns before it
 * without has_transparent_hugepage(), and destroys it when a later step
 * fails. The tests have nothing to test then.
 */
static bool deferred_split_ready(struct kunit *test)
{
	if (deferred_split_lru.node)
		return true;
	kunit_skip(test, "no THP deferred split queue");
	return false;
}

/* A charged folio of @order on @nid (NUMA_NO_NODE: any), with a reference. */
static struct folio *dsk_alloc(struct kunit *test, unsigned int order, int nid)
{
	/* A PMD-sized folio is 512 MiB with 64K pages: skip if there is none. */
	gfp_t gfp = GFP_KERNEL | (order ? __GFP_NOWARN | __GFP_NORETRY : 0);
	struct folio *folio;

	if (nid == NUMA_NO_NODE)
		folio = folio_alloc(gfp, order);
	else
		folio = __folio_alloc_node(gfp | __GFP_THISNODE, order, nid);
	if (!folio)
		kunit_skip(test, "no folio of order %u", order);
	/* Charged to the test's (root) memcg, as faults charge anon folios. */
	if (mem_cgroup_charge(folio, NULL, GFP_KERNEL)) {
		folio_put(folio);
		KUNIT_FAIL_AND_ABORT(test, "cannot charge a folio");
	}
	return folio;
}

/* Is @folio, which may be deferred split, on the queue? Under its lock. */
static bool dsk_queued(struct folio *folio)
{
	struct mem_cgroup *memcg;
	struct list_lru_one *lru;
	unsigned long flags;
	bool queued;

	rcu_read_lock();
	memcg = folio_memcg(folio);
	lru = list_lru_lock_irqsave(&deferred_split_lru, folio_nid(folio), &memcg, &flags);
	queued = !list_empty(&folio->_deferred_list);
	list_lru_unlock_irqrestore(lru, &flags);
	rcu_read_unlock();
	return queued;
}

/* Drops the test's reference, the last: the folio at zero, as freed. */
static void dsk_freeze(struct kunit *test, struct folio *folio)
{
	KUNIT_ASSERT_TRUE(test, folio_put_testzero(folio));
}

/* Gives the frozen folios of @fbatch a reference again and puts it. */
static void dsk_free(struct folio_batch *fbatch)
{
	unsigned int i;

	for (i = 0; i < folio_batch_count(fbatch); i++) {
		folio_ref_unfreeze(fbatch->folios[i], 1);
		folio_put(fbatch->folios[i]);
	}
	folio_batch_reinit(fbatch);
}

static void unqueue_every_order(struct kunit *test)
{
	const struct deferred_split_impl *impl = test->param_value;
	unsigned int orders[] = { 0, 1, 2, 4, HPAGE_PMD_ORDER };
	struct folio_batch fbatch;
	int i;

	if (!deferred_split_ready(test))
		return;
	folio_batch_init(&fbatch);
	for (i = 0; i < ARRAY_SIZE(orders); i++) {
		struct folio *folio = dsk_alloc(test, orders[i], NUMA_NO_NODE);

		if (orders[i] > 1) {
			deferred_split_folio(folio, true);
			KUNIT_EXPECT_TRUE(test, dsk_queued(folio));
			KUNIT_EXPECT_TRUE(test, folio_test_partially_mapped(folio));
		}
		dsk_freeze(test, folio);
		folio_batch_add(&fbatch, folio);
	}
	impl->unqueue(&fbatch);
	for (i = 0; i < folio_batch_count(&fbatch); i++) {
		struct folio *folio = fbatch.folios[i];

		if (folio_order(folio) <= 1)
			continue;
		KUNIT_EXPECT_FALSE(test, dsk_queued(folio));
		KUNIT_EXPECT_FALSE(test, folio_test_partially_mapped(folio));
	}
	/* A second pass finds nothing to do: no lock taken. */
	if (impl->counts)
		KUNIT_EXPECT_EQ(test, impl->unqueue(&fbatch), 0);
	dsk_free(&fbatch);
}

static void unqueue_skips_unqueued(struct kunit *test)
{
	const struct deferred_split_impl *impl = test->param_value;
	struct folio *queued, *not_queued;
	struct folio_batch fbatch;
	unsigned int locks;

	if (!deferred_split_ready(test))
		return;
	queued = dsk_alloc(test, 2, NUMA_NO_NODE);
	not_queued = dsk_alloc(test, 2, NUMA_NO_NODE);
	deferred_split_folio(queued, true);
	KUNIT_EXPECT_TRUE(test, dsk_queued(queued));
	KUNIT_EXPECT_FALSE(test, dsk_queued(not_queued));
	dsk_freeze(test, not_queued);
	dsk_freeze(test, queued);
	folio_batch_init(&fbatch);
	folio_batch_add(&fbatch, not_queued);
	folio_batch_add(&fbatch, queued);
	locks = impl->unqueue(&fbatch);
	if (impl->counts)
		KUNIT_EXPECT_EQ(test, locks, 1);
	KUNIT_EXPECT_FALSE(test, dsk_queued(queued));
	KUNIT_EXPECT_FALSE(test, dsk_queued(not_queued));
	dsk_free(&fbatch);
}

/*
 * One list_lru lock round trip per run of folios of the same node and
 * memcg: folios that are not queued do not end a run, a folio of another
 * node does. For the implementations that count them (the Rust one's own
 * tests count its round trips through its Rust interface).
 */
static void one_lock_per_run(struct kunit *test)
{
	const struct deferred_split_impl *impl = test->param_value;
	/* Two nodes with memory, or the one twice. */
	int first = first_memory_node;
	int other = next_memory_node(first) < MAX_NUMNODES ? next_memory_node(first) : first;
	/* The node of each folio, in batch order, and whether it is queued. */
	int plan[] = { first, first, first, other, first, first };
	bool queued[] = { true, false, true, true, true, true };
	struct folio_batch fbatch;
	unsigned int locks;
	int i;

	if (!deferred_split_ready(test))
		return;
	if (!impl->counts)
		kunit_skip(test, "the %s unqueue does not count its round trips", impl->name);
	folio_batch_init(&fbatch);
	for (i = 0; i < ARRAY_SIZE(plan); i++) {
		struct folio *folio = dsk_alloc(test, 2, plan[i]);

		if (queued[i])
			deferred_split_folio(folio, true);
		dsk_freeze(test, folio);
		folio_batch_add(&fbatch, folio);
	}
	locks = impl->unqueue(&fbatch);
	/* first (three folios, one not queued), other, first again. */
	KUNIT_EXPECT_EQ(test, locks, other != first ? 3U : 1U);
	for (i = 0; i < folio_batch_count(&fbatch); i++)
		KUNIT_EXPECT_FALSE(test, dsk_queued(fbatch.folios[i]));
	dsk_free(&fbatch);
}

/*
 * deferred_split_folio() on a queued folio must not lose the partially
 * mapped state of a folio first queued as possibly underused.
 */
static void requeue_keeps_partially_mapped(struct kunit *test)
{
	struct folio *folio;

	if (!deferred_split_ready(test))
		return;
	/* deferred_split_folio() queues a mapped folio only if this is set. */
	if (!READ_ONCE(split_underused_thp))
		kunit_skip(test, "split_underused_thp is off");
	folio = dsk_alloc(test, HPAGE_PMD_ORDER, NUMA_NO_NODE);
	deferred_split_folio(folio, false);
	KUNIT_EXPECT_TRUE(test, dsk_queued(folio));
	KUNIT_EXPECT_FALSE(test, folio_test_partially_mapped(folio));
	deferred_split_folio(folio, true);
	KUNIT_EXPECT_TRUE(test, folio_test_partially_mapped(folio));
	/* Queued and partially mapped already: nothing changes. */
	deferred_split_folio(folio, true);
	KUNIT_EXPECT_TRUE(test, folio_test_partially_mapped(folio));
	KUNIT_EXPECT_TRUE(test, dsk_queued(folio));
	/*
	 * The free path unqueues it; queued twice, it would have been a list
	 * corruption under CONFIG_DEBUG_LIST.
	 */
	folio_put(folio);
}

static struct kunit_case deferred_split_cases[] = {
	KUNIT_CASE_PARAM(unqueue_every_order, deferred_split_impl_gen_params),
	KUNIT_CASE_PARAM(unqueue_skips_unqueued, deferred_split_impl_gen_params),
	KUNIT_CASE_PARAM(one_lock_per_run, deferred_split_impl_gen_params),
	KUNIT_CASE(requeue_keeps_partially_mapped),
	{}
};

static struct kunit_suite deferred_split_suite = {
	.name = "deferred_split",
	.test_cases = deferred_split_cases,
};

kunit_test_suite(deferred_split_suite);
