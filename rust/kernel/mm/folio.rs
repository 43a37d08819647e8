// SPDX-License-Identifier: GPL-2.0

//! Folios.
//!
//! A minimal view of `struct folio`: the queries the mm mechanisms written in Rust need. It does
//! not map folios (no `kmap_local_folio()` users yet) and knows nothing of file positions.
//!
//! C header: [`include/linux/mm.h`](srctree/include/linux/mm.h)

use crate::{bindings, types::Opaque};

/// A wrapper for the kernel's `struct folio`.
///
/// A `&Folio` is a borrowed view: it neither takes nor drops a reference.
///
/// # Invariants
///
/// `inner` is a valid `struct folio` (the head page of a folio, not a tail page) for the lifetime
/// of every reference to this value.
#[repr(transparent)]
pub struct Folio {
    inner: Opaque<bindings::folio>,
}

impl Folio {
    /// Creates a [`Folio`] view of a C `struct folio`.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid folio that stays valid (is not freed and does not change into
    /// another folio, e.g. by a split) for `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *const bindings::folio) -> &'a Self {
        // CAST: `Folio` is a transparent wrapper of `bindings::folio`.
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
        1 << self.order()
    }

    /// Returns the NUMA node the folio's memory is on.
    #[inline]
    pub fn nid(&self) -> i32 {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_nid(self.as_raw()) }
    }

    /// Returns the folio's reference count.
    ///
    /// Unless the caller holds the only reference, or the count is zero and only the freeing
    /// path can see the folio, the value can be stale as soon as it is read.
    #[inline]
    pub fn ref_count(&self) -> i32 {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_ref_count(self.as_raw()) }
    }

    /// Returns whether the folio is made of more than one page.
    #[inline]
    pub fn test_large(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_test_large(self.as_raw()) }
    }

    /// Returns whether the folio is a large folio that rmap tracks (`PG_large_rmappable`): only
    /// such folios of order two or more have a deferred split list link.
    #[inline]
    pub fn test_large_rmappable(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_test_large_rmappable(self.as_raw()) }
    }

    /// Returns whether the folio can be on the THP deferred split queue: large rmappable and of
    /// order two or more (an order-1 folio has no room for the list link).
    #[inline]
    pub fn may_be_deferred_split(&self) -> bool {
        self.order() > 1 && self.test_large_rmappable()
    }
}

#[cfg(CONFIG_TRANSPARENT_HUGEPAGE)]
impl Folio {
    /// Returns whether the folio is partially mapped (`PG_partially_mapped`).
    ///
    /// Only meaningful when [`Folio::may_be_deferred_split`] is true.
    #[inline]
    pub fn test_partially_mapped(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
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
    /// the `data_race(list_empty(&folio->_deferred_list))` of C.
    ///
    /// Exact only if nobody can queue or unqueue the folio concurrently, as when its reference
    /// count is zero; otherwise a hint that the locked path must confirm.
    ///
    /// # Safety
    ///
    /// [`Folio::may_be_deferred_split`] must be true.
    #[inline]
    pub unsafe fn deferred_list_is_empty_racy(&self) -> bool {
        let head = self.deferred_list();
        // SAFETY: The caller guarantees that the folio has a deferred list link, which is a
        // valid, initialised `list_head`. The volatile read is `READ_ONCE()` of C.
        unsafe { core::ptr::read_volatile(&raw const (*head).next) }.cast_const()
            == head.cast_const()
    }
}

impl Folio {
    /// Returns the memory cgroup the folio is charged to, or null (always without
    /// `CONFIG_MEMCG`).
    ///
    /// # Safety
    ///
    /// The folio's memcg binding must be stable and the memcg kept alive while the returned
    /// pointer is used: e.g. under `rcu_read_lock()` with the folio's reference count at zero, or
    /// with the folio locked or isolated from the LRU.
    #[inline]
    pub unsafe fn memcg(&self) -> *mut bindings::mem_cgroup {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_memcg(self.as_raw()) }
    }

    /// Returns whether the folio is charged to a memory cgroup.
    #[inline]
    pub fn memcg_charged(&self) -> bool {
        // SAFETY: By the type invariants, `self.as_raw()` is a valid folio.
        unsafe { bindings::folio_memcg_charged(self.as_raw()) }
    }
}

/// Returns whether the memory controller is disabled (`cgroup_disable=memory`, or no
/// `CONFIG_MEMCG`).
#[inline]
pub fn mem_cgroup_disabled() -> bool {
    // SAFETY: Reads a static key; no requirements.
    unsafe { bindings::mem_cgroup_disabled() }
}
