// SPDX-License-Identifier: GPL-2.0

//! The THP deferred split queue: unqueue a batch of freed folios.
//!
//! Large folios that rmap found partially mapped (or that may be underused) wait on
//! `deferred_split_lru` for the shrinker to split them. A folio that is freed first must leave
//! the queue before the page allocator gets it back. The LRU batch paths of mm/folio.c and
//! mm/vmscan.c collect such folios under the lruvec lock; this unqueues them after that lock is
//! dropped, so the list_lru lock round trips no longer lengthen the lruvec critical section.
//!
//! C header: [`mm/deferred_split.h`](srctree/mm/deferred_split.h)

use kernel::{
    bindings,
    mm::{
        folio::{
            Folio,
            Unreferenced, //
        },
        folio_batch::FolioBatch,
        list_lru::{
            ListLru,
            ListLruGuard, //
        },
        memcg::{
            self,
            MemCgroup, //
        },
    },
    prelude::*,
    sync::rcu,
    warn_on, //
};

/// The THP deferred split queue.
///
/// # Safety
///
/// The queue must be initialised: `thp_shrinker_init()` did so, and `hugepage_init()` did not
/// destroy it again on a later failure. Both happen at boot, before any folio can be queued, so
/// a caller that holds a folio which is queued, or was (its link is not empty), may call it.
#[inline]
unsafe fn deferred_split_lru() -> &'static ListLru {
    // SAFETY: The caller guarantees that the queue is initialised; it is never destroyed after
    // boot.
    unsafe { ListLru::from_raw(&raw mut bindings::deferred_split_lru) }
}

/// Unqueues the folios of `batch` from the THP deferred split queue, with the semantics of
/// `folio_unqueue_deferred_split()` for each: folios of order 0 or 1 and folios that are not
/// large rmappable are skipped, a folio whose list link is empty is skipped without taking a
/// lock, and a folio taken off the queue loses `PG_partially_mapped` and its count in the mTHP
/// `nr_anon_partially_mapped` statistic.
///
/// Consecutive folios of the same node and memory cgroup share one list_lru lock round trip:
/// freed batches are mostly of one lruvec, so a batch usually costs one. Folios that are not
/// queued do not end a run.
///
/// A folio that breaks the rules below (a reference count that is not zero, or no memory
/// cgroup) is unqueued all the same, as C's `__folio_unqueue_deferred_split()` does, under the
/// lock its memcg names (the caller frees it next: left on the queue, it would be freed memory
/// on a list), and warned about once, after the locks are dropped.
///
/// A folio whose node is not a possible one (a corrupted folio: C would oops on it) cannot be
/// taken off, as its sublist cannot be locked: it stays linked, is freed linked, and is warned
/// about once, with no lock held.
///
/// Returns what it did: the folios taken off the queue and the lock round trips it took.
///
/// The batch's folios have a reference count of zero (the type says so): nobody can queue them
/// again, and none of them can be on the shrinker's private list, where an unlocked scan may
/// hold a folio it has a reference to (see `__folio_unqueue_deferred_split()`). The queue is
/// `deferred_split_lru` itself, not a parameter: taking a folio off a list is only sound on the
/// list it is on.
///
/// The caller holds no lruvec lock: the point of unqueueing a freed batch here is that the
/// queue's lock round trips do not lengthen the lruvec lock's critical section.
///
/// # Safety
///
/// The batch's folios must still be charged to their memory cgroup (unless memory cgroups are
/// disabled): it says which sublist a folio is on, and the free paths uncharge a batch only after
/// this. A folio already uncharged would be taken off its sublist under the root's lock.
#[inline]
pub unsafe fn unqueue_batch(batch: &FolioBatch<Unreferenced>) -> Unqueued {
    // Most freed batches have nothing queued: look for the first folio that is without taking
    // anything, as C checks inline before calling `__folio_unqueue_deferred_split()`. (A loop,
    // not `Iterator::find()`, which rustc may leave out of line at `-Os`.)
    let mut folios = batch.iter();
    loop {
        // The folios from this one on: a copy of two pointers.
        let from = folios.clone();
        let Some(folio) = folios.next() else {
            return Unqueued::default();
        };
        if may_be_queued(folio) {
            // SAFETY: The caller guarantees that the folios are charged. `folio` may be queued
            // (its link is not empty), so the queue was initialised.
            return unsafe { unqueue_from(from) };
        }
    }
}

/// What [`unqueue_batch`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unqueued {
    /// The folios taken off the queue.
    pub folios: usize,
    /// The list_lru lock round trips taken.
    pub locks: usize,
}

/// Returns whether `folio`, whose reference count is zero, may be on the deferred split queue.
#[inline]
fn may_be_queued(folio: &Folio<Unreferenced>) -> bool {
    // SAFETY: `may_be_deferred_split()` is true. With a reference count of zero nobody queues or
    // unqueues the folio concurrently (queueing needs a reference; the shrinker skips a folio it
    // cannot take one on), so an empty link means that it is not queued. Memcg reparenting may
    // move a queued folio to its parent's sublist meanwhile, which leaves the link non-empty.
    folio.may_be_deferred_split() && !unsafe { folio.deferred_list_is_empty_racy() }
}

/// [`unqueue_batch`] of `folios`: the batch's folios from the first that may be queued (that
/// one included) to the end.
///
/// # Safety
///
/// As for [`unqueue_batch`], and the queue must be initialised.
#[inline(never)]
unsafe fn unqueue_from<'a>(folios: impl Iterator<Item = &'a Folio<Unreferenced>>) -> Unqueued {
    // A static, not a parameter: its address is an immediate in the calls, not a register the
    // loop keeps.
    // SAFETY: The caller guarantees that the queue is initialised.
    let lru = unsafe { deferred_split_lru() };
    let mut unqueued = Unqueued::default();
    let mut bad = false;
    // Keeps each folio's memcg alive while its sublist is locked, as C does: the guards borrow
    // the memcgs from it. The first folio may be queued, so it is always needed.
    let rcu = rcu::read_lock();
    let mut locked: Option<ListLruGuard<'_>> = None;

    for folio in folios {
        // The first folio is tested again: that costs less than a loop that knows it passed.
        if !may_be_queued(folio) {
            continue;
        }
        bad |= folio.ref_count() != 0 || (!memcg::is_disabled() && !folio.is_memcg_charged());

        let nid = folio.nid();
        // With a reference count of zero (the caller's contract: a folio that breaks it is the
        // caller's bug, warned about below and handled as C handles it, by unqueueing from the
        // sublist its memcg names) we hold the folio exclusively, which keeps its objcg binding
        // stable (`folio_memcg()`'s rules), so this is its memcg. That memcg may be reparented
        // meanwhile, which `lock()` handles as C does, by locking the nearest live ancestor's
        // sublist, where reparenting moved the folio. `rcu` keeps the memcg alive until it is
        // dropped, after every guard.
        let memcg = folio.memcg(&rcu);
        // The guard stays where it is while the run goes on: moving it in and out of `locked`
        // for every folio costs a copy of it each time.
        let guard = match &mut locked {
            Some(guard) if guard.is_for(nid, memcg) => guard,
            slot => {
                // A folio's node is a possible one: `None` only for a corrupted folio (C would
                // oops on it). It cannot be taken off a list that cannot be locked: it stays
                // linked, and is freed linked. Warn now, with no lock held, before the queue it
                // corrupts is walked again.
                let Some(guard) = relock(slot, lru, nid, memcg) else {
                    kernel::do_once_lite! {
                        warn_on!(true);
                    }
                    continue;
                };
                // At most `FOLIO_BATCH_SIZE` of each count: `wrapping_add()` leaves out an
                // overflow check that cannot fire, and its spill around the calls.
                unqueued.locks = unqueued.locks.wrapping_add(1);
                guard
            }
        };
        // SAFETY: The folio's link is either empty or on the sublist of its node and memcg (or,
        // if that memcg was reparented, of the ancestor), which `guard` holds: a guard taken
        // for the same (node, memcg) covers it, see `is_for()`. Nothing else can hold the folio
        // (reference count zero, by the caller's contract).
        if unsafe { guard.del(folio.deferred_list()) } {
            // SAFETY: The folio may be deferred split, so it is large.
            if unsafe { folio.is_partially_mapped_unchecked() } {
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
            unqueued.folios = unqueued.folios.wrapping_add(1);
        }
    }
    drop(locked);
    if bad {
        kernel::do_once_lite! {
            warn_on!(true);
        }
    }
    unqueued
}

/// Drops the guard in `slot`, if any, then locks the sublist of `nid` and `memcg` of `lru` and
/// puts its guard in `slot`: `None` if `nid` is not a possible node, with `slot` empty.
///
/// Out of line, as C's `list_lru_lock_irqsave()` is: a lock is taken once per run of folios, and
/// inline its interrupt disabling would keep registers of the loop around it busy.
#[inline(never)]
fn relock<'g, 'a>(
    slot: &'g mut Option<ListLruGuard<'a>>,
    lru: &'a ListLru,
    nid: i32,
    memcg: Option<&'a MemCgroup>,
) -> Option<&'g mut ListLruGuard<'a>> {
    // The previous sublist is unlocked before the next is locked.
    *slot = None;
    Some(slot.insert(lru.lock(nid, memcg)?))
}

/// C entry point for `folio_batch_unqueue_deferred_split()`: see [`unqueue_batch`].
///
/// May be called from any context that may take a `spinlock_t` with interrupts disabled, as the
/// queue's lock is taken: not NMI, nor, on PREEMPT_RT, where it sleeps, under a raw spinlock or
/// with interrupts disabled. The callers hold no lruvec lock: they unqueue after dropping it, so
/// that the queue's lock round trips do not lengthen the lruvec lock's critical section.
///
/// # Safety
///
/// `fbatch` must point to a valid `struct folio_batch` (`nr` at most `FOLIO_BATCH_SIZE`) without
/// null entries, whose folios all have a reference count of zero and are not yet uncharged from
/// their memory cgroup; the caller is the path that frees them.
#[export]
pub unsafe extern "C" fn folio_batch_unqueue_deferred_split(fbatch: *mut bindings::folio_batch) {
    // SAFETY: The caller guarantees that `fbatch` is valid (filled by `folio_batch_add()`, so
    // `nr <= FOLIO_BATCH_SIZE`), that its folios (no null entry: the callers pass batches they
    // filled) have a reference count of zero, and that it frees them; it is not written
    // elsewhere during this call.
    let batch = unsafe { FolioBatch::<Unreferenced>::from_raw(fbatch) };
    // SAFETY: The caller has not uncharged the folios yet.
    unsafe { unqueue_batch(batch) };
}

#[cfg(CONFIG_DEFERRED_SPLIT_RUST_KUNIT_TEST)]
#[kunit_tests(rust_mm_deferred_split)]
mod tests {
    use super::*;
    use kernel::mm::{
        folio::{
            testing::{
                ChargedFolio,
                FrozenFolio, //
            },
            RefState, //
        },
        node::nodes_with_memory, //
    };

    /// A folio of `order` on node `nid` (`EINVAL` if it has no memory), charged to the root
    /// memory cgroup ([`ChargedFolio::alloc_on()`]) and, if `queued`, queued as partially
    /// mapped, as rmap does (`ENODEV` if there is no queue: see [`thp_ready()`]); then frozen,
    /// as the free paths have it.
    fn alloc_folio_on(order: u32, nid: i32, queued: bool) -> Result<FrozenFolio> {
        if !nodes_with_memory().any(|n| n == nid) {
            return Err(EINVAL);
        }
        if queued && !thp_ready() {
            return Err(ENODEV);
        }
        // SAFETY: A node with memory is a possible node.
        let folio = unsafe { ChargedFolio::alloc_on(order, nid) }?;
        if queued {
            // The queue's sublists of the folio's memcg, as the fault paths allocate them
            // before they map a large folio (`ENOMEM` if they cannot be).
            // SAFETY: A valid folio, charged, with a reference; the queue is initialised.
            let ret = unsafe { bindings::folio_memcg_alloc_deferred(folio.as_raw()) };
            if ret != 0 {
                return Err(Error::from_errno(ret));
            }
            // SAFETY: A valid folio with a reference, on whose memcg's sublists the queue is
            // initialised (`thp_ready()`, `folio_memcg_alloc_deferred()`); it does nothing to a
            // folio of order one or less.
            unsafe { bindings::deferred_split_folio(folio.as_raw(), true) };
        }
        folio.freeze()
    }

    /// The queue, once [`thp_ready()`] said it is initialised.
    fn lru() -> &'static ListLru {
        // SAFETY: The tests call it only after `thp_ready()`.
        unsafe { deferred_split_lru() }
    }

    /// Whether THP initialised the deferred split list_lru: `hugepage_init()` returns before
    /// it without `has_transparent_hugepage()`, and destroys it when a later step fails. The
    /// tests have nothing to test then (they are skipped), and `lru()` must not be used.
    fn thp_ready() -> bool {
        // SAFETY: `node` is written only at boot, by `list_lru_init()` and
        // `list_lru_destroy()`, before any test runs.
        !unsafe { bindings::deferred_split_lru.node }.is_null()
    }

    /// Whether `folio`, which may be deferred split, is on the queue. Read under the lock of its
    /// sublist: the shrinker may be moving a referenced folio.
    fn is_queued<S: RefState>(folio: &Folio<S>) -> bool {
        let rcu = rcu::read_lock();
        // The test folios are charged to the root memory cgroup, which is never reparented.
        // `None` only for a node that is not possible, which a folio's is.
        let _guard = lru().lock(folio.nid(), folio.memcg(&rcu));
        // SAFETY: The callers pass folios that may be deferred split.
        !unsafe { folio.deferred_list_is_empty_racy() }
    }

    /// One list_lru lock round trip per run of folios of the same node and memcg: folios that
    /// are not queued do not end a run, a folio of another node does. What the unqueue does to
    /// the folios is tested on the C and the Rust unqueue alike by the C suite `deferred_split`;
    /// this counts the round trips, which the Rust function returns.
    #[test]
    fn one_lock_per_run() -> Result {
        if !thp_ready() {
            kernel::kunit::mark_skipped(c"no THP deferred split queue");
            return Ok(());
        }
        let mut nodes = nodes_with_memory();
        let first = nodes.next().ok_or(ENOMEM)?;
        let other = nodes.next().unwrap_or(first);
        // (node, queued) of each folio, in batch order.
        let plan = [
            (first, true),
            (first, false),
            (first, true),
            (other, true),
            (first, true),
            (first, true),
        ];
        let mut frozen = KVec::new();
        for (nid, queued) in plan {
            match alloc_folio_on(2, nid, queued) {
                Ok(folio) => frozen.push(folio, GFP_KERNEL)?,
                // No folio of order two on the node, or a speculative reference: nothing to
                // test, not a failure.
                Err(e) if e == ENOMEM || e == EBUSY => {
                    kernel::kunit::mark_skipped(c"cannot allocate, charge and freeze the folios");
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        let mut batch = FolioBatch::<Unreferenced>::new();
        for folio in frozen.iter() {
            // SAFETY: `frozen` owns the folios at a reference count of zero until after the
            // batch is dropped.
            unsafe { batch.push(folio)? };
        }
        // SAFETY: The folios are charged (`alloc_folio_on()`).
        let unqueued = unsafe { unqueue_batch(&batch) };
        // Runs: `first` (three folios, one of them not queued), `other`, `first` again: three,
        // or one when there is only one node with memory.
        let locks = if other != first { 3 } else { 1 };
        assert_eq!(unqueued, Unqueued { folios: 5, locks });
        assert!(batch.iter().all(|folio| !is_queued(folio)));
        Ok(())
    }
}
