// SPDX-License-Identifier: GPL-2.0

//! Folio batches.
//!
//! A `struct folio_batch` carries up to [`FOLIO_BATCH_SIZE`] folio pointers between the stages
//! of an mm operation, e.g. from the LRU code to the page allocator. The views here read and
//! write the C structure in place: no copy of the array, no allocation.
//!
//! C header: [`include/linux/folio_batch.h`](srctree/include/linux/folio_batch.h)

use crate::{bindings, mm::folio::Folio, types::Opaque};
use core::marker::PhantomData;

/// The number of folios a batch holds.
pub const FOLIO_BATCH_SIZE: usize = bindings::FOLIO_BATCH_SIZE as usize;

/// What is known of the reference counts of the folios of a [`FolioBatch`].
///
/// This trait is sealed: [`Referenced`] and [`Unreferenced`] are its only implementations.
pub trait RefState: private::Sealed {}

/// The folios of the batch may have any reference count (the general case).
pub enum Referenced {}

/// Every folio of the batch has reached a reference count of zero and is on its way to being
/// freed: only the freeing path can see it, so its state can be read and changed without the
/// races of a live folio. The deferred split unqueue requires this state.
pub enum Unreferenced {}

impl RefState for Referenced {}
impl RefState for Unreferenced {}

mod private {
    pub trait Sealed {}
    impl Sealed for super::Referenced {}
    impl Sealed for super::Unreferenced {}
}

/// A wrapper for the kernel's `struct folio_batch`.
///
/// `S` says what is known of the folios' reference counts: [`Referenced`] (nothing) or
/// [`Unreferenced`] (all zero).
///
/// # Invariants
///
/// - `inner` is a valid `struct folio_batch` whose `nr` is at most [`FOLIO_BATCH_SIZE`].
/// - Its first `nr` entries point to valid folios (no null or xarray value entries).
/// - If `S` is [`Unreferenced`], every one of those folios has a reference count of zero.
#[repr(transparent)]
pub struct FolioBatch<S: RefState = Referenced> {
    inner: Opaque<bindings::folio_batch>,
    _state: PhantomData<S>,
}

impl<S: RefState> FolioBatch<S> {
    /// Creates a mutable view of a C `struct folio_batch`.
    ///
    /// # Safety
    ///
    /// - `ptr` must point to a valid `struct folio_batch` that nothing else accesses for `'a`.
    /// - Its first `nr` entries must point to valid folios that stay valid for `'a`.
    /// - If `S` is [`Unreferenced`], all of them must have a reference count of zero.
    #[inline]
    pub unsafe fn from_raw_mut<'a>(ptr: *mut bindings::folio_batch) -> &'a mut Self {
        // CAST: `FolioBatch` is a transparent wrapper of `bindings::folio_batch`.
        // SAFETY: The caller guarantees that the pointer is valid and unaliased for `'a`.
        unsafe { &mut *ptr.cast() }
    }

    /// Returns a raw pointer to the C `struct folio_batch`.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::folio_batch {
        self.inner.get()
    }

    /// Returns the number of folios in the batch: `folio_batch_count()`.
    #[inline]
    pub fn len(&self) -> usize {
        // SAFETY: By the type invariants, `inner` is valid.
        usize::from(unsafe { (*self.as_raw()).nr })
    }

    /// Returns whether the batch holds no folio.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Returns the number of folios that can still be added: `folio_batch_space()`.
    #[inline]
    pub fn space(&self) -> usize {
        FOLIO_BATCH_SIZE - self.len()
    }

    /// Returns an iterator over the folios of the batch, in order.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Folio> + '_ {
        // SAFETY: By the type invariants, `inner` is valid and `nr <= FOLIO_BATCH_SIZE`.
        let folios = unsafe { &(*self.as_raw()).folios };
        folios[..self.len()].iter().map(|&folio| {
            if folio.is_null() {
                // SAFETY: By the type invariants, none of the first `nr` entries is null. Saying
                // so lets the compiler drop the null test of the `Option<&Folio>` per element.
                unsafe { core::hint::unreachable_unchecked() }
            }
            // SAFETY: By the type invariants, the first `nr` entries point to valid folios,
            // which stay valid while the batch is borrowed.
            unsafe { Folio::from_raw(folio) }
        })
    }

    /// Empties the batch, keeping its `percpu_pvec_drained` state: `folio_batch_reinit()`.
    #[inline]
    pub fn reinit(&mut self) {
        let batch = self.as_raw();
        // SAFETY: By the type invariants, `inner` is valid; `&mut self` makes the access unique.
        unsafe {
            (*batch).nr = 0;
            (*batch).i = 0;
        }
    }
}

impl FolioBatch<Referenced> {
    /// Creates an empty batch owned by Rust: `folio_batch_init()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::mm::folio_batch::{FolioBatch, FOLIO_BATCH_SIZE};
    ///
    /// let batch = FolioBatch::new();
    /// assert!(batch.is_empty());
    /// assert_eq!(batch.space(), FOLIO_BATCH_SIZE);
    /// assert_eq!(batch.iter().count(), 0);
    /// ```
    #[inline]
    pub const fn new() -> Self {
        // INVARIANT: An empty batch.
        Self {
            inner: Opaque::new(bindings::folio_batch {
                nr: 0,
                i: 0,
                percpu_pvec_drained: false,
                folios: [core::ptr::null_mut(); FOLIO_BATCH_SIZE],
            }),
            _state: PhantomData,
        }
    }

    /// Adds a folio to the batch: `folio_batch_add()`.
    ///
    /// Returns the number of folios that can still be added after this one; when it is zero,
    /// the batch must be processed before the next add.
    ///
    /// # Errors
    ///
    /// Returns `Err(ENOSPC)` and leaves the batch unchanged when it is already full.
    ///
    /// # Safety
    ///
    /// `folio` must stay valid for as long as the batch holds it.
    #[inline]
    pub unsafe fn push(&mut self, folio: &Folio) -> crate::error::Result<usize> {
        let len = self.len();
        if len == FOLIO_BATCH_SIZE {
            return Err(crate::error::code::ENOSPC);
        }
        let batch = self.as_raw();
        // SAFETY: By the type invariants, `inner` is valid and `len < FOLIO_BATCH_SIZE`;
        // `&mut self` makes the access unique. The caller keeps `folio` valid, which maintains
        // the invariant on the first `nr` entries.
        unsafe {
            (*batch).folios[len] = folio.as_raw();
            (*batch).nr += 1;
        }
        Ok(self.space())
    }
}

impl FolioBatch<Referenced> {
    /// Views the batch as one whose folios all have a reference count of zero.
    ///
    /// # Safety
    ///
    /// Every folio in the batch must have a reference count of zero, and keep it for as long as
    /// the returned view is used.
    #[inline]
    pub unsafe fn assume_unreferenced(&mut self) -> &mut FolioBatch<Unreferenced> {
        // SAFETY: The caller guarantees the extra invariant of `Unreferenced`; the layouts are
        // the same (`PhantomData` only).
        unsafe { FolioBatch::from_raw_mut(self.as_raw()) }
    }
}

impl Default for FolioBatch<Referenced> {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
#[macros::kunit_tests(rust_mm_folio_batch)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[test]
    fn push_until_full() -> Result {
        // SAFETY: Allocates a folio; no requirements.
        let raw = unsafe { bindings::folio_alloc(bindings::GFP_KERNEL, 2) };
        if raw.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: We hold a reference until the `folio_put()` below.
        let folio = unsafe { Folio::from_raw(raw) };
        let mut batch = FolioBatch::new();
        for n in 1..=FOLIO_BATCH_SIZE {
            // SAFETY: The folio outlives the batch.
            assert_eq!(unsafe { batch.push(folio) }, Ok(FOLIO_BATCH_SIZE - n));
        }
        // SAFETY: As above.
        assert_eq!(unsafe { batch.push(folio) }, Err(ENOSPC));
        assert_eq!(batch.len(), FOLIO_BATCH_SIZE);
        assert_eq!(batch.iter().len(), FOLIO_BATCH_SIZE);
        assert!(batch.iter().all(|f| f.as_raw() == raw && f.order() == 2));
        batch.reinit();
        assert!(batch.is_empty() && batch.space() == FOLIO_BATCH_SIZE);

        // A view of a C batch sees what C wrote.
        // SAFETY: `batch` is a valid, unaliased batch of valid folios.
        let view = unsafe { FolioBatch::<Referenced>::from_raw_mut(batch.as_raw()) };
        // SAFETY: As above.
        unsafe { view.push(folio)? };
        assert_eq!(batch.len(), 1);
        // SAFETY: Drops our reference.
        unsafe { bindings::folio_put(raw) };
        Ok(())
    }
}
