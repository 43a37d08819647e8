// SPDX-License-Identifier: GPL-2.0

//! Folio batches.
//!
//! A `struct folio_batch` carries up to [`FOLIO_BATCH_SIZE`] folio pointers between the stages
//! of an mm operation, e.g. from the LRU code to the page allocator. The views here read and
//! write the C structure in place: no copy of the array, no allocation.
//!
//! C header: [`include/linux/folio_batch.h`](srctree/include/linux/folio_batch.h)

use crate::{
    bindings,
    error::{
        code::ENOSPC,
        Result, //
    },
    mm::folio::{
        Folio,
        RefState, //
    },
    types::{
        NotThreadSafe,
        Opaque, //
    }, //
};
use core::marker::PhantomData;

/// The number of folios a batch holds.
pub const FOLIO_BATCH_SIZE: usize = bindings::FOLIO_BATCH_SIZE as usize;

/// A wrapper for the kernel's `struct folio_batch`.
///
/// `S` is the state of the folios' reference counts ([`RefState`]):
/// [`Unreferenced`](crate::mm::folio::Unreferenced), all zero.
///
/// A `FolioBatch` value is a batch owned by Rust ([`FolioBatch::new`]). It has no destructor: a
/// batch dropped with folios in it leaks them.
/// A batch that C owns is seen through a shared reference with the lifetime of the C call,
/// [`FolioBatch::from_raw`]:
/// it cannot be moved out of, nor swapped with a batch that Rust owns, so its folios cannot
/// outlive the call.
///
/// ```ignore,compile_fail
/// use kernel::{bindings, mm::{folio::Unreferenced, folio_batch::FolioBatch}};
///
/// /// Would keep C's folio pointers in a batch that outlives the C call.
/// fn keep(ptr: *mut bindings::folio_batch) -> FolioBatch<Unreferenced> {
///     // SAFETY: Let `ptr` be a valid batch for the call.
///     let view = unsafe { FolioBatch::<Unreferenced>::from_raw(ptr) };
///     core::mem::replace(view, FolioBatch::new()) // error[E0308]: types differ in mutability
/// }
/// ```
///
/// It is neither [`Send`] nor [`Sync`]: the batches of C are per-CPU or on a task's stack, and
/// a batch of [`Unreferenced`](crate::mm::folio::Unreferenced) folios belongs to the freeing
/// path that filled it.
///
/// ```ignore,compile_fail
/// use kernel::mm::{folio::Unreferenced, folio_batch::FolioBatch};
///
/// fn is_send<T: Send>() {}
///
/// fn batch_is_send() {
///     is_send::<FolioBatch<Unreferenced>>(); // error[E0277]: not `Send`
/// }
/// ```
///
/// # Invariants
///
/// - `inner` is a valid `struct folio_batch` whose `nr` is at most [`FOLIO_BATCH_SIZE`].
/// - Its first `nr` entries point to valid folios (no null or xarray value entries) that stay
///   valid, in state `S`, while they are in the batch and the batch is borrowed.
#[repr(transparent)]
pub struct FolioBatch<S: RefState> {
    inner: Opaque<bindings::folio_batch>,
    _state: PhantomData<S>,
    _not_thread_safe: NotThreadSafe,
}

impl<S: RefState> FolioBatch<S> {
    /// Creates an empty batch owned by Rust: `folio_batch_init()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::mm::{
    ///     folio::Unreferenced,
    ///     folio_batch::{FolioBatch, FOLIO_BATCH_SIZE},
    /// };
    ///
    /// let batch = FolioBatch::<Unreferenced>::new();
    /// assert_eq!(batch.space(), FOLIO_BATCH_SIZE);
    /// assert_eq!(batch.iter().count(), 0);
    /// ```
    #[inline]
    // No `Default`: nothing needs one.
    #[expect(clippy::new_without_default)]
    pub const fn new() -> Self {
        // INVARIANT: An empty batch: all zeroes is `folio_batch_init()`'s state.
        Self {
            inner: Opaque::zeroed(),
            _state: PhantomData,
            _not_thread_safe: NotThreadSafe,
        }
    }

    /// Creates a view of a C `struct folio_batch` for `'a`.
    ///
    /// # Safety
    ///
    /// - `ptr` must point to a valid `struct folio_batch` that nothing else writes for `'a`,
    ///   whose `nr` is at most [`FOLIO_BATCH_SIZE`] (as `folio_batch_add()` keeps it).
    /// - Its first `nr` entries must point to valid folios ([`Folio::from_raw`]: not slabs),
    ///   none null: not the `fbatch` of `folio_batch_move_lru()` after it took folios out,
    ///   which leaves null holes.
    /// - Those folios must stay valid and in state `S` for `'a`: if `S` is
    ///   [`Unreferenced`](crate::mm::folio::Unreferenced), all have a reference count of zero,
    ///   and the caller is their freeing path.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::folio_batch) -> &'a Self {
        // CAST: `FolioBatch` is a transparent wrapper of `bindings::folio_batch`.
        // SAFETY: The caller guarantees that the pointer is valid, and not written elsewhere,
        // for `'a`.
        // INVARIANT: The caller guarantees `nr <= FOLIO_BATCH_SIZE` and the first `nr` entries.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the C `struct folio_batch`.
    ///
    /// C that writes the batch through it (`free_unref_folios()` and `folios_put_refs()` empty
    /// it) may only be given a batch that Rust owns and has borrowed mutably for the call: a view
    /// from [`FolioBatch::from_raw`] is one that nothing may write while it is borrowed.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::folio_batch {
        self.inner.get()
    }

    /// Returns the number of folios in the batch: `folio_batch_count()`.
    #[inline]
    fn len(&self) -> usize {
        // SAFETY: By the type invariants, `inner` is valid.
        usize::from(unsafe { (*self.as_raw()).nr })
    }

    /// Returns the number of folios that can still be added: `folio_batch_space()`.
    #[inline]
    pub fn space(&self) -> usize {
        FOLIO_BATCH_SIZE.saturating_sub(self.len())
    }

    /// Returns an iterator over the folios of the batch, in order.
    ///
    /// The folios are borrowed from the batch: none outlives a change to it.
    ///
    /// ```ignore,compile_fail
    /// use kernel::mm::{folio::Unreferenced, folio_batch::FolioBatch};
    ///
    /// fn first_after_reinit(batch: &mut FolioBatch<Unreferenced>) -> bool {
    ///     let first = batch.iter().next();
    ///     batch.reinit(); // error[E0502]: `*batch` is borrowed
    ///     first.is_some()
    /// }
    /// ```
    ///
    /// A batch whose count is above [`FOLIO_BATCH_SIZE`], which the type invariants forbid (a
    /// bad batch from C), warns once and yields nothing: which of its entries are folios is not
    /// known (past the ones added, a batch holds stale pointers, or nulls), and this one
    /// compare per batch keeps them from being used, and the array from being read past its
    /// end, where C's loops would read.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Folio<S>> + Clone + '_ {
        // SAFETY: By the type invariants, `inner` is valid.
        let folios = unsafe { &(*self.as_raw()).folios };
        let folios = folios.get(..self.len()).unwrap_or_else(|| {
            crate::do_once_lite! {
                crate::warn_on!(true);
            }
            &[]
        });
        folios.iter().map(|&folio| {
            // SAFETY: By the type invariants, none of the first `nr` entries is null. Saying so
            // keeps the compiler from testing each for null (`Option<&Folio>` has null as
            // `None`): one test per folio. A null entry from C breaks the invariant, as it
            // would break C's loops, which dereference it.
            unsafe { core::hint::assert_unchecked(!folio.is_null()) };
            // SAFETY: By the type invariants, the first `nr` entries point to valid folios in
            // state `S`, which stay so while the batch is borrowed.
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

    /// Adds a folio to the batch: `folio_batch_add()`.
    ///
    /// Returns the number of folios that can still be added after this one; when it is zero,
    /// the batch must be processed before the next add.
    ///
    /// # Safety
    ///
    /// `folio` must stay valid, in state `S`, for as long as the batch holds it.
    ///
    /// # Errors
    ///
    /// Returns `Err(ENOSPC)` and leaves the batch unchanged when it is already full.
    #[inline]
    pub unsafe fn push(&mut self, folio: &Folio<S>) -> Result<usize> {
        let len = self.len();
        if len >= FOLIO_BATCH_SIZE {
            return Err(ENOSPC);
        }
        let batch = self.as_raw();
        // SAFETY: By the type invariants, `inner` is valid and `len < FOLIO_BATCH_SIZE`;
        // `&mut self` makes the access unique.
        // INVARIANT: The folio is not null, and the caller keeps it valid and in state `S`;
        // `nr` becomes at most `FOLIO_BATCH_SIZE`, as `len < FOLIO_BATCH_SIZE`.
        unsafe {
            (*batch).folios[len] = folio.as_raw();
            (*batch).nr += 1;
        }
        Ok(self.space())
    }
}

#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
#[macros::kunit_tests(rust_mm_folio_batch)]
mod tests {
    use super::*;
    use crate::mm::folio::{
        testing::FrozenFolio,
        Unreferenced, //
    };

    #[test]
    fn push_until_full() -> Result {
        let Ok(folio) = FrozenFolio::alloc(2) else {
            crate::kunit::mark_skipped(c"cannot allocate and freeze a folio");
            return Ok(());
        };
        let mut batch = FolioBatch::<Unreferenced>::new();
        for n in 1..=FOLIO_BATCH_SIZE {
            // SAFETY: `folio` stays frozen until after the batch is dropped.
            assert_eq!(unsafe { batch.push(&folio) }, Ok(FOLIO_BATCH_SIZE - n));
        }
        // SAFETY: As above.
        assert_eq!(unsafe { batch.push(&folio) }, Err(ENOSPC));
        assert_eq!(batch.len(), FOLIO_BATCH_SIZE);
        assert_eq!(batch.iter().len(), FOLIO_BATCH_SIZE);
        assert!(batch
            .iter()
            .all(|f| f.as_raw() == folio.as_raw() && f.order() == 2));
        batch.reinit();
        assert!(batch.len() == 0 && batch.space() == FOLIO_BATCH_SIZE);

        // A view of a C batch sees what C wrote.
        // SAFETY: As above.
        unsafe { batch.push(&folio)? };
        // SAFETY: `batch` is a valid batch of one folio that `folio` keeps frozen, and it is not
        // written while `view` lives.
        let view = unsafe { FolioBatch::<Unreferenced>::from_raw(batch.as_raw()) };
        assert_eq!(view.len(), 1);
        assert!(view.iter().all(|f| f.as_raw() == folio.as_raw()));
        Ok(())
    }

    /// A batch whose count C left above the array's size yields no folio, neither the entries
    /// of its array nor what lies past it. It also warns, once per boot: a second run of the
    /// suite is quiet, so only "no more than once" is checked, not the warning itself.
    #[test]
    fn bad_count_stays_in_the_array() -> Result {
        let Ok(folio) = FrozenFolio::alloc(0) else {
            crate::kunit::mark_skipped(c"cannot allocate and freeze a folio");
            return Ok(());
        };
        let mut batch = FolioBatch::<Unreferenced>::new();
        for _ in 0..FOLIO_BATCH_SIZE {
            // SAFETY: `folio` stays frozen until after the batch is dropped.
            unsafe { batch.push(&folio)? };
        }
        // SAFETY: A KUnit test is running in this thread.
        let test = unsafe { bindings::kunit_get_current_test() };
        // SAFETY: No other suppression is active in this test; the warning expected is counted,
        // not printed, until `kunit_end_suppress_warning()`.
        let suppressed = unsafe { bindings::kunit_start_suppress_warning(test) };
        // SAFETY: Breaks the type invariants on purpose, as a bad C batch would; nothing reads
        // the batch but `iter()` until the count is set back.
        unsafe { (*batch.as_raw()).nr = (FOLIO_BATCH_SIZE + 4) as u8 };
        let (len, seen) = (batch.iter().len(), batch.iter().count());
        let all_ours = batch.iter().all(|f| f.as_raw() == folio.as_raw());
        // SAFETY: As above.
        unsafe { (*batch.as_raw()).nr = FOLIO_BATCH_SIZE as u8 };
        // SAFETY: `suppressed` is null or the handle that `kunit_start_suppress_warning()` gave.
        let warned = unsafe {
            let warned = bindings::kunit_suppressed_warning_count(suppressed);
            bindings::kunit_end_suppress_warning(test, suppressed);
            warned
        };
        assert_eq!((len, seen, all_ours), (0, 0, true));
        // At most once (not at all without `CONFIG_BUG`).
        assert!(warned <= i32::from(cfg!(CONFIG_BUG)));
        Ok(())
    }
}
