/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Markers for the tcg-bench QEMU plugin (scripts/bench/tcg-plugin).
 *
 * Each marker is the 8-byte NOP `nopl 0x5443CCCC(%rax,%rax,1)`
 * (0f 1f 84 00, then the displacement): it does nothing on x86_64, with or
 * without the plugin; the plugin recognises it by its bytes when QEMU
 * translates it. CCCC: 1 start, 2 stop, 3 one operation, 4 reset,
 * 0x8000 | n: n operations (n < 32768, a constant).
 *
 * TCG_BENCH_START() opens a region on all vCPUs (the first start of
 * nested/parallel starts), TCG_BENCH_STOP() closes it (the matching last
 * stop); TCG_BENCH_OP() in the measured loop counts one operation, on the
 * vCPU that executes it (the marker itself is not counted as an
 * instruction). TCG_BENCH_RESET() closes a region left open by a process
 * that died between its start and stop (reported as incomplete): run it
 * before a start. Usable in user space and in the kernel.
 */
#ifndef TCG_MARKER_H
#define TCG_MARKER_H

#if defined(__x86_64__) || defined(__i386__)
#define TCG_BENCH_MARK(code)                                                   \
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x84, 0x00\n\t"                \
			     ".long 0x54430000 + (" #code ")" ::: "memory")
#else
/* Other architectures (the arm64 initramfs of make matrix): no markers. */
#define TCG_BENCH_MARK(code) do { } while (0)
#endif

#define TCG_BENCH_START() TCG_BENCH_MARK(1)
#define TCG_BENCH_STOP() TCG_BENCH_MARK(2)
#define TCG_BENCH_OP() TCG_BENCH_MARK(3)
#define TCG_BENCH_RESET() TCG_BENCH_MARK(4)
/* n: an integer constant below 32768 */
#define TCG_BENCH_OPS(n) TCG_BENCH_MARK(0x8000 + (n))

#endif
