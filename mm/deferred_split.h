/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The batch unqueue from the THP deferred split queue: what mm's C calls and
 * what mm/deferred_split.rs, which implements it, needs of mm.
 */
#ifndef __MM_DEFERRED_SPLIT_H
#define __MM_DEFERRED_SPLIT_H

struct folio_batch;
struct list_lru;

/**
 * folio_batch_unqueue_deferred_split() - Unqueue freed folios from the
 * deferred split queue.
 * @fbatch: The folios, as folio_batch_add() filled it (no NULL entry); each
 * one's refcount has dropped to zero.
 *
 * Does folio_unqueue_deferred_split() for every folio of @fbatch. Call it
 * after the folios' refcounts have dropped to zero and before they are
 * uncharged (see __folio_unqueue_deferred_split() for why), without the
 * lruvec lock: the deferred split queue has its own lock.
 *
 * With CONFIG_DEFERRED_SPLIT_RUST it is mm/deferred_split.rs.
 *
 * Context: Any context that may take a spinlock with irqsave; the lruvec
 * lock must not be held.
 */
void folio_batch_unqueue_deferred_split(struct folio_batch *fbatch);

#ifdef CONFIG_TRANSPARENT_HUGEPAGE
/* The THP deferred split queue, for mm/deferred_split.rs. */
extern struct list_lru deferred_split_lru;
#endif

#endif /* __MM_DEFERRED_SPLIT_H */
