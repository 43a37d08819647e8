// SPDX-License-Identifier: GPL-2.0

//! The deferred free of `PG_rcu_free` folios.
//!
//! A folio with `PG_rcu_free` may be read by a lockless page cache reader that found it under
//! `rcu_read_lock()` and took no reference. When its reference count reaches zero, the page
//! allocator's free paths (`__free_frozen_pages()` and `free_unref_folios()`) hand it here
//! instead of freeing it, and it is freed once an RCU grace period that started after that has
//! passed: no reader can still see it then.
//!
//! Each CPU keeps two lists of such folios (`struct rcu_free_pcp`, mm/rcu_free.h):
//!
//! - `open` takes the folios freed on the CPU. `open_cookie` is the full RCU state cookie
//!   (`get_state_synchronize_rcu_full()`) taken at the latest addition, so a grace period that
//!   satisfies it covers every folio on the list. A full cookie, because an expedited grace
//!   period does not satisfy the plain one that was taken while a normal grace period was in
//!   flight, the usual case: the drain before OOM would then free nothing.
//! - `closed` holds the folios of an earlier `open`, with its cookie.
//!
//! The CPU's `rcu_work` runs after a grace period: it frees `closed` if its cookie has passed,
//! moves `open` to `closed` once `closed` is empty and queues itself again while anything waits.
//! A folio waits one or two grace periods, and a steady stream of frees cannot keep a list from
//! ever being freed, as a single list whose cookie every free moves on would.
//!
//! When a CPU holds [`EXPEDITE_PAGES`] or more and the zone of the folio it just took is below
//! its low watermark, an expedited grace period frees all it holds. [`rcu_free_drain_all`] frees
//! everything that waits, on all CPUs, before the allocator declares OOM and before
//! `alloc_contig_range()` or memory offline find a range busy.
//!
//! The waiting pages are counted in `NR_FREE_RCU_PAGES` (`nr_free_rcu_pages` in `/proc/vmstat`),
//! the deferrals and expedited grace periods in the `rcu_free_deferred` and `rcu_free_expedited`
//! events.
//!
//! This is the engine of kernels with `CONFIG_PAGE_RCU_FREE_RUST`; `mm/rcu_free.c` implements the
//! same mechanism on the same storage for the others. The KUnit suite `rcu_free`
//! (`mm/tests/rcu_free_kunit.c`) runs through the C entry points of whichever is built, and
//! checks that both free the same folios in the same grace periods.
//!
//! C header: [`mm/rcu_free.h`](srctree/mm/rcu_free.h)

use kernel::{
    bindings,
    container_of,
    ffi::{
        c_long,
        c_ulong, //
    },
    mm::{
        folio::{
            Folio,
            Unreferenced, //
        },
        folio_batch::FolioBatch,
        folio_list::FolioList,
    },
    page::PAGE_SIZE,
    prelude::*,
    sizes::SZ_2M,
    types::{
        NotThreadSafe,
        Opaque, //
    }, //
};

/// Pages a CPU may hold before it expedites the grace period when memory runs short: 2 MiB
/// whatever the page size (512 pages of 4 KiB, 32 of 64 KiB).
const EXPEDITE_PAGES: c_ulong = SZ_2M / PAGE_SIZE;

/// One CPU's deferred frees (`struct rcu_free_pcp`): per-CPU storage of the page allocator,
/// initialised at boot (its lock, lists and works) and never freed. Its lists and counts are
/// reached only through a [`PcpGuard`], which holds its lock. It is not [`Sync`] (an [`Opaque`])
/// nor [`Send`] (raw pointers in the C struct), so a `&Pcp` cannot be put in a `static` or
/// handed to another thread: each entry point makes its own and keeps none beyond its return.
///
/// The KUnit suite's stubs hand the engine storage of their own through the same shims,
/// initialised by the suite and freed when its script ends, after the last call into the engine:
/// as no reference outlives the entry point that made it, none outlives that storage.
///
/// # Invariants
///
/// `inner` is the initialised `struct rcu_free_pcp` of a possible CPU.
#[repr(transparent)]
struct Pcp {
    inner: Opaque<bindings::rcu_free_pcp>,
}

impl Pcp {
    /// Creates a reference to one CPU's deferred frees.
    ///
    /// # Safety
    ///
    /// `ptr` must point to an initialised `struct rcu_free_pcp`, as the shims return it (a
    /// possible CPU's, or the KUnit suite's), and the storage must outlive `'a`: any lifetime
    /// within the engine's entry point that made the reference.
    #[inline]
    unsafe fn from_raw<'a>(ptr: *mut bindings::rcu_free_pcp) -> &'a Self {
        // CAST: `Pcp` is a transparent wrapper of `bindings::rcu_free_pcp`.
        // SAFETY: The caller guarantees initialised storage, alive for `'a`.
        // INVARIANT: As the caller guarantees.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the C `struct rcu_free_pcp`.
    #[inline]
    fn as_raw(&self) -> *mut bindings::rcu_free_pcp {
        self.inner.get()
    }

    /// Locks the deferred frees of the CPU this runs on.
    ///
    /// # Safety
    ///
    /// The storage the shims hand out must outlive `'a`. The per-CPU storage is never freed; the
    /// KUnit suite's outlives every call of its script into the engine: any `'a` within the entry
    /// point that calls this will do.
    #[inline]
    unsafe fn lock_this_cpu<'a>() -> PcpGuard<'a> {
        let mut flags = 0;
        // SAFETY: `flags` is a valid place for the saved interrupt state.
        let pcp = unsafe { bindings::rcu_free_pcp_lock(&mut flags) };
        // INVARIANT: `rcu_free_pcp_lock()` returns a CPU's storage, locked: the one of the CPU
        // this ran on when it looked (on PREEMPT_RT it may have migrated since; the lock makes
        // that harmless).
        PcpGuard {
            // SAFETY: Initialised storage that outlives `'a`, as the caller guarantees.
            pcp: unsafe { Self::from_raw(pcp) },
            flags,
            _not_send: NotThreadSafe,
        }
    }

    /// Locks these deferred frees.
    #[inline]
    fn lock(&self) -> PcpGuard<'_> {
        let mut flags = 0;
        // SAFETY: By the type invariants, `self` is initialised; `flags` is a valid place.
        unsafe { bindings::rcu_free_pcp_lock_cpu(self.as_raw(), &mut flags) };
        // INVARIANT: The lock of `self` is held now, with `flags` saved.
        PcpGuard {
            pcp: self,
            flags,
            _not_send: NotThreadSafe,
        }
    }

    /// Frees what waits here whose grace period has passed. Returns the number of pages freed.
    ///
    /// A truncation or a `drop_caches` of a large hot file puts all its folios on one CPU's
    /// list: the loop yields after every batch. Must be called from process context that may
    /// sleep.
    fn free_done(&self) -> c_ulong {
        let mut batch = FolioBatch::new();
        let mut freed = 0;
        loop {
            let taken = self.lock().take_done(&mut batch);
            if taken == 0 {
                return freed;
            }
            freed += taken;
            // SAFETY: `take_done()` filled the batch from `closed`, whose grace period has
            // passed.
            unsafe { free_batch(&mut batch) };
            kernel::task::cond_resched();
        }
    }

    /// Queues the CPU's work after a grace period, unless it is queued already.
    #[inline]
    fn kick(&self) {
        // SAFETY: By the type invariants, `self` is initialised, its `rwork` too.
        unsafe { bindings::rcu_free_kick(self.as_raw()) };
    }

    /// Queues the CPU's expedite work. Only the CPU's deferred free does, once it has set
    /// `expediting` under the lock.
    #[inline]
    fn kick_expedite(&self) {
        // SAFETY: By the type invariants, `self` is initialised, its `expedite` work too.
        unsafe { bindings::rcu_free_kick_expedite(self.as_raw()) };
    }

    /// Waits for the CPU's works if they are running or queued to run. Returns whether it
    /// waited. Must be called from process context that may sleep, not from one of the works.
    #[inline]
    fn flush_works(&self) -> bool {
        let pcp = self.as_raw();
        // SAFETY: By the type invariants, `self` is initialised, its works too.
        let waited = unsafe { bindings::rcu_free_flush(&raw mut (*pcp).rwork.work) };
        // SAFETY: As above.
        waited | unsafe { bindings::rcu_free_flush(&raw mut (*pcp).expedite) }
    }
}

/// One CPU's deferred frees, locked: interrupts are disabled and `pcp->lock` is held.
///
/// # Invariants
///
/// This guard holds the lock of `pcp`, taken with `spin_lock_irqsave()` that saved `flags`.
/// While the lock is held, and so whenever a guard is dropped: every folio on `open` was added
/// before `open_cookie` was taken, every folio on `closed` before `closed_cookie` was taken, and
/// `nr_pages` is the number of pages on both. Only [`PcpGuard::add`], [`PcpGuard::close`] and
/// [`PcpGuard::take_done`] change the lists, and each keeps this: the lists are reached only
/// through the guard's private methods, and this module is the boundary of that invariant.
///
/// Unlike the list_lru guard (`kernel::mm::list_lru`), whose interrupt disable is counted, it
/// restores the interrupt state it saved, as the C lock functions it wraps do:
/// dropped before a counted guard taken after it, it would enable interrupts under that lock.
/// It is private, never held across a call that takes another guard, and always dropped before
/// its function returns. It is neither [`Send`] nor [`Sync`]: the lock and the saved interrupt
/// state belong to the CPU that took them.
struct PcpGuard<'a> {
    pcp: &'a Pcp,
    flags: c_ulong,
    _not_send: NotThreadSafe,
}

impl PcpGuard<'_> {
    /// Returns a raw pointer to the locked `struct rcu_free_pcp`.
    #[inline]
    fn raw(&self) -> *mut bindings::rcu_free_pcp {
        self.pcp.as_raw()
    }

    /// The folios freed since `closed` was last filled.
    ///
    /// The list's methods that change it are unsafe, and a caller could keep their contract
    /// and still break the guard's invariants (a folio moved between the lists without its
    /// cookie): only the guard's methods use it, and this module is the boundary of that rule.
    #[inline]
    fn open(&self) -> &FolioList<Unreferenced> {
        // SAFETY: By the type invariants, `pcp` is valid and its lock, which protects the list
        // of folios linked by `lru`, is held for as long as `self` is borrowed, in this context
        // (the guard is neither `Send` nor `Sync`). The folios on it have a reference count of
        // zero and belong to the deferred free, which frees them after a grace period.
        unsafe { FolioList::from_raw(&raw mut (*self.raw()).open) }
    }

    /// The folios waiting for `closed_cookie`.
    #[inline]
    fn closed(&self) -> &FolioList<Unreferenced> {
        // SAFETY: As for `open()`.
        unsafe { FolioList::from_raw(&raw mut (*self.raw()).closed) }
    }

    /// Returns the number of pages on both lists.
    #[inline]
    fn nr_pages(&self) -> c_ulong {
        // SAFETY: By the type invariants, `pcp` is valid and locked.
        unsafe { (*self.raw()).nr_pages }
    }

    /// Returns whether the CPU's expedite work is queued or running.
    #[inline]
    fn is_expediting(&self) -> bool {
        // SAFETY: By the type invariants, `pcp` is valid and locked.
        unsafe { (*self.raw()).expediting }
    }

    /// Records whether the CPU's expedite work is queued or running.
    #[inline]
    fn set_expediting(&mut self, expediting: bool) {
        // SAFETY: By the type invariants, `pcp` is valid and locked.
        unsafe { (*self.raw()).expediting = expediting };
    }

    /// Adds a freed folio to `open`, with a cookie that covers it.
    ///
    /// # Safety
    ///
    /// `folio` must have `PG_rcu_free` and a reference count of zero, and the page allocator
    /// must have handed it over: nobody else has it.
    #[inline]
    unsafe fn add(&mut self, folio: &Folio<Unreferenced>) {
        let nr = folio.nr_pages();
        // SAFETY: The caller hands the folio over; its `lru` link is unused (it is off the LRU).
        unsafe { self.open().push_tail(folio) };
        // Taking the cookie after the folio became unreachable for new readers (its refcount
        // is zero and it left the page cache before) makes its grace period cover every reader
        // that may still see it.
        // SAFETY: By the type invariants, `pcp` is valid and locked.
        unsafe { bindings::rcu_free_pcp_stamp(self.raw()) };
        // CAST: A folio has at most `1 << MAX_FOLIO_ORDER` pages: it fits `c_ulong` and `c_long`.
        // SAFETY: As above. As C counts, in an `unsigned long` (no panic under the lock).
        unsafe { (*self.raw()).nr_pages = (*self.raw()).nr_pages.wrapping_add(nr as c_ulong) };
        // The folio is accounted before the lock is dropped: a drain may free it right after.
        // SAFETY: `folio` is a valid folio.
        unsafe { bindings::rcu_free_account(folio.as_raw(), nr as c_long) };
    }

    /// Moves all of `open` to `closed`, under `open`'s cookie, which is the newer one.
    #[inline]
    fn close(&mut self) {
        if self.open().is_empty() {
            return;
        }
        // SAFETY: Both lists are the deferred free's, which frees the folios of both after the
        // grace period of the list they are on.
        unsafe { self.closed().splice_tail(self.open()) };
        let pcp = self.raw();
        // SAFETY: By the type invariants, `pcp` is valid and locked.
        unsafe { (*pcp).closed_cookie = (*pcp).open_cookie };
    }

    /// Returns whether the grace period of `closed` has passed.
    #[inline]
    fn is_closed_done(&self) -> bool {
        // SAFETY: By the type invariants, `pcp` is valid and locked.
        unsafe { bindings::rcu_free_pcp_closed_done(self.raw()) }
    }

    /// Moves up to a batch of folios from `closed`, whose grace period has passed, to `batch`.
    /// Returns the number of pages it took: 0 when none.
    fn take_done(&mut self, batch: &mut FolioBatch<Unreferenced>) -> c_ulong {
        if self.closed().is_empty() || !self.is_closed_done() {
            return 0;
        }
        // CAST: At most a batch of folios' pages.
        // SAFETY: The batch is the deferred free's (the caller's, `free_done()`), which frees
        // its folios, and `closed`'s grace period has passed. The folios stay ours in the
        // batch, at a reference count of zero for good: nothing frees them but us.
        let taken = unsafe { self.closed().move_to_batch(batch) } as c_ulong;
        // SAFETY: By the type invariants, `pcp` is valid and locked. As C counts (no panic of
        // an overflow check under the lock): the count covers these pages, added by `add()`.
        unsafe { (*self.raw()).nr_pages = (*self.raw()).nr_pages.wrapping_sub(taken) };
        taken
    }
}

impl Drop for PcpGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants, the lock of `pcp` is held with `flags` saved.
        unsafe { bindings::rcu_free_pcp_unlock(self.raw(), self.flags) };
    }
}

/// Frees a batch of folios whose grace period has passed: clears `PG_rcu_free`, takes them out
/// of `NR_FREE_RCU_PAGES` and hands them to `free_unref_folios()` (through
/// `rcu_free_release()`), which empties the batch.
///
/// # Safety
///
/// Every folio of the batch must be one the deferred free took over ([`rcu_free_defer`]) and
/// took off a `closed` list whose grace period has passed ([`PcpGuard::take_done`]): an RCU
/// grace period has passed since its reference count reached zero.
unsafe fn free_batch(batch: &mut FolioBatch<Unreferenced>) {
    for folio in batch.iter() {
        // SAFETY: The folio's reference count is zero and, as the caller guarantees, its grace
        // period has passed.
        unsafe { folio.clear_rcu_free() };
        // SAFETY: `folio` is a valid folio.
        unsafe { bindings::rcu_free_account(folio.as_raw(), -(folio.nr_pages() as c_long)) };
    }
    // SAFETY: The batch holds valid folios with a reference count of zero, uncharged and off the
    // LRU, as the page allocator took them; without `PG_rcu_free` they are freed now.
    unsafe { bindings::rcu_free_release(batch.as_raw()) };
    // The folios are gone: whatever the release left in the batch must not be freed again.
    batch.reinit();
}

/// Takes a folio with `PG_rcu_free` whose reference count reached zero; it is freed after an RCU
/// grace period. May be called from any context that may take a `spinlock_t` with interrupts
/// disabled, as the per-CPU lock is taken: not NMI, nor, on PREEMPT_RT, where it sleeps, under a
/// raw spinlock or with interrupts disabled.
///
/// # Safety
///
/// `folio` must be a valid folio with `PG_rcu_free` and a reference count of zero that the page
/// allocator's free path hands over (it is uncharged and off the LRU).
#[export]
pub unsafe extern "C" fn rcu_free_defer(folio: *mut bindings::folio) {
    let (pcp, expedite) = {
        // SAFETY: The caller hands over a valid folio with a reference count of zero, which we
        // now own and free. The reference does not leave this block: once the lock is dropped,
        // a drain on another CPU may free the folio.
        let folio = unsafe { Folio::<Unreferenced>::from_raw(folio) };
        // SAFETY: The storage outlives this function, which keeps no reference to it.
        let mut guard = unsafe { Pcp::lock_this_cpu() };
        // SAFETY: The caller guarantees the flag, the zero reference count and the handover.
        unsafe { guard.add(folio) };
        // One expedite at a time per CPU: it takes all the CPU holds, and the next one is queued
        // by a free after it is done that finds 2 MiB waiting (which may have come during its
        // grace period).
        // SAFETY: `folio` is valid (we own it, it is not freed before we unlock).
        let expedite = !guard.is_expediting()
            && guard.nr_pages() >= EXPEDITE_PAGES
            && unsafe { bindings::rcu_free_memory_short(folio.as_raw()) };
        if expedite {
            guard.set_expediting(true);
        }
        (guard.pcp, expedite)
    };
    // From here on a drain on another CPU may free the folio: it is not touched again.
    pcp.kick();
    if expedite {
        pcp.kick_expedite();
    }
}

/// The work of one CPU's deferred frees, run after a grace period: frees `closed` if its grace
/// period has passed, closes `open`, and requeues itself while anything waits.
///
/// # Safety
///
/// `work` must be the `rwork.work` of a `struct rcu_free_pcp`.
#[export]
pub unsafe extern "C" fn rcu_free_work(work: *mut bindings::work_struct) {
    // SAFETY: The caller guarantees that `work` is the `rwork.work` of a `rcu_free_pcp`.
    let pcp = unsafe { container_of!(work, bindings::rcu_free_pcp, rwork.work) };
    // SAFETY: As above: a CPU's `rcu_free_pcp`.
    let pcp = unsafe { Pcp::from_raw(pcp) };
    pcp.free_done();
    let pending = {
        let mut guard = pcp.lock();
        if guard.closed().is_empty() {
            guard.close();
        }
        !guard.closed().is_empty()
    };
    if pending {
        pcp.kick();
    }
}

/// Frees everything one CPU holds after an expedited grace period: that CPU took a lot while
/// its memory runs short.
///
/// # Safety
///
/// `work` must be the `expedite` work of a `struct rcu_free_pcp`.
#[export]
pub unsafe extern "C" fn rcu_free_expedite(work: *mut bindings::work_struct) {
    // SAFETY: The caller guarantees that `work` is the `expedite` of a `rcu_free_pcp`.
    let pcp = unsafe { container_of!(work, bindings::rcu_free_pcp, expedite) };
    // SAFETY: As above: a CPU's `rcu_free_pcp`.
    let pcp = unsafe { Pcp::from_raw(pcp) };
    pcp.lock().close();
    // SAFETY: Process context (a work item) that may sleep, no locks held, as the expedited
    // grace period needs.
    unsafe { bindings::rcu_free_synchronize_expedited() };
    // SAFETY: No requirements.
    unsafe { bindings::rcu_free_count_expedited() };
    pcp.free_done();
    pcp.lock().set_expediting(false);
}

/// Frees every folio that waits for a grace period, on all CPUs, after an expedited grace
/// period. It also waits for the work items that are freeing folios they took, so that all that
/// waited is free when it returns: for the allocator before OOM and for callers about to test
/// that pages are free (isolation, memory offline, memory failure). It does not wait for a grace
/// period when none waits. Drains run one at a time ([`DrainLock`]).
///
/// Returns the number of pages it freed itself or, if it freed none, 1 when it waited for a work
/// that was freeing a batch or when a drain began and ended while it waited for the lock. A
/// hint: zero does not prove that nothing was freed for the caller (a drain that ended between
/// what the caller saw and its call freed it), so the callers look again whatever it returns.
///
/// The allocator calls it before it declares OOM, and `alloc_contig_range()` and memory offline
/// before they test that a range is free.
///
/// Must be called from process context that may sleep, outside `rcu_read_lock()`. Calling it
/// from one of this module's works, or from inside a drain (the lock is not recursive),
/// deadlocks.
///
/// # Safety
///
/// Always safe to call.
// Required to be unsafe due to the #[export] annotation.
#[export]
pub unsafe extern "C" fn rcu_free_drain_all() -> c_ulong {
    // The drains that began so far, as the caller arrives (`rcu_free_drain_arrive()`, with the
    // barrier that orders what the caller saw before the sample).
    // SAFETY: No requirements.
    let arrived = unsafe { bindings::rcu_free_drain_arrive() };
    let Some(one_at_a_time) = DrainLock::lock() else {
        // A fatal signal: the caller is on its way out.
        return 0;
    };
    if !one_at_a_time.begin(arrived) {
        // A drain began after the caller arrived and has ended: it closed every list
        // that held what waited then, freed it and waited for the works. Look again.
        return 1;
    }
    let mut waiting = false;
    for_each_pcp(|pcp| {
        let mut guard = pcp.lock();
        guard.close();
        waiting |= !guard.closed().is_empty();
    });
    let mut freed = 0;
    if waiting {
        // SAFETY: No memory-safety requirements. It sleeps, which the context this function
        // must be called from allows (see above).
        unsafe { bindings::rcu_free_synchronize_expedited() };
        for_each_pcp(|pcp| freed += pcp.free_done());
    }
    // A work item may have taken a batch off its list before we looked, and still be freeing
    // it: a caller about to test that the pages are free, or about to declare OOM, waits for it.
    // The expedite work may also have closed a list again after we closed it, under a newer
    // cookie, so that `free_done()` above left it: it frees that list itself after its own
    // expedited grace period, and this waits for it too.
    if flush_works() && freed == 0 {
        freed = 1;
    }
    freed
}

/// The lock that makes [`rcu_free_drain_all`] run one at a time (`rcu_free_drain_mutex`, in
/// mm/page_alloc.c), held for a whole drain. Two drains that overlapped could each miss what the
/// other does: a batch the other took off a list and is still freeing, or a list it closed that
/// the other's `close()` stamped with a newer cookie, so that its `free_done()` frees none of
/// it. The works never take it, so a drain may wait for them under it; nothing under it
/// allocates memory, so the allocator's slow path cannot reach it again from inside.
///
/// # Invariants
///
/// The task that made this value holds `rcu_free_drain_mutex` until the value is dropped, in
/// that task.
#[must_use = "if unused, the drain lock is released at once"]
struct DrainLock {
    /// Unlocked by the task that locked it.
    _not_send: NotThreadSafe,
}

impl DrainLock {
    /// Takes the lock, sleeping while another drain holds it; `None` if a fatal signal came
    /// first.
    ///
    /// Must be called from process context that may sleep. Calling it from one of this module's
    /// works (a drain waits for them under the lock), or with the lock held (it is not
    /// recursive), deadlocks.
    #[inline]
    #[must_use = "if unused, the drain lock is released at once"]
    fn lock() -> Option<Self> {
        // SAFETY: `mutex_lock_killable()` has no requirement on the context that memory safety
        // depends on: a context that may not sleep is a bug that `might_sleep()` reports.
        if unsafe { bindings::rcu_free_drain_lock() } != 0 {
            return None;
        }
        // INVARIANT: `rcu_free_drain_lock()` returned 0: this task holds the lock.
        Some(DrainLock {
            _not_send: NotThreadSafe,
        })
    }

    /// Begins a drain for a caller that arrived at generation `arrived`
    /// (`rcu_free_drain_arrive()`): false, with nothing done, if a whole drain began after that
    /// and has ended, so that what waited when the caller arrived is free. Under the lock, which
    /// `self` proves held.
    #[inline]
    fn begin(&self, arrived: u64) -> bool {
        // SAFETY: The drain lock is held (`self`), as `rcu_free_drain_begin()` needs.
        unsafe { bindings::rcu_free_drain_begin(arrived) }
    }
}

impl Drop for DrainLock {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants, this task holds the lock.
        unsafe { bindings::rcu_free_drain_unlock() };
    }
}

/// Waits for the works of every CPU that are running (or queued to run) to finish: what they
/// took off their lists is freed when this returns. Returns whether it waited for any. A work
/// still waiting for its grace period (`queue_rcu_work()`'s `call_rcu()` stage) is not waited
/// for: it has taken nothing off its list yet.
///
/// Must be called from process context that may sleep. Calling it from one of the works
/// deadlocks: the work would wait for itself (`flush_work()` warns).
fn flush_works() -> bool {
    let mut waited = false;
    for_each_pcp(|pcp| waited |= pcp.flush_works());
    waited
}

/// Calls `f` with the deferred frees of every possible CPU.
fn for_each_pcp(mut f: impl FnMut(&Pcp)) {
    for cpu in 0..kernel::cpu::nr_cpu_ids() {
        // CAST: CPU numbers are below `nr_cpu_ids`, an `unsigned int` that C passes as `int`.
        // SAFETY: Any CPU number may be asked; one that is not possible gives null.
        let pcp = unsafe { bindings::rcu_free_cpu_pcp(cpu as i32) };
        if !pcp.is_null() {
            // SAFETY: A possible CPU's storage, which outlives the call of `f`, and `f` cannot
            // keep the reference beyond it.
            f(unsafe { Pcp::from_raw(pcp) });
        }
    }
}
