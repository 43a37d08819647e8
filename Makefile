# The one entry point. `make help` lists the targets; each step is one
# script under scripts/, run in this order:
#   deps -> base -> tree -> config -> build -> kselftests -> image -> boot -> results
#
# Settings (make VAR=value):
#   CONFIG=test|perf|norust  kernel configuration (scripts/configs/)   [test]
#   ACCEL=auto|kvm|tcg       QEMU accelerator                          [auto]
#   SMP=2 MEM=2G             guest vCPUs and memory
#   TIMEOUT=seconds          kill the guest after this long
#   TESTS=a,b                run only these kselftests (names in scripts/guest/tests.txt)
#   KERNEL_SRC=dir           your own Linux 7.3.4 tree as the base
#   KERNEL_TARBALL=file      a linux-7.3.4 tarball (e.g. kernel.org's) as the base
#   BUILD=dir                where everything generated goes           [build]
#   EDIT_DIR=dir             make edit/absorb: the series as a git branch [build/edit]
#   LLVM_VERSION=19|22       clang of the kernel builds; rustc's LLVM (22) adds
#                            CONFIG_RUST_INLINE_HELPERS (bench: 22 if installed) [19]
#   MATRIX=a,b|list          make matrix: only these entries, or list them [all]
#                            (make deps MATRIX=1: what the matrix needs too)
#   COUNT=insn|c2c           make bench: exact counts with the tcg-bench QEMU plugin
#                            instead of times: instructions per op (-icount, 1 vCPU)
#                            or cache-line transfers per op (MTTCG, C2C_VCPUS="2 4")
#   WORKLOADS=a,b            make bench COUNT=...: only these workloads (globs over
#                            <workload>-<fs>: small-tmpfs, large-*, free, partial)
#   VMTESTS=a,b VMTESTS_LIMIT=s VMTESTS_VARIANTS=base,series
#                            make vmtests: categories, seconds each, kernels
#   FSTESTS=dir              make fstests: an xfstests-dev checkout (copied to build/fstests-src)
#   FSTESTS_FS= FSTESTS_GROUP= FSTESTS_TESTS= FSTESTS_EXCLUDE= FSTESTS_VARIANTS=
#   FSTESTS_TEST_LIMIT= FSTESTS_TIMEOUT= FSTESTS_DISK_SIZE=   make fstests (scripts/fstests.sh)
#   SERIES=split|rcu-free    make series, series-b4, series-check: one mail series
#                            of patches/mail.plan ("series:" lines)      [all]
#   VERSION=N                make series: [PATCH vN] (one SERIES; needs a vN: section
#                            in patches/changelog.<series>) [its newest section, else 1]
#   MAIL_CC='A <a@x>, b@y'   make series: Cc them on every mail of the series

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := demo
export CONFIG ACCEL SMP MEM TIMEOUT TESTS KERNEL_SRC KERNEL_TARBALL BUILD FORCE LLVM_VERSION \
	MATRIX RANDCONFIG_N RANDCONFIG_SEEDS W1_CONFIG EDIT_DIR COUNT WORKLOADS C2C_VCPUS ICOUNT_SHIFT \
	VMTESTS VMTESTS_LIMIT VMTESTS_SKIP VMTESTS_VARIANTS \
	FSTESTS FSTESTS_FS FSTESTS_GROUP FSTESTS_TESTS FSTESTS_EXCLUDE FSTESTS_VARIANTS \
	FSTESTS_TEST_LIMIT FSTESTS_TIMEOUT FSTESTS_DISK_SIZE SERIES MAIL_CC

S := scripts

settings:
	@$(S)/settings.sh

.PHONY: settings demo check fresh-check soak shell help deps base tree config build kselftests image \
	boot module bench vmtests fstests plugin-test series series-b4 series-check matrix edit absorb results host-check clean clean-tree \
	distclean

demo: image build ## Build the kernel, boot it, show the series live, power off.
	@MODE=demo $(S)/boot.sh
	@awk '/^@@@ begin dmesg/ { skip = 1 } /^@@@ end dmesg/ { skip = 0; next } \
		!skip && !/^@@@/' "$${BUILD:-build}/results/$${CONFIG:-test}-demo/results.txt"

# The host checks' verdict is their TAP file, which results.py counts (and
# fails on if it is missing); a failed boot fails results.py through
# --boot-rc, after it has read what the guest left (nothing older: boot.sh
# clears the run first).
check: image build ## Build the test kernel, boot it, run every test: "N passed, N failed".
	@$(S)/host_check.sh --brief || :
	@MODULE_OPTIONAL=1 $(S)/module.sh
	@rc=0; MODE=check $(S)/boot.sh || rc=$$?; \
	$(S)/results.py --boot-rc "$$rc" --host "$${BUILD:-build}/host-check/results.tap" \
		"$${BUILD:-build}/results/$${CONFIG:-test}-check$$([ "$${VARIANT:-series}" = base ] && echo -base)" "$$($(S)/tests.sh)"

fresh-check: settings ## CI's run before pushing: .ci/run (make check) in a fresh clone of HEAD (build/fresh; cold).
	@$(S)/fresh_check.sh

host-check: ## Test scripts/ on the host (pytest, shellcheck), in seconds: "N passed, N failed".
	@$(S)/host_check.sh

soak: image build ## The lockless-read stresses for 30 minutes, MGLRU off then on: "N passed, N failed".
	@$(MAKE) --no-print-directory check TESTS='soak-*' TIMEOUT=$${TIMEOUT:-4200}

shell: image build ## Boot into an interactive guest shell (leave with 'poweroff').
	@MODE=shell $(S)/boot.sh

deps: settings ## Install the missing packages and bindgen-cli.
	@$(S)/deps.sh

base: deps ## Fetch, verify and unpack the pinned Linux 7.3.4 base.
	@$(S)/base.sh >/dev/null

tree: base ## Assemble build/tree: base + the series' files + patches/.
	@$(S)/tree.sh

config: tree ## Configure build/obj-$(CONFIG) from scripts/configs/.
	@$(S)/config.sh

build: config ## Build the kernel (incremental, ccache).
	@$(S)/build.sh

kselftests: tree ## Build the mm kselftests (static PIEs).
	@$(S)/kselftests.sh

image: kselftests ## Pack the guest initramfs.
	@$(S)/image.sh

boot: settings ## Boot the last built kernel (MODE=check|demo|shell) without rebuilding.
	@$(S)/boot.sh

module: settings ## Build the out-of-tree modules (Kbuild) for CONFIG's built kernel; boot loads them.
	@$(S)/module.sh

vmtests: kselftests ## Upstream's mm selftests (run_vmtests.sh), base against series: build/vmtests.md.
	@$(S)/vmtests.sh

fstests: settings ## fstests (xfstests) on base and series, compared: build/fstests.md (FSTESTS=<xfstests-dev checkout>).
	@$(S)/fstests.sh --check
	@$(MAKE) --no-print-directory kselftests
	@$(S)/fstests.sh

bench: kselftests ## Base vs series benchmarks (perf kernels): build/bench/ (COUNT=insn|c2c: exact counts).
	@$(S)/bench.sh

plugin-test: settings ## The tcg-bench QEMU plugin's own tests (cargo test, programs under qemu-x86_64).
	@TCG_PLUGIN_OUT="$${BUILD:-build}/tcg-plugin" $(S)/bench/tcg-plugin/test.sh

series: base ## Export the mail series of patches/mail.plan (SERIES=: one) to build/series/<series>/.
	@$(S)/series.sh

series-b4: series ## The series as `b4 send` would send them (b4's dry run, offline): build/series-b4/<series>/.
	@$(S)/series_b4.sh

series-check: series tree ## Apply the mails with git am; checkpatch and build each step; clippy, rustfmt, rustdoc (SERIES=: one).
	@$(S)/series_check.sh

edit: base ## The series as a git branch in build/edit (one commit per mail) to change with git.
	@$(S)/edit.sh

absorb: settings ## Write the branch of build/edit back: added files, quilt patches, mail.plan.
	@$(S)/absorb.sh

matrix: settings ## Build (and boot) the configurations the kernel test robot tries: build/matrix.md.
	@$(S)/matrix.sh

results: ## Summarise the last `make check` guest run again.
	@$(S)/results.py "$${BUILD:-build}/results/$${CONFIG:-test}-check$$([ "$${VARIANT:-series}" = base ] && echo -base)" "$$($(S)/tests.sh)"

clean: ## Remove the kernel builds, keep the base and the tree.
	rm -rf "$${BUILD:-build}"/obj-* "$${BUILD:-build}"/results "$${BUILD:-build}"/module-* \
		"$${BUILD:-build}"/modules-* "$${BUILD:-build}"/.initramfs-* "$${BUILD:-build}"/fstests-disks*

clean-tree: ## Remove the assembled tree (re-assembled on the next run).
	rm -rf "$${BUILD:-build}"/tree

distclean: ## Remove everything generated (build/).
	rm -rf "$${BUILD:-build}"

help: ## List the targets.
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 14
	@sed -n '/^# Settings/,/^$$/p' $(MAKEFILE_LIST) | sed 's/^# \{0,1\}//'
