// SPDX-License-Identifier: GPL-2.0

//! Lists of folios, and the flag of folios whose free waits for an RCU grace period.
//!
//! The reclaim and free paths keep folios they own on lists linked by the folios' `lru` field;
//! [`FolioList`] is a view of such a list. `PG_rcu_free` marks the folios that the page
//! allocator frees only after an RCU grace period (mm/rcu_free.rs keeps them on such lists).
//!
//! C headers: [`include/linux/list.h`](srctree/include/linux/list.h),
//! [`include/linux/page-flags.h`](srctree/include/linux/page-flags.h)

use crate::{
    bindings,
    mm::folio::{
        Folio,
        RefState,
        Referenced,
        Unreferenced, //
    },
    types::Opaque, //
};
use core::marker::PhantomData;

impl<S: RefState> Folio<S> {
    /// Returns whether the folio's free waits for an RCU grace period (`PG_rcu_free`): always
    /// false without `CONFIG_PAGE_RCU_FREE`.
    #[inline]
    pub fn test_rcu_free(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_test_rcu_free(self.as_raw()) }
    }
}

impl Folio<Referenced> {
    /// Sets `PG_rcu_free`: when the folio's reference count reaches zero, the page allocator
    /// frees it only after an RCU grace period. A no-op without `CONFIG_PAGE_RCU_FREE`.
    ///
    /// # Safety
    ///
    /// The folio must be one the page allocator's folio free paths free (`__folio_put()`,
    /// `folios_put_refs()`, reclaim): not a hugetlb or zone device folio.
    #[inline]
    pub unsafe fn set_rcu_free(&self) {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio that somebody holds
        // a reference to; the caller guarantees the rest.
        unsafe { bindings::folio_set_rcu_free(self.as_raw()) }
    }
}

impl Folio<Unreferenced> {
    /// Clears `PG_rcu_free`.
    ///
    /// # Safety
    ///
    /// No reader that relies on the flag may still use the folio: an RCU grace period has passed
    /// since its reference count reached zero.
    #[inline]
    pub unsafe fn clear_rcu_free(&self) {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio with a reference count
        // of zero that only we see; the caller guarantees the rest.
        unsafe { bindings::folio_clear_rcu_free(self.as_raw()) }
    }
}

/// A list of folios linked by their `lru` field, as the reclaim and free paths keep them.
///
/// A view of a C `struct list_head` that its folios point back to: it is only ever handed out
/// as `&FolioList`, never `&mut FolioList`, so that it cannot be moved (swapped with another
/// list, which would leave both lists' items pointing to the wrong head). Its methods change the
/// list through the shared reference: [`FolioList::from_raw`] requires the lock that protects
/// the list to be held for as long as the reference lives, and the type is neither [`Send`] nor
/// [`Sync`], so that the reference stays in the context that holds the lock.
///
/// `S` is the state of the folios' reference counts: isolated folios on a reclaim list are
/// [`Referenced`], folios waiting to be freed [`Unreferenced`].
///
/// ```ignore,compile_fail
/// use kernel::mm::folio_list::FolioList;
///
/// /// Two lists from [`FolioList::from_raw`], whose locks are held.
/// fn swap_lists(a: &FolioList, b: &FolioList) {
///     core::mem::swap(a, b); // error[E0308]: expected `&mut _`, found `&FolioList`
/// }
/// ```
///
/// # Invariants
///
/// `inner` is an initialised `list_head`, protected by a lock that the holder of the reference
/// holds, and every entry on it is the `lru` link of a valid folio in state `S` that belongs to
/// the holder of the list.
#[repr(transparent)]
pub struct FolioList<S: RefState = Referenced> {
    inner: Opaque<bindings::list_head>,
    _state: PhantomData<S>,
}

impl<S: RefState> FolioList<S> {
    /// Creates a view of a C list of folios linked by `lru`.
    ///
    /// # Safety
    ///
    /// - `ptr` must point to an initialised `list_head` whose entries are the `lru` links of
    ///   valid folios in state `S` (as [`Folio::from_raw`] requires), which belong to the holder
    ///   of the list.
    /// - The caller must hold what protects the list (its lock) for `'a`, in the context the
    ///   reference is used in; nothing but [`FolioList`] views of it may change it for `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::list_head) -> &'a Self {
        // CAST: `FolioList` is a transparent wrapper of `bindings::list_head`.
        // SAFETY: The caller guarantees validity and the lock for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the C `struct list_head`.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::list_head {
        self.inner.get()
    }

    /// Returns whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        // SAFETY: By the type invariants, `inner` is an initialised `list_head`.
        unsafe { bindings::list_empty(self.as_raw()) }
    }

    /// Adds `folio` at the tail of the list.
    ///
    /// # Safety
    ///
    /// The caller must own `folio` and its `lru` link: the folio is on no list (off the LRU, its
    /// reference count zero or the folio isolated), and it stays valid, in state `S`, while it is
    /// on the list.
    #[inline]
    pub unsafe fn push_tail(&self, folio: &Folio<S>) {
        // SAFETY: By the type invariants, `inner` is initialised and its lock held; the caller
        // owns the link.
        // INVARIANT: The folio now belongs to the holder of the list.
        unsafe { bindings::folio_list_add_tail(folio.as_raw(), self.as_raw()) }
    }

    /// Takes the folio at the head of the list off it.
    ///
    /// The folio is the caller's now: dropping the result loses it (it is neither on the list
    /// nor freed).
    #[inline]
    #[must_use]
    pub fn pop_front(&self) -> Option<&Folio<S>> {
        // SAFETY: By the type invariants, `inner` is initialised, its lock held, and its entries
        // are folios' `lru` links.
        let folio = unsafe { bindings::folio_list_pop(self.as_raw()) };
        // SAFETY: By the type invariants, a folio on the list is valid, in state `S`, and
        // belonged to the holder of the list, which now holds it through the borrow of `self`.
        (!folio.is_null()).then(|| unsafe { Folio::from_raw(folio) })
    }

    /// Moves every folio of `other` to the tail of this list, leaving `other` empty. Nothing
    /// changes if `other` is this list.
    #[inline]
    pub fn splice_tail(&self, other: &FolioList<S>) {
        if core::ptr::eq(self, other) {
            return;
        }
        // SAFETY: By the type invariants, both heads are initialised and their locks held; they
        // are distinct.
        unsafe { bindings::list_splice_tail_init(other.as_raw(), self.as_raw()) }
    }
}
