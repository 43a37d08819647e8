// SPDX-License-Identifier: GPL-2.0

//! NUMA- and memcg-aware LRU lists.
//!
//! A `struct list_lru` keeps one sublist per NUMA node and, when memcg aware, per memory cgroup,
//! each with its own spinlock. [`ListLru`] views a C-initialised one, such as the THP deferred
//! split queue.
//!
//! # Guards that disable interrupts
//!
//! [`ListLruGuard`] holds a sublist's C spinlock with interrupts disabled the way
//! [`SpinLockIrq`](crate::sync::SpinLockIrq) does: `spin_lock_irq_disable()`, the counted
//! interrupt disable (`local_interrupt_disable()`), so that guards, theirs and this one, may be
//! dropped in any order: interrupts come back on when the last one is dropped. (With
//! `spin_unlock_irqrestore()`, dropping an outer guard first would enable interrupts under an
//! inner lock: a deadlock on SMP, and on UP, where a spinlock is only a preemption count, an
//! interrupt handler that takes the inner `SpinLockIrq` would get a second `&mut` to its data.)
//! It is not `SpinLockIrq` itself: the lock lives in a C structure and is found and taken by C
//! (`list_lru_lock()` moves to a live ancestor of a dying memcg), so C takes it, with
//! `list_lru_lock_irq_disable()`: `list_lru_lock()` under the counted interrupt disable. On
//! PREEMPT_RT, as there, interrupts stay enabled and the lock is a sleeping lock.
//!
//! C header: [`include/linux/list_lru.h`](srctree/include/linux/list_lru.h)

use crate::{
    bindings,
    mm::{
        memcg::MemCgroup,
        node, //
    },
    types::Opaque, //
};
use core::ptr::NonNull;

/// A wrapper for the kernel's `struct list_lru`.
///
/// # Invariants
///
/// `inner` is an initialised `struct list_lru` (by `__list_lru_init()`) that is not destroyed
/// while this value is borrowed.
#[repr(transparent)]
pub struct ListLru {
    inner: Opaque<bindings::list_lru>,
}

// SAFETY: A `struct list_lru` is not tied to the thread that initialised it.
unsafe impl Send for ListLru {}

// SAFETY: Every operation on a `struct list_lru` through a shared reference either takes the
// sublist's spinlock or is an atomic read of a counter.
unsafe impl Sync for ListLru {}

impl ListLru {
    /// Creates a [`ListLru`] view of a C `struct list_lru`.
    ///
    /// # Safety
    ///
    /// `ptr` must point to an initialised `struct list_lru` that is not destroyed for `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::list_lru) -> &'a Self {
        // CAST: `ListLru` is a transparent wrapper of `bindings::list_lru`.
        // SAFETY: The caller guarantees that the pointer is valid for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the C `struct list_lru`.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::list_lru {
        self.inner.get()
    }

    /// Locks the sublist of node `nid` and memory cgroup `memcg`, with interrupts disabled:
    /// `list_lru_lock()` under the counted interrupt disable of `spin_lock_irq_disable()`
    /// (see [the module](crate::mm::list_lru#guards-that-disable-interrupts)).
    ///
    /// `None` and the root memory cgroup lock the same sublist, the node's own (as does any
    /// memcg on a list that is not memcg aware). The guard borrows `memcg`, which therefore
    /// stays alive while the sublist is locked, as C needs. If `memcg` is dying and its sublist
    /// already reparented, the sublist of its nearest live ancestor is locked instead, as C
    /// does. With a memcg-aware list_lru whose
    /// sublists for `memcg` were never allocated (`memcg_list_lru_alloc()`), C warns
    /// (`VM_WARN_ON`, for a live memcg) and takes an ancestor's sublist the same way.
    ///
    /// Returns `None` if `nid` is not a possible node ([`node::is_possible()`]): the list_lru
    /// has sublists, and initialised locks, for those only.
    ///
    /// To avoid a deadlock, hold at most one guard of a list_lru at a time, even for different
    /// nodes or memory cgroups: the walk to a live ancestor can make two of them the same lock
    /// (and they share one lockdep class). As in C, put no folio's last reference under a guard
    /// of the deferred split queue: freeing a queued folio takes its sublist's lock.
    #[inline]
    #[must_use = "the sublist is unlocked when the guard is dropped"]
    pub fn lock<'a>(&'a self, nid: i32, memcg: Option<&'a MemCgroup>) -> Option<ListLruGuard<'a>> {
        if !node::is_possible(nid) {
            return None;
        }
        let memcg = memcg_as_raw_or_null(memcg);
        // C moves it to the ancestor whose sublist it locked; the guard keeps the memcg asked for
        // (`is_for()`).
        let mut locked_memcg = memcg;
        // SAFETY: By the type invariants, the list_lru is initialised, with initialised sublists
        // for every possible node, as `nid` is; `memcg` is null or alive for `'a`. The pointer
        // is to a local.
        let one =
            unsafe { bindings::list_lru_lock_irq_disable(self.as_raw(), nid, &mut locked_memcg) };
        // INVARIANT: We just took the lock. `list_lru_lock()` never returns null: without
        // `skip_empty`, `lock_list_lru_of_memcg()` loops (`goto again`) up to a live ancestor,
        // whose sublist it locks.
        Some(ListLruGuard {
            lru: self,
            // SAFETY: See the invariant above.
            one: unsafe { NonNull::new_unchecked(one) },
            nid,
            memcg,
        })
    }
}

/// Returns the raw pointer of an optional memory cgroup, null for `None` (the root, or no memory
/// cgroup, as C's null `struct mem_cgroup *` means).
#[inline]
fn memcg_as_raw_or_null(memcg: Option<&MemCgroup>) -> *mut bindings::mem_cgroup {
    memcg.map_or(core::ptr::null_mut(), MemCgroup::as_raw)
}

/// A locked sublist of a [`ListLru`], with interrupts disabled (a count: guards may be dropped
/// in any order, see [the module](crate::mm::list_lru#guards-that-disable-interrupts)).
///
/// The guard borrows the memory cgroup it was taken for, so that what keeps the memcg alive
/// cannot end first:
///
/// ```ignore,compile_fail
/// use kernel::{
///     mm::{folio::{Folio, Unreferenced}, list_lru::ListLru},
///     sync::rcu, //
/// };
///
/// /// Would end the RCU read lock that keeps the memcg alive under its sublist's lock.
/// fn rcu_first(lru: &ListLru, folio: &Folio<Unreferenced>) {
///     let rcu = rcu::read_lock();
///     let memcg = folio.memcg(&rcu);
///     let guard = lru.lock(folio.nid(), memcg);
///     drop(rcu); // error[E0505]: cannot move out of `rcu` because it is borrowed
///     drop(guard);
/// }
/// ```
///
/// It is not [`Send`]: the lock and the interrupt disable belong to the CPU that took them.
///
/// ```ignore,compile_fail
/// use kernel::mm::list_lru::ListLruGuard;
///
/// fn is_send<T: Send>() {}
///
/// fn guard_is_send() {
///     is_send::<ListLruGuard<'static>>(); // error[E0277]: not `Send`
/// }
/// ```
///
/// # Invariants
///
/// This guard owns the lock of `one`, the sublist of `lru` for `nid` and `memcg` or, if `memcg`
/// was reparented, for one of its ancestors, and an interrupt disable count (none on
/// PREEMPT_RT, where interrupts stay on), taken with `list_lru_lock_irq_disable()` for (`nid`,
/// `memcg`). `memcg` is null or a memory cgroup that is not freed for `'a`.
#[must_use = "the sublist is unlocked when the guard is dropped"]
pub struct ListLruGuard<'a> {
    lru: &'a ListLru,
    one: NonNull<bindings::list_lru_one>,
    nid: i32,
    memcg: *mut bindings::mem_cgroup,
}

impl<'a> ListLruGuard<'a> {
    /// Returns whether this guard was taken for node `nid` and memory cgroup `memcg`, so that it
    /// also covers the items of that sublist: a batch of items can then share one lock round
    /// trip. It compares the memcg asked for, not the one locked: false for `None` on a guard
    /// taken for the root, although both lock the same sublist.
    #[inline]
    pub fn is_for(&self, nid: i32, memcg: Option<&MemCgroup>) -> bool {
        self.nid == nid && self.memcg == memcg_as_raw_or_null(memcg)
    }

    /// Removes `item` from the locked sublist if it is on a list: `__list_lru_del()`. Returns
    /// whether it was removed.
    ///
    /// # Safety
    ///
    /// `item` must be an initialised `list_head` that is either empty or on this guard's
    /// sublist.
    #[inline]
    pub unsafe fn del(&mut self, item: *mut bindings::list_head) -> bool {
        // SAFETY: By the type invariants we hold the sublist's lock; the caller guarantees the
        // requirements on `item`.
        unsafe { bindings::__list_lru_del(self.lru.as_raw(), self.one.as_ptr(), item, self.nid) }
    }
}

impl Drop for ListLruGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants, we hold this lock and an interrupt disable count.
        unsafe { bindings::list_lru_unlock_irq_enable(self.one.as_ptr()) };
    }
}

#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
#[macros::kunit_tests(rust_mm_list_lru)]
mod tests {
    use super::*;
    use crate::{
        error::to_result,
        mm::node::{
            nodes_with_memory,
            nr_node_ids, //
        },
        prelude::*,
        sync::LockClassKey, //
    };
    use core::ops::Deref;

    // What only the tests need: a list_lru of their own (the deferred split queue is C's), adding
    // to it, and counting its items.

    /// The number of items on node `nid` of `lru`, over all memory cgroups:
    /// `list_lru_count_node()`. Zero if `nid` is not a node id.
    fn count_node(lru: &ListLru, nid: i32) -> usize {
        if !u32::try_from(nid).is_ok_and(|nid| nid < nr_node_ids()) {
            return 0;
        }
        // SAFETY: The list_lru is initialised, with a sublist for each node id below
        // `nr_node_ids`, as `nid` is; the count is atomic.
        // CAST: An item count fits in `usize`.
        unsafe { bindings::list_lru_count_node(lru.as_raw(), nid) as usize }
    }

    /// A `struct list_lru` that the test initialises and destroys.
    ///
    /// # Invariants
    ///
    /// `inner` was initialised by `__list_lru_init()` and is destroyed only by `drop`.
    #[pin_data(PinnedDrop)]
    struct OwnedListLru {
        #[pin]
        inner: Opaque<bindings::list_lru>,
    }

    impl OwnedListLru {
        /// A list_lru, memcg aware if `memcg_aware` (no shrinker), whose sublist locks are of
        /// the lock class `key`: `list_lru_init_memcg_key()`.
        fn new(memcg_aware: bool, key: Pin<&'static LockClassKey>) -> impl PinInit<Self, Error> {
            try_pin_init!(Self {
                inner <- Opaque::try_ffi_init(|slot: *mut bindings::list_lru| {
                    // SAFETY: `slot` is valid for writes and pinned. `__list_lru_init()` expects
                    // a zeroed `struct list_lru`, as C's are (static or kzalloc()ed), with the
                    // lock class key set first, as `list_lru_init_memcg_key()` does; the key
                    // is static. A null shrinker is allowed.
                    to_result(unsafe {
                        core::ptr::write_bytes(slot, 0, 1);
                        #[cfg(CONFIG_LOCKDEP)]
                        {
                            (*slot).key = key.as_ptr();
                        }
                        #[cfg(not(CONFIG_LOCKDEP))]
                        let _ = key;
                        bindings::__list_lru_init(slot, memcg_aware, core::ptr::null_mut())
                    })
                }),
            })
        }
    }

    impl Deref for OwnedListLru {
        type Target = ListLru;

        fn deref(&self) -> &ListLru {
            // SAFETY: By the type invariants, `inner` is initialised and destroyed only on drop,
            // after every borrow of `self` has ended.
            unsafe { ListLru::from_raw(self.inner.get()) }
        }
    }

    #[pinned_drop]
    impl PinnedDrop for OwnedListLru {
        fn drop(self: Pin<&mut Self>) {
            // `list_lru_destroy()` takes `list_lrus_mutex` when the list is memcg aware.
            crate::task::might_sleep();
            let nr: usize = (0..nr_node_ids() as i32)
                .map(|nid| count_node(&self, nid))
                .sum();
            // Items still on it would point into the sublists freed below.
            crate::warn_on!(nr != 0);
            // SAFETY: By the type invariants, `inner` is initialised and not destroyed yet.
            unsafe { bindings::list_lru_destroy(self.inner.get()) };
        }
    }

    impl ListLruGuard<'_> {
        /// Returns the item count of the locked sublist, as C keeps it (it may be negative).
        fn nr_items(&self) -> isize {
            // SAFETY: By the type invariants, `one` is valid and we hold its lock.
            unsafe { (*self.one.as_ptr()).nr_items }
        }

        /// Adds `item` to the tail of the locked sublist unless it is on a list already:
        /// `__list_lru_add()`. Returns whether it was added.
        ///
        /// # Safety
        ///
        /// `item` must be an initialised `list_head` that is either empty or on a sublist of
        /// this list_lru, that stays valid while it is on the list, and that belongs on this
        /// guard's sublist; it must be taken off before the list_lru is destroyed.
        unsafe fn add(&mut self, item: *mut bindings::list_head) -> bool {
            // SAFETY: By the type invariants we hold the sublist's lock; the caller guarantees
            // the requirements on `item`.
            unsafe {
                bindings::__list_lru_add(
                    self.lru.as_raw(),
                    self.one.as_ptr(),
                    item,
                    self.nid,
                    // The memcg whose shrinker bit `__list_lru_add()` sets, which C's
                    // `list_lru_add()` passes as `list_lru_lock()` left it (after a reparenting,
                    // an ancestor of the one asked for): the tests' list_lrus have no shrinker.
                    self.memcg,
                )
            }
        }
    }

    fn new_lru(memcg_aware: bool) -> Result<Pin<KBox<OwnedListLru>>> {
        KBox::pin_init(
            OwnedListLru::new(memcg_aware, crate::static_lock_class!()),
            GFP_KERNEL,
        )
    }

    /// Whether interrupts are disabled on this CPU.
    fn irqs_disabled() -> bool {
        // SAFETY: No requirements.
        unsafe { bindings::irqs_disabled() }
    }

    /// `N` list items on a test's stack. C links them to each other: they are reached through
    /// the raw pointers of [`Items::get()`] only, never through a `&mut` made after they are on
    /// a list.
    struct Items<const N: usize>([Opaque<bindings::list_head>; N]);

    impl<const N: usize> Items<N> {
        fn new() -> Self {
            Self([const { Opaque::uninit() }; N])
        }

        /// Makes the items empty lists, where they are pinned (they point to themselves).
        fn init(self: Pin<&Self>) {
            for item in &self.0 {
                // SAFETY: `item` is valid for writes and pinned: it does not move while on a
                // list.
                unsafe { bindings::INIT_LIST_HEAD(item.get()) };
            }
        }

        fn get(&self, i: usize) -> *mut bindings::list_head {
            self.0[i].get()
        }
    }

    #[test]
    fn memcg_aware_add_del() -> Result {
        let lru = new_lru(true)?;
        let items = core::pin::pin!(Items::<3>::new());
        let items = items.as_ref();
        items.init();
        // Two nodes with memory (so possible ones), or the one twice.
        let mut nodes = nodes_with_memory();
        let first = nodes.next().unwrap_or(0);
        let other = nodes.next().unwrap_or(first);
        // Nothing is asserted under a guard, nor while an item is on a list: a failed KUnit
        // assertion ends the test thread, which must not happen with a spinlock held and
        // interrupts off, and leaves its stack, where the items are, linked into the list_lru.
        // Each block returns what it saw. `lock()` succeeds for a node it succeeded for before
        // (possible nodes do not change).
        let (seen, added, nr) = {
            // No memcg: the node's own sublist.
            let mut guard = lru.lock(first, None).ok_or(EINVAL)?;
            let seen = (guard.is_for(first, None), guard.nid);
            // SAFETY: Empty items that stay in place while on the list, for node `first`; the
            // third add finds `items[0]` on the list already and does not add it twice.
            let added = unsafe {
                [
                    guard.add(items.get(0)),
                    guard.add(items.get(1)),
                    guard.add(items.get(0)),
                ]
            };
            (seen, added, guard.nr_items())
        };
        let added_other = {
            let mut guard = lru.lock(other, None).ok_or(EINVAL)?;
            // SAFETY: As above, for node `other`.
            unsafe { guard.add(items.get(2)) }
        };
        let counts = (count_node(&lru, first), count_node(&lru, other));
        let (deleted, nr_left) = {
            let mut guard = lru.lock(first, None).ok_or(EINVAL)?;
            // SAFETY: `items[1]` is on this sublist, then empty; `items[0]` is on it.
            let deleted = unsafe {
                [
                    guard.del(items.get(1)),
                    guard.del(items.get(1)),
                    guard.del(items.get(0)),
                ]
            };
            (deleted, guard.nr_items())
        };
        let deleted_other = {
            let mut guard = lru.lock(other, None).ok_or(EINVAL)?;
            // SAFETY: `items[2]` is on this sublist.
            unsafe { guard.del(items.get(2)) }
        };
        assert_eq!(seen, (true, first));
        assert_eq!(added, [true, true, false]);
        assert_eq!(nr, 2);
        assert!(added_other);
        if other != first {
            assert_eq!(counts, (2, 1));
        } else {
            assert_eq!(counts.0, 3);
        }
        assert_eq!(deleted, [true, false, true]);
        assert_eq!(nr_left, if other != first { 0 } else { 1 });
        assert!(deleted_other);
        assert_eq!(count_node(&lru, first) + count_node(&lru, other), 0);
        // Node ids that are not: no sublist is read past, none locked.
        assert_eq!(count_node(&lru, -1), 0);
        assert_eq!(count_node(&lru, nr_node_ids() as i32), 0);
        assert!(lru.lock(-1, None).is_none());
        assert!(lru.lock(nr_node_ids() as i32, None).is_none());
        Ok(())
    }

    /// The guard's interrupt disable is counted, as `SpinLockIrq`'s: dropping it before a
    /// `SpinLockIrq` guard taken after it leaves interrupts disabled until that one goes too.
    #[test]
    fn guards_drop_in_any_order() -> Result {
        use crate::sync::{
            new_spinlock_irq,
            SpinLockIrq, //
        };

        let lru = new_lru(false)?;
        let lock = KBox::pin_init(new_spinlock_irq!(0u32), GFP_KERNEL)?;
        // Nothing is asserted under a guard: the block returns what it saw.
        let (under_both, under_inner) = {
            let guard = lru
                .lock(nodes_with_memory().next().unwrap_or(0), None)
                .ok_or(EINVAL)?;
            let mut inner = SpinLockIrq::lock(&lock);
            let under_both = irqs_disabled();
            drop(guard);
            // The list_lru guard went first: interrupts must stay off under `inner`.
            let under_inner = irqs_disabled();
            *inner += 1;
            (under_both, under_inner)
        };
        let after = irqs_disabled();
        // On PREEMPT_RT the locks leave interrupts enabled, as `spin_lock_irq_disable()` does.
        assert_eq!(
            (under_both, under_inner),
            (!cfg!(CONFIG_PREEMPT_RT), !cfg!(CONFIG_PREEMPT_RT))
        );
        assert!(!after);
        Ok(())
    }
}
