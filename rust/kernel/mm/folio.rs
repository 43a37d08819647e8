// SPDX-License-Identifier: GPL-2.0

//! Folios.
//!
//! A minimal view of `struct folio`: the queries the mm mechanisms written in Rust need. It does
//! not map folios (no `kmap_local_folio()` users yet) and knows nothing of file positions.
//!
//! A folio is seen in one of two states, and each has its own type:
//!
//! - [`Folio`] (that is, `Folio<Referenced>`): a folio with a reference that outlives the
//!   borrow. It is reference counted: [`ARef<Folio>`] owns a reference ([`Folio::alloc`] returns
//!   one), and `&Folio` can be turned into one with `folio_get()`.
//! - `Folio<Unreferenced>`: a folio whose reference count has reached zero, on its way to the
//!   page allocator. No reference can be taken to it and only its freeing path changes it (a
//!   lockless page cache reader may still read a `PG_rcu_free` one until a grace period ends),
//!   so its state can be read and changed without the races of a live folio; `folio_get()` on
//!   it would be a bug, and it has no [`ARef`].
//!
//! C header: [`include/linux/mm.h`](srctree/include/linux/mm.h)

use crate::{
    alloc::{
        AllocError,
        Flags, //
    },
    bindings,
    mm::memcg::MemCgroup,
    sync::{
        aref::{
            ARef,
            AlwaysRefCounted, //
        },
        rcu, //
    },
    types::Opaque, //
};
use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

/// What is known of the reference count of a [`Folio`] (or of the folios of a batch).
///
/// This trait is sealed: [`Referenced`] and [`Unreferenced`] are its only implementations.
pub trait RefState: private::Sealed {}

/// The folio has a reference that outlives the borrow: its reference count is not zero.
pub enum Referenced {}

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
/// fn revive(folio: &Folio<Unreferenced>) -> ARef<Folio<Unreferenced>> {
///     ARef::from(folio) // error[E0277]: not `AlwaysRefCounted`
/// }
/// ```
pub enum Unreferenced {}

impl RefState for Referenced {}
impl RefState for Unreferenced {}

mod private {
    pub trait Sealed {}
    impl Sealed for super::Referenced {}
    impl Sealed for super::Unreferenced {}
}

/// A wrapper for the kernel's `struct folio`.
///
/// `S` says what is known of its reference count: [`Referenced`] (the default, not zero) or
/// [`Unreferenced`] (zero). A `&Folio<S>` is a borrowed view: it neither takes nor drops a
/// reference; [`ARef<Folio>`] owns one.
///
/// # Invariants
///
/// - `inner` is a valid `struct folio` (the head page of a folio, not a tail page) that does not
///   change into another folio (by a split or a free) for the lifetime of every reference to
///   this value.
/// - It is a folio in the page allocator's sense, not a slab or another memory descriptor that
///   overlays `struct page` (slabs are allocated frozen, at a reference count of zero, and their
///   `memcg_data` is `obj_exts`): the memcg queries rely on it in both states.
/// - If `S` is [`Referenced`], its reference count is not zero for that lifetime: somebody holds
///   a reference that outlives the borrow.
/// - If `S` is [`Unreferenced`], its reference count is zero for that lifetime, and the holder
///   of the borrow is the one path that frees the folio.
#[repr(transparent)]
pub struct Folio<S: RefState = Referenced> {
    inner: Opaque<bindings::folio>,
    _state: PhantomData<S>,
}

// SAFETY: A referenced folio is not tied to a thread: its reference can be dropped anywhere.
unsafe impl Send for Folio<Referenced> {}

// SAFETY: The safe methods on `&Folio<Referenced>` read flags, counts and fields that C also
// reads without a lock, or change the reference count atomically.
unsafe impl Sync for Folio<Referenced> {}

/// The reference count that a bad increment sets, as `refcount_t` saturates
/// (`REFCOUNT_SATURATED`, `INT_MIN / 2`): far from zero both ways, so that the puts and gets
/// that follow do not bring it back to zero.
const REF_SATURATED: i32 = i32::MIN / 2;

// SAFETY: By the type invariants, the reference count of a `Folio<Referenced>` is not zero, so
// taking a reference is allowed and keeps the folio alive until the matching `folio_put()`.
unsafe impl AlwaysRefCounted for Folio<Referenced> {
    #[inline]
    fn inc_ref(&self) {
        // `folio_get()` checks the count only with `CONFIG_DEBUG_VM`, but safe code can take any
        // number of references (`mem::forget()` of `ARef` clones): check always, as
        // `refcount_inc()` does. The caller has a reference, so the count after ours is at
        // least two; one or less is an increment from zero (the folio was freed: C put a
        // reference it did not own), from a count that puts made negative (the same, puts
        // further), or an overflow (from `i32::MAX`). One compare per reference taken.
        // SAFETY: By the type invariants, the folio is valid and its reference count not zero.
        let count = unsafe { bindings::folio_ref_inc_return(self.as_raw()) };
        if count <= 1 {
            self.saturate_ref(count);
        }
    }

    #[inline]
    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference to the folio, which it gives up.
        unsafe { bindings::folio_put(obj.cast().as_ptr()) }
    }
}

impl Folio<Referenced> {
    /// Saturates `count`, a reference count of one or less after an increment, and says why in
    /// `refcount_t`'s words: an increment of zero ("addition on 0"; a use after free: C put a
    /// reference it did not own, and the folio may already be another's), of a count that puts
    /// made negative ("underflow"; the same, puts further), or an overflow ("saturated", the
    /// folio is leaked: every other count, from `i32::MAX` past `i32::MIN`, by one or by C's
    /// larger additions such as `GUP_PIN_COUNTING_BIAS`). A count near the saturated value was
    /// saturated before and reported then; it is set back without a report.
    ///
    /// Saturation is best effort, as it is for `refcount_t`: it keeps the count far from zero
    /// against the gets and puts of references, but the page allocator sets the count of a page
    /// it hands out, and `folio_ref_unfreeze()` sets the count of a frozen folio, whatever they
    /// were. The report is what is certain.
    ///
    /// `refcount_t` warns once per kind for the whole kernel; this warns for each folio, as
    /// each is another folio leaked or used after its free, and a folio's count is saturated
    /// (quiet) after its first report.
    #[cold]
    #[inline(never)]
    fn saturate_ref(&self, count: i32) {
        // SAFETY: By the type invariants, the folio is valid. A concurrent `folio_put()` may be
        // lost to this store: the count stays far from zero either way.
        unsafe { bindings::folio_set_count(self.as_raw(), REF_SATURATED) };
        if count.abs_diff(REF_SATURATED) < 1 << 28 {
            return;
        }
        // The message, then the warning with the backtrace of the reference taken (the later
        // reports, GUP's test of a count below zero or the page allocator's of a bad page,
        // would point elsewhere): Rust has no `WARN(cond, fmt)`, binder pairs them the same way.
        if count == 1 {
            crate::pr_err!("folio refcount: addition on 0; use-after-free\n");
        } else if count > REF_SATURATED / 2 {
            crate::pr_err!("folio refcount: underflow; use-after-free\n");
        } else {
            crate::pr_err!("folio refcount: saturated; leaking memory\n");
        }
        crate::warn_on!(true);
    }
}

impl<S: RefState> Folio<S> {
    /// Creates a [`Folio`] view of a C `struct folio`.
    ///
    /// # Safety
    ///
    /// - `ptr` must point to a valid folio that stays valid (is not freed and does not change into
    ///   another folio, e.g. by a split) for `'a`; not to a slab or another memory descriptor
    ///   that overlays `struct page`.
    /// - If `S` is [`Referenced`], its reference count must stay above zero for `'a`: the caller
    ///   owns a reference that nobody can freeze away (`folio_ref_freeze()` in reclaim and
    ///   migration counts the page cache's references), so that taking another reference
    ///   ([`ARef`]) is always sound.
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

    /// Returns whether the folio is made of more than one page.
    #[inline]
    pub fn is_large(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_test_large(self.as_raw()) }
    }

    /// Returns whether the folio is a large folio that rmap tracks (`PG_large_rmappable`): only
    /// such folios of order two or more have a deferred split list link.
    ///
    /// # Safety
    ///
    /// The folio must be large: the flag is in its second page, which a folio of one page does
    /// not have (its `page[1]` is another folio's memory).
    #[inline]
    pub unsafe fn is_large_rmappable_unchecked(&self) -> bool {
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
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio; computing the
        // address of a field does not access it.
        unsafe { bindings::folio_deferred_list(self.as_raw()) }
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

impl Folio {
    /// Allocates a folio of `order`: `folio_alloc()`. The returned [`ARef`] owns its only
    /// reference; dropping it frees the folio.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{mm::folio::Folio, prelude::*};
    ///
    /// let folio = Folio::alloc(GFP_KERNEL, 2)?;
    /// assert_eq!((folio.order(), folio.nr_pages()), (2, 4));
    /// assert!(folio.is_large());
    /// // A second reference. The counts are lower bounds: a PFN walker (compaction) may hold a
    /// // speculative reference for a moment.
    /// let other = folio.clone();
    /// assert!(other.ref_count() >= 2);
    /// drop(folio);
    /// drop(other); // The last reference frees the folio.
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    pub fn alloc(flags: Flags, order: u32) -> Result<ARef<Self>, AllocError> {
        // The allocator warns (a panic with `panic_on_warn`) on an order it cannot serve.
        if order > bindings::MAX_PAGE_ORDER {
            return Err(AllocError);
        }
        // SAFETY: Depending on `flags`, this call may sleep; it has no other requirement.
        let folio = unsafe { bindings::folio_alloc(flags.as_raw(), order) };
        let folio = NonNull::new(folio).ok_or(AllocError)?;
        // INVARIANT: A new folio, valid, with a reference (ours) that the `ARef` owns.
        // SAFETY: We own the folio's only reference and hand it to the `ARef`.
        Ok(unsafe { ARef::from_raw(folio.cast()) })
    }
}

#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
#[macros::kunit_tests(rust_mm_folio)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// The warnings a bad reference gives: one, none without `CONFIG_BUG`.
    const WARNS: i32 = cfg!(CONFIG_BUG) as i32;

    /// Sets the count of a new folio to `count`, takes `clones` references on it, and returns the
    /// count after them and the warnings they gave. The references are not tracked, and the
    /// folio is leaked (a page per case), as a saturated `refcount_t` leaks its object: a
    /// speculative reference (`folio_try_get()` of a lockless page cache lookup that found the
    /// folio before its last free, or of a PFN walker) may be taken and put at any time, and its
    /// put would free the folio under us if the count were set back to our one reference.
    fn clone_from_count(count: i32, clones: usize) -> Result<(i32, i32)> {
        let folio = Folio::alloc(GFP_KERNEL, 0)?;
        // Frozen at our one reference, the count is zero and no speculative reference is held
        // (the freeze fails while one is) or can be taken: the count set below wipes out none.
        // A speculative reference held right now is rare; the case fails rather than wait.
        // SAFETY: The folio is valid and ours; frozen, it is set to a count below.
        if !unsafe { bindings::folio_ref_freeze(folio.as_raw(), 1) } {
            // Not frozen: our reference is put as usual.
            return Err(EAGAIN);
        }
        // SAFETY: A KUnit test is running in this thread.
        let test = unsafe { bindings::kunit_get_current_test() };
        // SAFETY: No other suppression is active in this test; the warnings expected are
        // counted, not printed, until `kunit_end_suppress_warning()`.
        let suppressed = unsafe { bindings::kunit_start_suppress_warning(test) };
        // This breaks the invariants of `Folio<Referenced>` on purpose (zero or a negative count
        // are C's bad puts, which the cases reproduce), as `ref_count()` and the clones below
        // need only a valid `struct folio`. A speculative reference taken from now on is put
        // back by its holder, and the folio is never freed (leaked below): such a pair moves the
        // count by one and back, except where the count is one of the bad ones set here, where
        // it meets what any bad count meets (`put_page_testzero()` of a count of zero is a
        // `VM_BUG_ON`): the window is these few instructions, as for `refcount_t` saturation.
        // SAFETY: The folio is valid, ours and frozen: no reference is wiped out.
        unsafe { bindings::folio_set_count(folio.as_raw(), count) };
        for _ in 0..clones {
            core::mem::forget(folio.clone());
        }
        let after = folio.ref_count();
        core::mem::forget(folio);
        // SAFETY: `suppressed` is null or the handle that `kunit_start_suppress_warning()` gave.
        let warned = unsafe {
            let warned = bindings::kunit_suppressed_warning_count(suppressed);
            bindings::kunit_end_suppress_warning(test, suppressed);
            warned
        };
        Ok((after, warned))
    }

    /// A reference taken at the largest count saturates the count instead of wrapping it towards
    /// zero, where the folio would be freed while referenced, and warns once: another reference
    /// taken on the saturated count keeps it saturated, without a warning.
    #[test]
    fn ref_overflow_saturates() -> Result {
        assert_eq!(clone_from_count(i32::MAX, 2)?, (REF_SATURATED, WARNS));
        Ok(())
    }

    /// A reference taken on a count of zero (a folio that C freed under us: the increment
    /// would revive it) warns as `refcount_t` warns on an addition on 0, and saturates the
    /// count so that the folio is not freed a second time.
    #[test]
    fn ref_from_zero_warns() -> Result {
        assert_eq!(clone_from_count(0, 1)?, (REF_SATURATED, WARNS));
        Ok(())
    }

    /// The same for a count that puts made negative, a put further (a C double put).
    #[test]
    fn ref_from_negative_warns() -> Result {
        assert_eq!(clone_from_count(-1, 1)?, (REF_SATURATED, WARNS));
        Ok(())
    }

    /// A count that an addition larger than one wrapped (C's `GUP_PIN_COUNTING_BIAS`), far from
    /// both zero and the saturated value, warns and saturates too.
    #[test]
    fn ref_wrapped_far_warns() -> Result {
        assert_eq!(
            clone_from_count(i32::MIN + 1000, 1)?,
            (REF_SATURATED, WARNS)
        );
        Ok(())
    }
}
