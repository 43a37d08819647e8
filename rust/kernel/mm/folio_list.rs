// SPDX-License-Identifier: GPL-2.0

//! Lists of folios, and the flag of folios whose free waits for an RCU grace period.
//!
//! The reclaim and free paths keep folios they own on lists linked by the folios' `lru` field;
//! [`FolioList`] is a view of such a list. `PG_rcu_free` marks the folios that the page
//! allocator frees only after an RCU grace period (mm/rcu_free.rs keeps them on such lists).
//!
//! C headers: [`include/linux/list.h`](srctree/include/linux/list.h),
//! [`include/linux/page-flags.h`](srctree/include/linux/page-flags.h)

use crate::{bindings, mm::folio::Folio, types::Opaque};

impl Folio {
    /// Returns whether the folio's free waits for an RCU grace period (`PG_rcu_free`): always
    /// false without `CONFIG_PAGE_RCU_FREE`.
    #[inline]
    pub fn test_rcu_free(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_test_rcu_free(self.as_raw()) }
    }

    /// Sets `PG_rcu_free`: when the folio's reference count reaches zero, the page allocator
    /// frees it only after an RCU grace period. A no-op without `CONFIG_PAGE_RCU_FREE`.
    ///
    /// # Safety
    ///
    /// The folio must be one the page allocator's folio free paths free (`__folio_put()`,
    /// `folios_put_refs()`, reclaim): not a hugetlb or zone device folio, and the caller must hold
    /// a reference to it.
    #[inline]
    pub unsafe fn set_rcu_free(&self) {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio; the caller
        // guarantees the rest.
        unsafe { bindings::folio_set_rcu_free(self.as_raw()) }
    }

    /// Clears `PG_rcu_free`.
    ///
    /// # Safety
    ///
    /// No reader that relies on the flag may still use the folio: the folio's reference count is
    /// zero and an RCU grace period has passed since it reached zero.
    #[inline]
    pub unsafe fn clear_rcu_free(&self) {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio; the caller
        // guarantees the rest.
        unsafe { bindings::folio_clear_rcu_free(self.as_raw()) }
    }
}

/// A list of folios linked by their `lru` field, as the reclaim and free paths keep them.
///
/// A view of a C `struct list_head`. Whoever holds the lock that protects the head has the
/// `&mut FolioList`, and with it the folios on the list: nobody else links or unlinks them.
///
/// # Invariants
///
/// `inner` is an initialised `list_head`, and every entry on it is the `lru` link of a valid
/// folio that belongs to the holder of the list.
#[repr(transparent)]
pub struct FolioList {
    inner: Opaque<bindings::list_head>,
}

impl FolioList {
    /// Creates a mutable view of a C list of folios linked by `lru`.
    ///
    /// # Safety
    ///
    /// `ptr` must point to an initialised `list_head` whose entries are the `lru` links of valid
    /// folios, and the caller must hold what protects the list (its lock) for `'a`.
    #[inline]
    pub unsafe fn from_raw_mut<'a>(ptr: *mut bindings::list_head) -> &'a mut Self {
        // CAST: `FolioList` is a transparent wrapper of `bindings::list_head`.
        // SAFETY: The caller guarantees validity and exclusive access for `'a`.
        unsafe { &mut *ptr.cast() }
    }

    /// Returns whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        // SAFETY: By the type invariants, `inner` is an initialised `list_head`.
        unsafe { bindings::list_empty(self.inner.get()) }
    }

    /// Adds `folio` at the tail of the list.
    ///
    /// # Safety
    ///
    /// The caller must own `folio` and its `lru` link: the folio is on no list (off the LRU, its
    /// reference count zero or the folio isolated), and it stays valid while it is on the list.
    #[inline]
    pub unsafe fn push_tail(&mut self, folio: &Folio) {
        // SAFETY: By the type invariants, `inner` is initialised; the caller owns the link.
        // INVARIANT: The folio now belongs to the holder of the list.
        unsafe { bindings::folio_list_add_tail(folio.as_raw(), self.inner.get()) }
    }

    /// Takes the folio at the head of the list off it.
    #[inline]
    pub fn pop_front(&mut self) -> Option<&Folio> {
        // SAFETY: By the type invariants, `inner` is initialised and its entries are folios'
        // `lru` links; `&mut self` makes the access exclusive.
        let folio = unsafe { bindings::folio_list_pop(self.inner.get()) };
        // SAFETY: By the type invariants, a folio on the list is valid and belonged to the
        // holder of the list, which now holds it through the borrow of `self`.
        (!folio.is_null()).then(|| unsafe { Folio::from_raw(folio) })
    }

    /// Moves every folio of `other` to the tail of this list, leaving `other` empty.
    #[inline]
    pub fn splice_tail(&mut self, other: &mut FolioList) {
        // SAFETY: By the type invariants, both heads are initialised and distinct (two `&mut`).
        unsafe { bindings::list_splice_tail_init(other.inner.get(), self.inner.get()) }
    }
}
