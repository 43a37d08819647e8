// SPDX-License-Identifier: GPL-2.0

//! Lists of folios, and the flag of folios whose free waits for an RCU grace period.
//!
//! The reclaim and free paths keep folios they own on lists linked by the folios' `lru` field;
//! [`FolioList`] is a view of such a list. `PG_rcu_free` marks the folios that the page
//! allocator frees only after an RCU grace period (mm/rcu_free_rust.rs keeps them on such lists).
//!
//! C headers: [`include/linux/list.h`](srctree/include/linux/list.h),
//! [`include/linux/page-flags.h`](srctree/include/linux/page-flags.h)

use crate::{
    bindings,
    container_of,
    mm::{
        folio::{
            Folio,
            RefState,
            Unreferenced, //
        },
        folio_batch::FolioBatch,
    },
    types::{
        NotThreadSafe,
        Opaque, //
    }, //
};
use core::marker::PhantomData;

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

/// Returns the address of `folio->lru`, the link of a folio on a [`FolioList`].
///
/// # Safety
///
/// `folio` must point to a valid folio.
#[inline]
unsafe fn lru_link(folio: *mut bindings::folio) -> *mut bindings::list_head {
    // SAFETY: The caller guarantees a valid folio; taking a field's address does not access it.
    unsafe {
        &raw mut (*folio)
            .__bindgen_anon_1
            .__bindgen_anon_1
            .__bindgen_anon_1
            .lru
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
/// `S` is the state of the folios' reference counts ([`RefState`]): [`Unreferenced`], folios
/// waiting to be freed.
///
/// ```ignore,compile_fail
/// use kernel::mm::{folio::Unreferenced, folio_list::FolioList};
///
/// /// Two lists from [`FolioList::from_raw`], whose locks are held.
/// fn swap_lists(a: &FolioList<Unreferenced>, b: &FolioList<Unreferenced>) {
///     core::mem::swap(a, b); // error[E0308]: expected `&mut _`, found `&FolioList`
/// }
/// ```
///
/// Nor can a view leave the context that holds the list's lock:
///
/// ```ignore,compile_fail
/// use kernel::mm::{folio::Unreferenced, folio_list::FolioList};
///
/// fn is_send<T: Send>() {}
///
/// fn view_is_send() {
///     is_send::<&FolioList<Unreferenced>>(); // error[E0277]: not `Send`
/// }
/// ```
///
/// # Invariants
///
/// `inner` is an initialised `list_head`, protected by a lock that the holder of the reference
/// holds, and every entry on it is the `lru` link of a valid folio in state `S` that belongs to
/// the holder of the list.
#[repr(transparent)]
pub struct FolioList<S: RefState> {
    inner: Opaque<bindings::list_head>,
    _state: PhantomData<S>,
    _not_thread_safe: NotThreadSafe,
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
    /// - A folio that leaves the list through the view ([`FolioList::move_to_batch`]) stays the
    ///   holder's, valid and in state `S`, beyond `'a`, until the holder frees it or changes
    ///   its state.
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
        // SAFETY: `folio` is valid.
        let link = unsafe { lru_link(folio.as_raw()) };
        // SAFETY: By the type invariants, `inner` is initialised and its lock held; the caller
        // owns the link.
        // INVARIANT: The folio now belongs to the holder of the list.
        unsafe { bindings::list_add_tail(link, self.as_raw()) }
    }

    /// Moves folios from the head of the list to the tail of `batch`, in order, until the list
    /// is empty or the batch full. Returns the number of pages moved (of all the folios moved),
    /// counted as they move: a caller that accounts pages needs no second pass over the batch.
    ///
    /// What owned the folios on the list owns them in the batch: the holder of the list, which
    /// must free them or put them on a list again (a batch that is dropped with folios in it
    /// leaks them).
    ///
    /// # Safety
    ///
    /// `batch` must be the list's holder's, which frees the folios of both under the same rule:
    /// a folio of a list freed after a grace period must not move into a batch freed at once.
    #[inline]
    pub unsafe fn move_to_batch(&self, batch: &mut FolioBatch<S>) -> usize {
        let head = self.as_raw();
        let mut moved: usize = 0;
        while batch.space() > 0 {
            // SAFETY: By the type invariants, `inner` is initialised and its lock held.
            let first = unsafe { (*head).next };
            if core::ptr::eq(first, head) {
                break;
            }
            // SAFETY: By the type invariants, an entry of the list is the `lru` link of a folio.
            let folio = unsafe {
                container_of!(
                    first,
                    bindings::folio,
                    __bindgen_anon_1.__bindgen_anon_1.__bindgen_anon_1.lru
                )
            };
            // SAFETY: `first` is on the list, whose lock is held.
            unsafe { bindings::list_del(first) };
            // SAFETY: By the type invariants, a folio on the list is valid, in state `S`, and
            // belongs to the holder of the list, whose batch (the caller's guarantee) holds it
            // now and keeps it so: only the holder frees it or changes its state.
            let folio = unsafe { Folio::from_raw(folio) };
            // Under the callers' locks: no overflow check (a panic), as C counts.
            moved = moved.wrapping_add(folio.nr_pages());
            // SAFETY: As above. The batch has space, so it takes the folio: no `Err` to handle
            // (nor an assertion that could panic under the callers' locks).
            let _ = unsafe { batch.push(folio) };
        }
        moved
    }

    /// Moves every folio of `other` to the tail of this list, leaving `other` empty. Nothing
    /// changes if `other` is this list.
    ///
    /// # Safety
    ///
    /// Both lists must have the same holder, which frees their folios under the same rule: a
    /// folio waiting for a grace period must not move to a list that is freed at once.
    #[inline]
    pub unsafe fn splice_tail(&self, other: &FolioList<S>) {
        if core::ptr::eq(self, other) {
            return;
        }
        // SAFETY: By the type invariants, both heads are initialised and their locks held; they
        // are distinct.
        unsafe { bindings::list_splice_tail_init(other.as_raw(), self.as_raw()) }
    }
}

#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
#[macros::kunit_tests(rust_mm_folio_list)]
mod tests {
    use super::*;
    use crate::{
        mm::{
            folio::testing::FrozenFolio,
            folio_batch::FOLIO_BATCH_SIZE, //
        },
        prelude::*, //
    };

    /// The folios of `batch`, as pointers.
    fn raw<S: RefState>(batch: &FolioBatch<S>) -> KVec<*mut bindings::folio> {
        let mut raw = KVec::new();
        for folio in batch.iter() {
            // The tests' batches are small: no allocation failure to expect.
            let _ = raw.push(folio.as_raw(), GFP_KERNEL);
        }
        raw
    }

    #[test]
    fn push_splice_move() -> Result {
        // `filler` fills the batch below. Allocated before the lists are linked, and dropped
        // after the batch.
        let (Ok(f0), Ok(f1), Ok(f2), Ok(filler)) = (
            FrozenFolio::alloc(0),
            FrozenFolio::alloc(2),
            FrozenFolio::alloc(0),
            FrozenFolio::alloc(0),
        ) else {
            crate::kunit::mark_skipped(c"cannot allocate and freeze the folios");
            return Ok(());
        };
        let folios = [f0, f1, f2];
        // Reached through raw pointers only once C links them (no `&mut` after that).
        let heads = core::pin::pin!([const { Opaque::<bindings::list_head>::uninit() }; 2]);
        for head in heads.iter() {
            // SAFETY: `head` is valid for writes and pinned until the end of the test.
            unsafe { bindings::INIT_LIST_HEAD(head.get()) };
        }
        // SAFETY: Initialised heads that only this test uses, and only through these views, with
        // folios that `folios` keeps frozen until after the lists are empty again.
        let (a, b) = unsafe {
            (
                FolioList::<Unreferenced>::from_raw(heads[0].get()),
                FolioList::<Unreferenced>::from_raw(heads[1].get()),
            )
        };
        assert!(a.is_empty() && b.is_empty());
        // SAFETY: Frozen folios, on no list (never on the LRU), that this test owns.
        unsafe {
            a.push_tail(&folios[0]);
            a.push_tail(&folios[1]);
            b.push_tail(&folios[2]);
        }
        // SAFETY: The lists and the batch below are this test's, which frees nothing from them.
        unsafe { a.splice_tail(a) };
        assert!(!a.is_empty());
        // SAFETY: As above.
        unsafe { a.splice_tail(b) };
        assert!(b.is_empty());

        // A batch with room for two: the third folio stays on the list. The pages are counted:
        // one, four (the order-2 folio), then one.
        let mut batch = FolioBatch::<Unreferenced>::new();
        for _ in 0..FOLIO_BATCH_SIZE - 2 {
            // SAFETY: `filler` stays frozen until after the batch is dropped.
            unsafe { batch.push(&filler)? };
        }
        // SAFETY: As above.
        assert_eq!(unsafe { a.move_to_batch(&mut batch) }, 5);
        assert!(!a.is_empty());
        let moved = raw(&batch);
        assert_eq!(
            moved[FOLIO_BATCH_SIZE - 2..],
            [folios[0].as_raw(), folios[1].as_raw()]
        );
        batch.reinit();
        // SAFETY: As above.
        assert_eq!(unsafe { a.move_to_batch(&mut batch) }, 1);
        assert_eq!(raw(&batch)[..], [folios[2].as_raw()]);
        assert!(a.is_empty());
        // SAFETY: As above.
        assert_eq!(unsafe { a.move_to_batch(&mut batch) }, 0);
        Ok(())
    }
}
