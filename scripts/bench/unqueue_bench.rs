// SPDX-License-Identifier: GPL-2.0

//! `make bench`: the Rust `folio_batch_unqueue_deferred_split()` against the C one.
//!
//! An out-of-tree module (the top-level `Kbuild`), loaded in the guest of the series' perf
//! kernel. Both implementations run on the same batch of the same folios: the Rust one through
//! its C entry point, as every caller in mm/ reaches it, and `folio_batch_unqueue_deferred_split_c()`,
//! which calls `__folio_batch_unqueue_deferred_split()`, the C implementation of the same
//! algorithm (one list_lru round trip per run of folios of one sublist), which
//! `patches/local.series` builds beside the Rust one and exports, with `deferred_split_folio()`,
//! for this module only. (Until the C one batched too, "C" here was the loop of
//! `folio_unqueue_deferred_split()` calls of Joanne Koong's patch.)
//!
//! One more case, `lruvec_relock`, times the locking of `folio_batch_move_lru()` (the lruvec of
//! the first folio locked, relocked for each next one, unlocked at the end) done with the Rust
//! [`LruvecGuard`](kernel::mm::lruvec::LruvecGuard) against the same C code
//! (`folio_batch_lruvec_relock_c()`, `patches/local.series`), on one batch of 31 folios of one
//! lruvec: what the guard's lock and relock cost against `folio_lruvec_relock_irqsave()`.
//!
//! For each case, `rounds` rounds; in each round both variants run once, in alternating order,
//! on a batch of 31 charged folios with a reference count of zero, queued again before each
//! variant when the case queues. The time of a variant in a round is that of `calls` calls,
//! minus the cost of reading the clock; the module prints the median and the mean per batch,
//! one JSON line per case, and checks after each call that no folio of the batch is left on
//! the queue or partially mapped. A failed check fails the load.

use core::ptr;
use kernel::{
    bindings,
    mm::{
        folio::{
            Folio,
            RefState,
            Referenced,
            Unreferenced, //
        },
        folio_batch::{
            FolioBatch,
            FOLIO_BATCH_SIZE, //
        },
        lruvec::LruvecUnlocked,
    },
    prelude::*,
    time::{Instant, Monotonic},
};

module! {
    type: UnqueueBench,
    name: "unqueue_bench",
    authors: ["The series' benchmark harness"],
    description: "Rust against C: unqueueing freed folios from the deferred split queue",
    license: "GPL",
    params: {
        rounds: u32 {
            default: 2000,
            description: "Rounds per case (each runs both variants once)",
        },
    },
}

// `struct folio_batch` is only passed by pointer: as the bindings crate does, allow its
// bindgen type, which Rust does not know to be FFI-safe.
#[allow(improper_ctypes)]
unsafe extern "C" {
    /// The C unqueue (`mm/folio.c`, `patches/local.series`).
    fn folio_batch_unqueue_deferred_split_c(fbatch: *mut bindings::folio_batch);
    /// The locking of `folio_batch_move_lru()` in C (`mm/folio.c`, `patches/local.series`).
    fn folio_batch_lruvec_relock_c(fbatch: *mut bindings::folio_batch);
}

/// `folio_batch_lruvec_relock_c()` with the Rust guard. Not inlined, so that its code can be
/// compared with the C function's in the disassembly.
#[inline(never)]
fn folio_batch_lruvec_relock_rust(unlocked: &mut LruvecUnlocked, batch: &FolioBatch<Referenced>) {
    let mut folios = batch.iter();
    if let Some(first) = folios.next() {
        let Some(mut guard) = unlocked.lock(first) else {
            return;
        };
        for folio in folios {
            let Some(next) = guard.relock(folio) else {
                return;
            };
            guard = next;
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Variant {
    C,
    Rust,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::C => "C",
            Variant::Rust => "Rust",
        }
    }

    /// Both variants, in the order of round `round`: C first in even rounds, Rust first in
    /// odd ones, so that neither always runs on a cache the other warmed.
    fn in_round(round: u32) -> [Variant; 2] {
        if round % 2 == 0 {
            [Variant::C, Variant::Rust]
        } else {
            [Variant::Rust, Variant::C]
        }
    }
}

/// One sample vector per variant, for `rounds` rounds.
fn sample_vecs(rounds: u32) -> Result<[KVec<i64>; 2]> {
    Ok([
        KVec::with_capacity(rounds as usize, GFP_KERNEL)?,
        KVec::with_capacity(rounds as usize, GFP_KERNEL)?,
    ])
}

/// A workload: the folios of the batch and what is done to them before each call.
struct Case {
    name: &'static str,
    order: u32,
    /// `None`: never queued; `Some(partially_mapped)`: queued before each variant runs.
    queue: Option<bool>,
    /// Calls per timed sample (a call after the first finds nothing queued).
    calls: u32,
}

const CASES: [Case; 5] = [
    // Most freed batches: small folios, nothing to unqueue.
    Case {
        name: "order0",
        order: 0,
        queue: None,
        calls: 64,
    },
    // Large rmappable folios that were never queued: the lockless list_empty() check.
    Case {
        name: "order2_unqueued",
        order: 2,
        queue: None,
        calls: 64,
    },
    // Queued 16K mTHP (seed 000's workload): a list_lru lock round trip each in C.
    Case {
        name: "order2_queued",
        order: 2,
        queue: Some(false),
        calls: 1,
    },
    // Queued and partially mapped: the flag and the mTHP stat go back too.
    Case {
        name: "order2_partial",
        order: 2,
        queue: Some(true),
        calls: 1,
    },
    Case {
        name: "pmd_partial",
        order: bindings::HPAGE_PMD_ORDER,
        queue: Some(true),
        calls: 1,
    },
];

/// The folios of a case: allocated and charged, with a reference count of one, or of zero
/// while `frozen`.
///
/// # Invariants
///
/// The first `len` entries of `folios` are folios that this owns one reference to (zero
/// references while `frozen`, when nobody else has one either).
struct Folios {
    folios: [*mut bindings::folio; FOLIO_BATCH_SIZE],
    len: usize,
    frozen: bool,
}

impl Folios {
    fn new(order: u32) -> Result<Self> {
        // INVARIANT: No folio yet.
        let mut this = Self {
            folios: [ptr::null_mut(); FOLIO_BATCH_SIZE],
            len: 0,
            frozen: false,
        };
        for _ in 0..FOLIO_BATCH_SIZE {
            // SAFETY: Allocates a folio; no requirements.
            let folio = unsafe { bindings::folio_alloc(bindings::GFP_KERNEL, order) };
            if folio.is_null() {
                return Err(ENOMEM);
            }
            // INVARIANT: We own the new folio's only reference.
            this.folios[this.len] = folio;
            this.len += 1;
            // SAFETY: A new folio, not mapped: charge it to our memory cgroup, as a fault
            // charges an anonymous folio (the free paths unqueue charged folios).
            let ret = unsafe {
                bindings::mem_cgroup_charge(folio, ptr::null_mut(), bindings::GFP_KERNEL)
            };
            if ret != 0 {
                return Err(Error::from_errno(ret));
            }
        }
        Ok(this)
    }

    /// Queues every folio as rmap does when it finds one partially mapped (or underused).
    /// Whether they were is checked on the frozen batch ([`is_queued`]).
    fn queue(&self, partially_mapped: bool) -> Result {
        if self.frozen {
            return Err(EINVAL);
        }
        for &folio in &self.folios[..self.len] {
            // SAFETY: A large folio we hold a reference to (not frozen).
            unsafe { bindings::deferred_split_folio(folio, partially_mapped) };
        }
        Ok(())
    }

    /// Drops the reference count of every folio to zero, as the free paths do.
    fn freeze(&mut self) -> Result {
        for (i, &folio) in self.folios[..self.len].iter().enumerate() {
            // SAFETY: We hold a reference.
            if unsafe { bindings::folio_put_testzero(folio) } {
                continue;
            }
            // Somebody else holds a reference too (the deferred split shrinker?): take ours
            // back, while theirs keeps the folio alive, and thaw the folios frozen so far.
            // SAFETY: The folio is alive: its reference count is not zero.
            unsafe { bindings::folio_ref_inc_return(folio) };
            for &frozen in &self.folios[..i] {
                // SAFETY: Frozen by this loop: reference count zero, nobody else sees it.
                unsafe { bindings::folio_ref_unfreeze(frozen, 1) };
            }
            pr_err!("a folio is referenced elsewhere; cannot free it\n");
            return Err(EBUSY);
        }
        self.frozen = true;
        Ok(())
    }

    fn unfreeze(&mut self) {
        if self.frozen {
            for &folio in &self.folios[..self.len] {
                // SAFETY: The reference count is zero and nobody else can see the folio.
                unsafe { bindings::folio_ref_unfreeze(folio, 1) };
            }
            self.frozen = false;
        }
    }

    /// A batch of the folios, in state `S`.
    ///
    /// # Safety
    ///
    /// Until the batch is dropped, the folios must stay frozen if `S` is [`Unreferenced`], and
    /// not frozen if it is [`Referenced`].
    unsafe fn batch<S: RefState>(&self) -> FolioBatch<S> {
        let mut batch = FolioBatch::new();
        for &folio in &self.folios[..self.len] {
            // SAFETY: By the type invariants, the folio is valid while `self` lives, which
            // outlives the batch (it is used within `run()` and `run_relock()`); the caller
            // guarantees its state.
            let _ = unsafe { batch.push(Folio::<S>::from_raw(folio)) };
        }
        batch
    }
}

/// Whether `folio` is on the deferred split queue.
fn is_queued(folio: &Folio<Unreferenced>) -> bool {
    // SAFETY: The folio may be deferred split; with a reference count of zero, nobody links it
    // into a list concurrently.
    folio.may_be_deferred_split() && !unsafe { folio.deferred_list_is_empty_racy() }
}

impl Drop for Folios {
    fn drop(&mut self) {
        self.unfreeze();
        for &folio in &self.folios[..self.len] {
            // SAFETY: Drops our reference: the folio is freed (and unqueued, uncharged).
            unsafe { bindings::folio_put(folio) };
        }
    }
}

fn now() -> Instant<Monotonic> {
    Instant::<Monotonic>::now()
}

/// The median and the mean of `samples`, which must not be empty.
fn stats(samples: &mut [i64]) -> (i64, i64) {
    samples.sort_unstable();
    let sum: i64 = samples.iter().sum();
    let n = samples.len();
    // No division that can panic: `n` is not zero.
    (samples[n / 2], sum.checked_div(n as i64).unwrap_or(0))
}

/// What reading the clock twice costs: subtracted from every sample.
fn clock_overhead(rounds: u32) -> Result<i64> {
    let mut samples = KVec::with_capacity(rounds as usize, GFP_KERNEL)?;
    for _ in 0..rounds {
        let t = now();
        samples.push(t.elapsed().as_nanos(), GFP_KERNEL)?;
    }
    Ok(stats(&mut samples).0)
}

/// Runs `case` and prints its JSON line.
fn run(case: &Case, rounds: u32, overhead: i64) -> Result {
    let mut folios = Folios::new(case.order)?;
    let mut samples = sample_vecs(rounds)?;
    if case.queue.is_none() {
        folios.freeze()?;
    }
    for round in 0..rounds {
        for variant in Variant::in_round(round) {
            if let Some(partially_mapped) = case.queue {
                folios.unfreeze();
                folios.queue(partially_mapped)?;
                folios.freeze()?;
            }
            // SAFETY: Every folio is frozen (reference count zero) and stays so until
            // `folios.unfreeze()`, after the last use of the batch.
            let batch = unsafe { folios.batch::<Unreferenced>() };
            if case.queue.is_some() {
                if let Some(folio) = batch.iter().find(|folio| !is_queued(folio)) {
                    // With partially_mapped false, only when split_underused_thp is on.
                    pr_err!("a folio of order {} was not queued\n", folio.order());
                    return Err(EINVAL);
                }
            }
            let t = now();
            for _ in 0..case.calls {
                match variant {
                    // SAFETY: A valid batch of charged folios with a reference count of zero;
                    // no lruvec lock is held.
                    Variant::C => unsafe { folio_batch_unqueue_deferred_split_c(batch.as_raw()) },
                    // SAFETY: As above.
                    Variant::Rust => unsafe {
                        bindings::folio_batch_unqueue_deferred_split(batch.as_raw())
                    },
                }
            }
            let ns = t.elapsed().as_nanos() - overhead;
            samples[variant as usize].push(ns, GFP_KERNEL)?;
            for folio in batch.iter() {
                let queued = is_queued(folio);
                // SAFETY: `is_partially_mapped_unchecked()` runs only on a large folio.
                if queued || (folio.order() > 0 && unsafe { folio.is_partially_mapped_unchecked() })
                {
                    let what = if queued { "queued" } else { "partially mapped" };
                    pr_err!("{}: {} left a folio {}\n", case.name, variant.name(), what);
                    return Err(EINVAL);
                }
            }
        }
    }
    let (c_median, c_mean) = stats(&mut samples[Variant::C as usize]);
    let (rust_median, rust_mean) = stats(&mut samples[Variant::Rust as usize]);
    let per_batch = |ns: i64| ns.checked_div(i64::from(case.calls)).unwrap_or(0);
    pr_info!(
        "{{\"case\": \"{}\", \"order\": {}, \"folios\": {}, \"queued\": {}, \"rounds\": {}, \
         \"calls\": {}, \"c_ns\": {}, \"rust_ns\": {}, \"c_mean_ns\": {}, \"rust_mean_ns\": {}, \
         \"clock_ns\": {}}}\n",
        case.name,
        case.order,
        folios.len,
        case.queue.is_some(),
        rounds,
        case.calls,
        per_batch(c_median),
        per_batch(rust_median),
        per_batch(c_mean),
        per_batch(rust_mean),
        overhead
    );
    Ok(())
}

/// Times the lruvec locking of a batch, Rust against C, and prints its JSON line (in the
/// format of the unqueue cases).
fn run_relock(rounds: u32, overhead: i64) -> Result {
    const CALLS: u32 = 64;
    let folios = Folios::new(0)?;
    // SAFETY: `folios` is never frozen here.
    let batch = unsafe { folios.batch::<Referenced>() };
    let mut samples = sample_vecs(rounds)?;
    // Module init holds no lruvec lock, and takes none but through this token.
    let mut unlocked = LruvecUnlocked::new();
    for round in 0..rounds {
        for variant in Variant::in_round(round) {
            let t = now();
            for _ in 0..CALLS {
                match variant {
                    // SAFETY: A valid batch of folios we hold references to (charged: their
                    // lruvec is their memcg's); no lruvec lock is held.
                    Variant::C => unsafe { folio_batch_lruvec_relock_c(batch.as_raw()) },
                    Variant::Rust => folio_batch_lruvec_relock_rust(&mut unlocked, &batch),
                }
            }
            let ns = t.elapsed().as_nanos() - overhead;
            samples[variant as usize].push(ns, GFP_KERNEL)?;
        }
    }
    let (c_median, c_mean) = stats(&mut samples[Variant::C as usize]);
    let (rust_median, rust_mean) = stats(&mut samples[Variant::Rust as usize]);
    let per_batch = |ns: i64| ns.checked_div(i64::from(CALLS)).unwrap_or(0);
    pr_info!(
        "{{\"case\": \"lruvec_relock\", \"order\": 0, \"folios\": {}, \"queued\": false, \
         \"rounds\": {}, \"calls\": {}, \"c_ns\": {}, \"rust_ns\": {}, \"c_mean_ns\": {}, \
         \"rust_mean_ns\": {}, \"clock_ns\": {}}}\n",
        folios.len,
        rounds,
        CALLS,
        per_batch(c_median),
        per_batch(rust_median),
        per_batch(c_mean),
        per_batch(rust_mean),
        overhead
    );
    Ok(())
}

struct UnqueueBench;

impl kernel::Module for UnqueueBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let rounds = module_parameters::rounds.value();
        if rounds == 0 {
            pr_err!("rounds must be at least 1\n");
            return Err(EINVAL);
        }
        let overhead = clock_overhead(rounds)?;
        for case in &CASES {
            run(case, rounds, overhead)?;
        }
        run_relock(rounds, overhead)?;
        Ok(UnqueueBench)
    }
}
