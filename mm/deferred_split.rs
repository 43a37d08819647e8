// SPDX-License-Identifier: GPL-2.0

//! The THP deferred split queue: unqueue a batch of freed folios.
//!
//! Large folios that rmap found partially mapped (or that may be underused) wait on
//! `deferred_split_lru` for the shrinker to split them. A folio that is freed first must leave
//! the queue before the page allocator gets it back. The LRU batch paths of mm/folio.c and
//! mm/vmscan.c collect such folios under the lruvec lock; this unqueues them after that lock is
//! dropped, so the list_lru lock round trips no longer lengthen the lruvec critical section.
//!
//! C header: [`mm/internal.h`](srctree/mm/internal.h)

use kernel::{
    bindings,
    mm::{
        folio::{mem_cgroup_disabled, Folio},
        folio_batch::{FolioBatch, Unreferenced},
        list_lru::{ListLru, ListLruGuard},
        lruvec::LruvecUnlocked,
    },
    prelude::*,
    sync::rcu,
    warn_on,
};

/// Unqueues the folios of `batch` from the deferred split queue `lru`, with the semantics of
/// `folio_unqueue_deferred_split()` for each: folios of order 0 or 1 and folios that are not
/// large rmappable are skipped, a folio whose list link is empty is skipped without taking a
/// lock, and a folio taken off the queue loses `PG_partially_mapped` and its count in the mTHP
/// `nr_anon_partially_mapped` statistic.
///
/// Consecutive folios of the same node and memory cgroup share one list_lru lock round trip:
/// freed batches are mostly of one lruvec, so a batch usually costs one.
///
/// Returns the number of folios taken off the queue.
///
/// The batch's folios have a reference count of zero (the type says so): nobody can queue them
/// again, and none of them can be on the shrinker's private list, where an unlocked scan may
/// hold a folio it has a reference to (see `__folio_unqueue_deferred_split()`). The
/// `&LruvecUnlocked` proves that no lruvec lock is held.
#[inline]
pub fn unqueue_batch(
    lru: &ListLru,
    batch: &FolioBatch<Unreferenced>,
    unlocked: &LruvecUnlocked,
) -> usize {
    // Most freed batches have nothing queued: look for the first folio that is without taking
    // anything, as C checks inline before calling `__folio_unqueue_deferred_split()`.
    let mut folios = batch.iter();
    loop {
        let Some(folio) = folios.next() else {
            return 0;
        };
        if may_be_queued(folio) {
            return unqueue_from(lru, folio, folios, unlocked);
        }
    }
}

/// Returns whether `folio`, whose reference count is zero, may be on the deferred split queue.
#[inline]
fn may_be_queued(folio: &Folio) -> bool {
    // SAFETY: `may_be_deferred_split()` is true. With a reference count of zero nobody can
    // queue the folio concurrently, so an empty link means it is not queued.
    folio.may_be_deferred_split() && !unsafe { folio.deferred_list_is_empty_racy() }
}

/// [`unqueue_batch`] from `first`, which may be queued, and the folios of the batch after it.
#[inline(never)]
fn unqueue_from<'a>(
    lru: &ListLru,
    first: &'a Folio,
    rest: impl Iterator<Item = &'a Folio>,
    _unlocked: &LruvecUnlocked,
) -> usize {
    let mut unqueued = 0;
    // Keeps each folio's memcg alive while its sublist is locked, as C does. Declared before
    // `locked`, so it is dropped after it.
    let mut rcu: Option<rcu::Guard> = None;
    let mut locked: Option<ListLruGuard<'_>> = None;

    // `Iterator::` as the prelude's `Init` has a `chain()` too.
    for folio in Iterator::chain(core::iter::once(first), rest) {
        if !may_be_queued(folio) {
            continue;
        }
        warn_on!(folio.ref_count() != 0);
        warn_on!(!mem_cgroup_disabled() && !folio.memcg_charged());

        let nid = folio.nid();
        rcu.get_or_insert_with(rcu::read_lock);
        // SAFETY: The reference count is zero, so the memcg binding is stable, and we are
        // under `rcu_read_lock()`, which keeps the memcg alive until `rcu` is dropped, after
        // every guard.
        let memcg = unsafe { folio.memcg() };
        let guard = match locked.take() {
            Some(guard) if guard.is_for(nid, memcg) => guard,
            previous => {
                drop(previous);
                // SAFETY: `nid` is the folio's node and `memcg` is alive (see above); the
                // deferred split list_lru has the folio's memcg sublists, allocated when the
                // folio was charged (`folio_memcg_alloc_deferred()`).
                unsafe { lru.lock_irqsave(nid, memcg) }
            }
        };
        let guard = locked.insert(guard);
        // SAFETY: The folio's link is either empty or on the sublist of its node and memcg,
        // which `guard` holds; nothing else can hold the folio (reference count zero).
        if unsafe { guard.del(folio.deferred_list()) } {
            if folio.test_partially_mapped() {
                // SAFETY: The folio may be deferred split and we hold its sublist's lock.
                unsafe { folio.clear_partially_mapped() };
                // SAFETY: Adjusts a per-CPU counter; the order is a valid folio order.
                unsafe {
                    bindings::mod_mthp_stat(
                        folio.order() as i32,
                        bindings::mthp_stat_item_MTHP_STAT_NR_ANON_PARTIALLY_MAPPED,
                        -1,
                    )
                };
            }
            unqueued += 1;
        }
    }
    unqueued
}

/// C entry point for `folio_batch_unqueue_deferred_split()`: see [`unqueue_batch`].
///
/// # Safety
///
/// - `fbatch` must point to a valid `struct folio_batch` whose folios all have a reference
///   count of zero and are not yet uncharged from their memory cgroup.
/// - The caller must not hold a lruvec lock.
#[export]
pub unsafe extern "C" fn folio_batch_unqueue_deferred_split(fbatch: *mut bindings::folio_batch) {
    // SAFETY: The caller guarantees that `fbatch` is valid and that its folios have a
    // reference count of zero; it is not accessed elsewhere during this call.
    let batch = unsafe { FolioBatch::<Unreferenced>::from_raw_mut(fbatch) };
    // SAFETY: `deferred_split_lru` is initialised by `thp_shrinker_init()` before any large
    // rmappable folio can be queued, and never destroyed while folios can be freed.
    let lru = unsafe { ListLru::from_raw(&raw mut bindings::deferred_split_lru) };
    // SAFETY: The caller holds no lruvec lock.
    let unlocked = unsafe { LruvecUnlocked::new() };
    unqueue_batch(lru, batch, &unlocked);
}

#[cfg(CONFIG_MM_RUST_DEFERRED_SPLIT_KUNIT_TEST)]
#[kunit_tests(mm_deferred_split_rust)]
mod tests {
    use super::*;

    /// A charged folio of `order` with a reference count of one.
    fn alloc_folio(order: u32) -> Result<&'static Folio> {
        // SAFETY: Allocates a folio; no requirements.
        let raw = unsafe { bindings::folio_alloc(bindings::GFP_KERNEL, order) };
        if raw.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: `raw` is a new folio with a reference count of one, freed only at the end of
        // each test (after its last use).
        let folio = unsafe { Folio::from_raw(raw) };
        // SAFETY: A new, unmapped folio: charge it to the current (root) memory cgroup, as
        // page faults charge anonymous folios.
        let ret = unsafe {
            bindings::mem_cgroup_charge(raw, core::ptr::null_mut(), bindings::GFP_KERNEL)
        };
        if ret != 0 {
            // SAFETY: We own the only reference.
            unsafe { bindings::folio_put(raw) };
            return Err(Error::from_errno(ret));
        }
        Ok(folio)
    }

    /// Queues `folio` as partially mapped, as rmap does.
    fn queue(folio: &Folio, partially_mapped: bool) {
        // SAFETY: A valid large folio with a reference.
        unsafe { bindings::deferred_split_folio(folio.as_raw(), partially_mapped) };
    }

    /// Frees a folio whose reference count was dropped to zero.
    fn free_unreferenced(folio: &Folio) {
        // SAFETY: The reference count is zero and nobody else can see the folio: make it one
        // again and free it through the usual path.
        unsafe {
            bindings::folio_ref_unfreeze(folio.as_raw(), 1);
            bindings::folio_put(folio.as_raw());
        }
    }

    fn lru() -> &'static ListLru {
        // SAFETY: Initialised at boot, never destroyed.
        unsafe { ListLru::from_raw(&raw mut bindings::deferred_split_lru) }
    }

    fn is_queued(folio: &Folio) -> bool {
        // SAFETY: Called only on folios that may be deferred split.
        !unsafe { folio.deferred_list_is_empty_racy() }
    }

    #[test]
    fn unqueue_every_order() -> Result {
        let orders = [0, 1, 2, 4, bindings::HPAGE_PMD_ORDER];
        let mut folios = KVec::new();
        for order in orders {
            folios.push(alloc_folio(order)?, GFP_KERNEL)?;
        }
        let nid = folios[0].nid();
        let queued_before = lru().count_node(nid);
        let mut expected = 0;
        for folio in folios.iter() {
            if folio.order() > 1 {
                assert!(folio.may_be_deferred_split());
                queue(folio, true);
                assert!(is_queued(folio));
                assert!(folio.test_partially_mapped());
                if folio.nid() == nid {
                    expected += 1;
                }
            } else {
                assert!(!folio.may_be_deferred_split());
            }
        }
        assert_eq!(lru().count_node(nid), queued_before + expected);

        let mut batch = FolioBatch::new();
        for folio in folios.iter() {
            // SAFETY: A folio we hold a reference to, dropped below only to zero.
            assert!(unsafe { bindings::folio_put_testzero(folio.as_raw()) });
            // SAFETY: The folios are freed only after the batch is done with.
            unsafe { batch.push(folio)? };
        }
        // SAFETY: Every folio of the batch has a reference count of zero, and keeps it until
        // `free_unreferenced()` below.
        let batch = unsafe { batch.assume_unreferenced() };
        // SAFETY: This test holds no lruvec lock.
        let unlocked = unsafe { LruvecUnlocked::new() };
        assert_eq!(unqueue_batch(lru(), batch, &unlocked), orders.len() - 2);
        assert_eq!(lru().count_node(nid), queued_before);
        for folio in folios.iter() {
            if folio.order() > 1 {
                assert!(!is_queued(folio));
                assert!(!folio.test_partially_mapped());
            }
        }
        // A second pass finds nothing to do.
        assert_eq!(unqueue_batch(lru(), batch, &unlocked), 0);
        for folio in folios.iter() {
            free_unreferenced(folio);
        }
        Ok(())
    }

    #[test]
    fn unqueue_skips_unqueued() -> Result {
        let queued = alloc_folio(2)?;
        let not_queued = alloc_folio(2)?;
        queue(queued, true);
        let nid = queued.nid();
        let before = lru().count_node(nid);

        let mut batch = FolioBatch::new();
        for folio in [not_queued, queued] {
            // SAFETY: As in `unqueue_every_order`.
            assert!(unsafe { bindings::folio_put_testzero(folio.as_raw()) });
            // SAFETY: As in `unqueue_every_order`.
            unsafe { batch.push(folio)? };
        }
        // SAFETY: As in `unqueue_every_order`.
        let batch = unsafe { batch.assume_unreferenced() };
        // SAFETY: This test holds no lruvec lock.
        let unlocked = unsafe { LruvecUnlocked::new() };
        assert_eq!(unqueue_batch(lru(), batch, &unlocked), 1);
        assert_eq!(lru().count_node(nid) + 1, before);
        assert!(!is_queued(queued) && !is_queued(not_queued));
        free_unreferenced(queued);
        free_unreferenced(not_queued);
        Ok(())
    }

    /// The C callers: `folios_put()` frees a batch, unqueueing its queued folios on the way.
    #[test]
    fn folios_put_unqueues() -> Result {
        let mut batch = FolioBatch::new();
        let mut nid = None;
        let mut queued = 0;
        for order in [2, 3, bindings::HPAGE_PMD_ORDER, 0] {
            let folio = alloc_folio(order)?;
            if order > 1 {
                queue(folio, true);
                nid.get_or_insert(folio.nid());
                if nid == Some(folio.nid()) {
                    queued += 1;
                }
            }
            // SAFETY: `folios_put_refs()` below drops our reference and frees the folio.
            unsafe { batch.push(folio)? };
        }
        let nid = nid.unwrap_or(0);
        let before = lru().count_node(nid);
        // SAFETY: A batch of folios we hold one reference to each; it drops them.
        unsafe { bindings::folios_put_refs(batch.as_raw(), core::ptr::null_mut()) };
        assert_eq!(lru().count_node(nid) + queued, before);
        Ok(())
    }

    /// `deferred_split_folio()` on a queued folio: the early return must not lose the
    /// partially mapped state of a folio first queued as possibly underused.
    #[test]
    fn requeue_keeps_partially_mapped() -> Result {
        let folio = alloc_folio(bindings::HPAGE_PMD_ORDER)?;
        let nid = folio.nid();
        let before = lru().count_node(nid);
        queue(folio, false);
        assert!(is_queued(folio));
        assert!(!folio.test_partially_mapped());
        queue(folio, true);
        assert!(folio.test_partially_mapped());
        // Queued and partially mapped: the lockless early return.
        queue(folio, true);
        assert!(folio.test_partially_mapped());
        assert_eq!(lru().count_node(nid), before + 1);
        // SAFETY: Drops our reference: the free path unqueues the folio.
        unsafe { bindings::folio_put(folio.as_raw()) };
        assert_eq!(lru().count_node(nid), before);
        Ok(())
    }
}
