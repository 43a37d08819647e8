// SPDX-License-Identifier: GPL-2.0

//! Folios.
//!
//! A minimal view of `struct folio`: the queries the mm mechanisms written in Rust need. It does
//! not map folios (no `kmap_local_folio()` users yet) and knows nothing of file positions.
//!
//! What is known of a folio's reference count is part of its type (the `S` of [`Folio`]). The
//! one state so far is `Folio<Unreferenced>`: a folio whose reference count has reached zero, on
//! its way to the page allocator. No reference can be taken to it and only its freeing path
//! changes it (a lockless page cache reader may still read a `PG_rcu_free` one until a grace
//! period ends), so its state can be read and changed without the races of a live folio;
//! `folio_get()` on it would be a bug, and it has no [`ARef`](crate::sync::aref::ARef).
//!
//! C header: [`include/linux/mm.h`](srctree/include/linux/mm.h)

use crate::{
    bindings,
    mm::memcg::MemCgroup,
    sync::rcu,
    types::Opaque, //
};
use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

/// What is known of the reference count of a [`Folio`] (or of the folios of a batch or a list).
///
/// This trait is sealed: [`Unreferenced`] is its only implementation.
pub trait RefState: private::Sealed {}

/// The folio's reference count has reached zero and stays zero for the borrow: the folio is on
/// its way to being freed, and only the freeing path changes it, as the deferred split unqueue
/// does.
///
/// No reference can be taken to such a folio:
///
/// ```ignore,compile_fail
/// use kernel::{
///     mm::folio::{Folio, Unreferenced},
///     sync::aref::ARef, //
/// };
///
/// /// Would take a reference to a folio on its way to the page allocator.
/// // error[E0277]: `Folio<Unreferenced>` is not `AlwaysRefCounted`, which `ARef` requires.
/// fn revive(folio: &Folio<Unreferenced>) -> ARef<Folio<Unreferenced>> {
///     ARef::from(folio)
/// }
/// ```
pub enum Unreferenced {}

impl RefState for Unreferenced {}

mod private {
    pub trait Sealed {}
    impl Sealed for super::Unreferenced {}
}

/// A wrapper for the kernel's `struct folio`.
///
/// `S` says what is known of its reference count ([`RefState`]): [`Unreferenced`], zero. A
/// `&Folio<S>` is a borrowed view: it neither takes nor drops a reference.
///
/// # Invariants
///
/// - `inner` is a valid `struct folio` (the head page of a folio, not a tail page) that does not
///   change into another folio (by a split or a free) for the lifetime of every reference to
///   this value.
/// - It is a folio in the page allocator's sense, not a slab or another memory descriptor that
///   overlays `struct page` (slabs are allocated frozen, at a reference count of zero, and their
///   `memcg_data` is `obj_exts`): the memcg queries rely on it.
/// - If `S` is [`Unreferenced`], its reference count is zero for that lifetime, and the holder
///   of the borrow is the one path that frees the folio.
#[repr(transparent)]
pub struct Folio<S: RefState> {
    inner: Opaque<bindings::folio>,
    _state: PhantomData<S>,
}

impl<S: RefState> Folio<S> {
    /// Creates a [`Folio`] view of a C `struct folio`.
    ///
    /// # Safety
    ///
    /// - `ptr` must point to a valid folio that stays valid (is not freed and does not change into
    ///   another folio, e.g. by a split) for `'a`; not to a slab or another memory descriptor
    ///   that overlays `struct page`.
    /// - If `S` is [`Unreferenced`], its reference count must be zero for `'a`, and the caller
    ///   must be the path that frees it (or own it frozen).
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *const bindings::folio) -> &'a Self {
        // CAST: `Folio<S>` is a transparent wrapper of `bindings::folio`.
        // SAFETY: The caller guarantees that the pointer is valid for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the C `struct folio`.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::folio {
        self.inner.get()
    }

    /// Returns the allocation order of the folio: 0 for a single page.
    #[inline]
    pub fn order(&self) -> u32 {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_order(self.as_raw()) }
    }

    /// Returns the number of base pages in the folio.
    #[inline]
    pub fn nr_pages(&self) -> usize {
        // `folio_order()` is at most `MAX_FOLIO_ORDER`, below 32 on every architecture:
        // `wrapping_shl()` only drops the shift check, a panic under the callers' locks.
        1usize.wrapping_shl(self.order())
    }

    /// Returns the NUMA node the folio's memory is on.
    #[inline]
    pub fn nid(&self) -> i32 {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_nid(self.as_raw()) }
    }

    /// Returns the folio's reference count: always zero for a `Folio<Unreferenced>`.
    ///
    /// Unless the caller holds the only reference, the value can be stale as soon as it is read.
    #[inline]
    pub fn ref_count(&self) -> i32 {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_ref_count(self.as_raw()) }
    }

    /// Returns whether the folio is a large folio that rmap tracks (`PG_large_rmappable`): only
    /// such folios of order two or more have a deferred split list link.
    ///
    /// # Safety
    ///
    /// The folio must be large: the flag is in its second page, which a folio of one page does
    /// not have (its `page[1]` is another folio's memory).
    #[inline]
    unsafe fn is_large_rmappable_unchecked(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio, large as the caller
        // guarantees.
        unsafe { bindings::folio_test_large_rmappable(self.as_raw()) }
    }

    /// Returns whether the folio can be on the THP deferred split queue: large rmappable and of
    /// order two or more (an order-1 folio has no room for the list link).
    #[inline]
    pub fn may_be_deferred_split(&self) -> bool {
        // SAFETY: A folio of order two or more is large.
        self.order() > 1 && unsafe { self.is_large_rmappable_unchecked() }
    }
}

#[cfg(CONFIG_TRANSPARENT_HUGEPAGE)]
impl<S: RefState> Folio<S> {
    /// Returns whether the folio is partially mapped (`PG_partially_mapped`), without the test
    /// that it is large: the caller has made it (the unqueue's folios may be deferred split).
    ///
    /// # Safety
    ///
    /// The folio must be large (the flag is in its second page).
    #[inline]
    pub unsafe fn is_partially_mapped_unchecked(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio, large as the caller
        // guarantees.
        unsafe { bindings::folio_test_partially_mapped(self.as_raw()) }
    }

    /// Clears `PG_partially_mapped`.
    ///
    /// # Safety
    ///
    /// [`Folio::may_be_deferred_split`] must be true, and the caller must serialise against the
    /// other writers of the flag: hold the deferred split list_lru lock of the folio's sublist.
    #[inline]
    pub unsafe fn clear_partially_mapped(&self) {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio; the caller
        // guarantees the rest.
        unsafe { bindings::folio_clear_partially_mapped(self.as_raw()) }
    }

    /// Returns the folio's deferred split list link, `folio->_deferred_list`.
    ///
    /// The link lives in the folio's third page: it exists only when
    /// [`Folio::may_be_deferred_split`] is true.
    #[inline]
    pub fn deferred_list(&self) -> *mut bindings::list_head {
        // SAFETY: The field is inside `*self.as_raw()`, the `struct folio` (four `struct page`s)
        // that `&self` covers by the type invariants, large folio or not; taking its address does
        // not access it.
        unsafe {
            &raw mut (*self.as_raw())
                .__bindgen_anon_3
                .__bindgen_anon_1
                ._deferred_list
        }
    }

    /// Returns whether the folio's deferred split list link is empty, read without the lock:
    /// C's `data_race(list_empty(&folio->_deferred_list))`.
    ///
    /// Exact only if nobody can queue or unqueue the folio concurrently, as when its reference
    /// count is zero; otherwise a hint that the locked path must confirm. The read may race with
    /// plain stores to the link (`list_add()`, `list_del_init()`, and memcg reparenting's
    /// `list_splice_init()`, which rewrites the link of a queued folio whatever its reference
    /// count): it is done in C, where `data_race()` says that the race is intended, as Rust has
    /// no way to say so. No store changes whether the link of a folio with a reference count of
    /// zero is empty except under the sublist's lock (the shrinker's private dispose list is
    /// unlocked, but holds a reference to each of its folios).
    ///
    /// # Safety
    ///
    /// [`Folio::may_be_deferred_split`] must be true: the link is in the folio's third page.
    #[inline]
    pub unsafe fn deferred_list_is_empty_racy(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio, which the caller
        // guarantees to have a deferred split link.
        unsafe { bindings::folio_deferred_list_empty_racy(self.as_raw()) }
    }
}

impl<S: RefState> Folio<S> {
    /// Returns the memory cgroup the folio is charged to, or `None` if it is not charged (always
    /// without `CONFIG_MEMCG`): `folio_memcg_check()`.
    ///
    /// The memcg is borrowed from the RCU read lock `_rcu`, which keeps it from being freed, and
    /// not beyond it. A folio is charged through an objcg, whose memcg changes when the memcg is
    /// reparented: the result is the folio's memcg at the time of the call, which only
    /// `cgroup_mutex` or the lruvec lock would keep it.
    ///
    /// The result is the folio's memcg only if the folio's objcg binding is stable
    /// (`folio_memcg()`'s rules: the folio locked, isolated from the LRU, or held exclusively,
    /// as its freeing path holds it at a reference count of zero); otherwise it may be the memcg
    /// of an objcg the folio was just charged to or uncharged from. Either way the memcg is
    /// valid for `'a`: an objcg and a memcg are freed only after a grace period.
    #[inline]
    pub fn memcg<'a>(&self, _rcu: &'a rcu::Guard) -> Option<&'a MemCgroup> {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio. `_rcu` is the RCU
        // read lock that `obj_cgroup_memcg()` requires, and keeps the objcg read from the folio,
        // stable binding or not, from being freed (`kfree_rcu()`). `folio_memcg_check()`, not
        // `folio_memcg()`: it reads `memcg_data` once (`READ_ONCE()`), as a binding that is not
        // stable may change under it.
        let memcg = unsafe { bindings::folio_memcg_check(self.as_raw()) };
        // SAFETY: A memory cgroup is freed only after a grace period, which `_rcu` holds off for
        // `'a`.
        NonNull::new(memcg).map(|memcg| unsafe { MemCgroup::from_raw(memcg.as_ptr()) })
    }

    /// Returns whether the folio is charged to a memory cgroup.
    ///
    /// A plain read of `memcg_data`, as `folio_memcg_charged()` does: it is exact where the
    /// folio's memcg binding is stable (see [`Folio::memcg`]), as for a folio that only its
    /// freeing path sees; otherwise a charge or an uncharge may race with it, and the result is
    /// only a hint.
    #[inline]
    pub fn is_memcg_charged(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_memcg_charged(self.as_raw()) }
    }
}

/// Folios for the KUnit tests of the mm abstractions and of their users in mm/: KUnit only
/// (`CONFIG_RUST_MM_KUNIT_TEST`), not an interface. Public as those users are crates of their
/// own, whose KUnit options depend on this one.
#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
pub mod testing {
    use super::{
        Folio,
        Unreferenced, //
    };
    use crate::{
        bindings,
        error::{
            code::{
                EBUSY,
                EINVAL,
                ENOMEM, //
            },
            Error,
            Result, //
        }, //
    };
    use core::{
        mem::ManuallyDrop,
        ops::Deref,
        ptr::{
            self,
            NonNull, //
        }, //
    };

    /// A folio whose last reference the test dropped, frozen at a reference count of zero as
    /// the free paths have it: a `Folio<Unreferenced>` that the test holds as its freeing path.
    /// Dropping it gives it a reference again and puts that, which frees it through
    /// `folio_put()`.
    ///
    /// # Invariants
    ///
    /// A valid folio with a reference count of zero that this value owns: nobody else can take
    /// a reference to it or free it.
    pub struct FrozenFolio(NonNull<Folio<Unreferenced>>);

    impl FrozenFolio {
        /// Allocates a folio of `order` with `folio_alloc()` (not charged to a memory cgroup)
        /// and freezes it. Returns `Err(EINVAL)` for an order above `MAX_PAGE_ORDER`, which
        /// the page allocator would warn about.
        pub fn alloc(order: u32) -> Result<Self> {
            if order > bindings::MAX_PAGE_ORDER {
                return Err(EINVAL);
            }
            // SAFETY: `GFP_KERNEL` may sleep, as a test may; no other requirement.
            let folio = unsafe { bindings::folio_alloc(bindings::GFP_KERNEL, order) };
            let folio = NonNull::new(folio).ok_or(ENOMEM)?;
            // SAFETY: A new folio whose only reference we own and give up.
            unsafe { Self::freeze(folio) }
        }

        /// Drops the caller's reference to `folio`, which must be the last: the folio is frozen,
        /// as the free paths have it, until the returned value is dropped, which frees it.
        ///
        /// Returns `Err(EBUSY)` if somebody else held a reference too (a PFN walker's speculative
        /// one): the caller's reference is dropped all the same, and theirs frees the folio.
        ///
        /// # Safety
        ///
        /// `folio` must point to a valid folio, not a slab, whose reference the caller owns and
        /// gives up.
        pub unsafe fn freeze(folio: NonNull<bindings::folio>) -> Result<Self> {
            // SAFETY: The caller owns the reference, which this drops.
            if unsafe { bindings::folio_put_testzero(folio.as_ptr()) } {
                // INVARIANT: Our put made the count zero: nobody else has the folio.
                Ok(Self(folio.cast()))
            } else {
                Err(EBUSY)
            }
        }
    }

    impl Deref for FrozenFolio {
        type Target = Folio<Unreferenced>;

        fn deref(&self) -> &Folio<Unreferenced> {
            // SAFETY: By the type invariants, the folio is valid, unreferenced, and ours until
            // `self` is dropped.
            unsafe { self.0.as_ref() }
        }
    }

    impl Drop for FrozenFolio {
        fn drop(&mut self) {
            let folio = self.0.as_ptr().cast();
            // SAFETY: By the type invariants, we own the folio at a reference count of zero.
            unsafe {
                bindings::folio_ref_unfreeze(folio, 1);
                bindings::folio_put(folio);
            }
        }
    }

    /// A new folio, charged to a memory cgroup unless the memory controller is disabled, with a
    /// reference that the test owns: what a test queues or maps before it freezes the folio.
    /// Dropping it puts the reference, which frees the folio unless somebody else holds one (a
    /// PFN walker's speculative reference, or the deferred split shrinker's).
    ///
    /// # Invariants
    ///
    /// A valid folio from the page allocator (not a slab), one of whose references this value
    /// owns.
    pub struct ChargedFolio(NonNull<bindings::folio>);

    impl ChargedFolio {
        /// Allocates a folio of `order` on node `nid` (`__GFP_THISNODE`) and charges it with
        /// `mem_cgroup_charge(folio, NULL, ...)`, as page cache insertion charges folios. KUnit
        /// runs a case in a kernel thread, with no mm and no active memcg, so the charge goes to
        /// the root memory cgroup, whoever started the run. Returns `Err(EINVAL)` for an order
        /// above `MAX_PAGE_ORDER`, `Err(ENOMEM)` if the node has no free folio of that order (a
        /// node without memory has none; for an offline one the page allocator also prints a
        /// warning), or the charge's error.
        ///
        /// # Safety
        ///
        /// `nid` must be a possible node (`node_possible()`): the page allocator reads its
        /// `NODE_DATA`. The possible nodes are fixed at boot, so the node of a folio, or a node
        /// seen with memory (`N_MEMORY`), stays one.
        pub unsafe fn alloc_on(order: u32, nid: i32) -> Result<Self> {
            if order > bindings::MAX_PAGE_ORDER {
                return Err(EINVAL);
            }
            let gfp = bindings::GFP_KERNEL | bindings::__GFP_THISNODE | bindings::__GFP_NOWARN;
            // SAFETY: The caller guarantees that `nid` is a possible node, whose `NODE_DATA`
            // exists.
            let folio = unsafe { bindings::__folio_alloc_node(gfp, order, nid) };
            let folio = NonNull::new(folio).ok_or(ENOMEM)?;
            // SAFETY: A new, unmapped folio whose only reference we own, not charged yet (no
            // `__GFP_ACCOUNT`).
            let ret = unsafe {
                bindings::mem_cgroup_charge(folio.as_ptr(), ptr::null_mut(), bindings::GFP_KERNEL)
            };
            if ret != 0 {
                // SAFETY: We own the folio's only reference, which this puts: the folio is freed.
                unsafe { bindings::folio_put(folio.as_ptr()) };
                return Err(Error::from_errno(ret));
            }
            // INVARIANT: A new folio from the page allocator, whose reference we own.
            Ok(Self(folio))
        }

        /// The folio, for the C functions that take one with a reference held
        /// (`deferred_split_folio()`).
        #[inline]
        pub fn as_raw(&self) -> *mut bindings::folio {
            self.0.as_ptr()
        }

        /// Drops the reference and freezes the folio: see [`FrozenFolio::freeze`], whose
        /// `Err(EBUSY)` this returns. The folio, queued or not, is then freed, and taken off
        /// the deferred split queue, by the last put of whoever holds the other reference.
        pub fn freeze(self) -> Result<FrozenFolio> {
            let folio = ManuallyDrop::new(self).0;
            // SAFETY: By the type invariants, `folio` is a valid folio, not a slab, and we own a
            // reference to it, which `ManuallyDrop` gives up to `freeze()`.
            unsafe { FrozenFolio::freeze(folio) }
        }
    }

    impl Drop for ChargedFolio {
        fn drop(&mut self) {
            // SAFETY: By the type invariants, we own a reference, which this puts.
            unsafe { bindings::folio_put(self.0.as_ptr()) };
        }
    }
}

#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
#[macros::kunit_tests(rust_mm_folio)]
mod tests {
    use super::{
        testing::{
            ChargedFolio,
            FrozenFolio, //
        },
        *, //
    };
    use crate::{
        kunit::mark_skipped,
        mm::memcg,
        prelude::*, //
    };

    /// The queries of a folio that its freeing path holds, at a reference count of zero.
    #[test]
    fn frozen_folio_queries() -> Result {
        let (Ok(small), Ok(large)) = (FrozenFolio::alloc(0), FrozenFolio::alloc(2)) else {
            mark_skipped(c"cannot allocate and freeze the folios");
            return Ok(());
        };
        assert_eq!((small.order(), small.nr_pages()), (0, 1));
        assert_eq!((large.order(), large.nr_pages()), (2, 4));
        assert_eq!((small.ref_count(), large.ref_count()), (0, 0));
        // `folio_alloc()` makes a large folio rmappable (with THP), as the anonymous and page
        // cache folios are: of order two or more, it may be deferred split.
        assert!(!small.may_be_deferred_split());
        assert_eq!(
            large.may_be_deferred_split(),
            cfg!(CONFIG_TRANSPARENT_HUGEPAGE)
        );
        #[cfg(CONFIG_TRANSPARENT_HUGEPAGE)]
        {
            // SAFETY: `large` may be deferred split, so it is large and has the link.
            let never_queued = unsafe {
                (
                    large.is_partially_mapped_unchecked(),
                    large.deferred_list_is_empty_racy(),
                )
            };
            assert_eq!(never_queued, (false, true));
        }
        // Not charged: no memcg. Nothing is asserted under the RCU read lock.
        let memcg = {
            let rcu = rcu::read_lock();
            large.memcg(&rcu).is_some()
        };
        assert!(!memcg && !large.is_memcg_charged());
        Ok(())
    }

    /// A charged folio has the memcg it was charged to, the root one here (not its objcg, nor
    /// anything else `memcg_data` points to), unless the memory controller is disabled. On the
    /// node asked for.
    #[test]
    fn charged_folio_memcg() -> Result {
        let Ok(small) = FrozenFolio::alloc(0) else {
            mark_skipped(c"cannot allocate and freeze a folio");
            return Ok(());
        };
        // SAFETY: `small` is a folio on the node: a possible node.
        let charged = match unsafe { ChargedFolio::alloc_on(2, small.nid()) }
            .and_then(ChargedFolio::freeze)
        {
            Ok(charged) => charged,
            Err(e) if e == ENOMEM || e == EBUSY => {
                mark_skipped(c"cannot allocate, charge and freeze a folio");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let memcg = {
            let rcu = rcu::read_lock();
            charged.memcg(&rcu).map(MemCgroup::as_raw)
        };
        let enabled = !memcg::is_disabled();
        assert_eq!((charged.nid(), charged.order()), (small.nid(), 2));
        assert_eq!(
            (memcg.is_some(), charged.is_memcg_charged()),
            (enabled, enabled)
        );
        #[cfg(CONFIG_MEMCG)]
        if let Some(memcg) = memcg {
            // SAFETY: `root_mem_cgroup` is set at boot, before any test runs, and never changes.
            assert!(core::ptr::eq(memcg, unsafe { bindings::root_mem_cgroup }));
        }
        Ok(())
    }
}
