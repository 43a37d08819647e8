//! tcg-bench: a QEMU 7.2 TCG plugin (plugin API version 1) that measures,
//! between two guest markers,
//!
//! - the instructions each vCPU executes in user and in kernel mode
//!   (`mode=icount`, the default), and
//! - with `mode=c2c` also every guest memory access, by 64-byte line of
//!   guest physical memory (virtual in QEMU user mode), counting the
//!   ownership transfers between vCPUs and naming the lines that moved most
//!   with the instructions that moved them.
//!
//! See README.md for the arguments, the markers and the report.

pub mod lines;
pub mod marker;
pub mod state;
pub mod symbols;

#[cfg(not(test))]
mod plugin {
    use crate::marker::{Marker, decode, is_rep_string};
    use crate::state::{Config, Count, Mode, State};
    use qemu_plugin::install::{Args, Info};
    use qemu_plugin::plugin::{HasCallbacks, Register};
    use qemu_plugin::{Error, MemRW, PluginId, Result, TranslationBlock, register};
    use std::sync::OnceLock;

    static STATE: OnceLock<State> = OnceLock::new();

    /// x86_64: the upper half of the address space is the kernel's
    /// (0xffff800000000000 and up with 4-level paging, 0xff00000000000000
    /// with 5-level).
    fn is_kernel(vaddr: u64) -> bool {
        vaddr >> 63 == 1
    }

    struct TcgBench;

    impl Register for TcgBench {
        fn register(&mut self, id: PluginId, args: &Args, info: &Info) -> Result<()> {
            let fail = |m: String| {
                eprintln!("tcg-bench: {m}");
                Error::PluginInstanceSetError
            };
            let cfg = Config::parse(args.raw.iter().map(String::as_str)).map_err(fail)?;
            let whole = cfg.whole;
            let state = State::new(cfg, info.system.is_some()).map_err(fail)?;
            if STATE.set(state).is_err() {
                return Err(Error::PluginInstanceSetError);
            }
            if whole && let Some(s) = STATE.get() {
                s.start(0, false, 0);
            }
            qemu_plugin::qemu_plugin_register_atexit_cb(id, |_| {
                if let Some(s) = STATE.get() {
                    let n = s.finish();
                    if n == 0 {
                        eprintln!("tcg-bench: no region (no start marker executed)");
                    }
                }
            })?;
            Ok(())
        }
    }

    impl HasCallbacks for TcgBench {
        fn on_translation_block_translate(&mut self, _id: PluginId, tb: TranslationBlock) -> Result<()> {
            let Some(st) = STATE.get() else { return Ok(()) };
            let st: &'static State = st;
            let kernel = is_kernel(tb.vaddr());
            let insns: Vec<_> = tb.instructions().collect();
            let markers: Vec<Option<Marker>> = insns
                .iter()
                .map(|i| if i.size() == 8 { decode(&i.data()) } else { None })
                .collect();
            let plain = markers.iter().filter(|m| m.is_none()).count() as u64;
            let per_tb = st.cfg.count == Count::Tb;
            // A block of a rep string instruction alone: an iteration (the
            // first ran in the block before, as the instruction), counted
            // apart; its memory accesses are followed as any others.
            let rep = insns.len() == 1 && is_rep_string(&insns[0].data());
            // profile=N: the block's executions, for instructions by function.
            let prof = (st.cfg.profile > 0 && !rep && plain != 0).then(|| st.tb_prof(tb.vaddr(), plain));
            if rep {
                tb.register_execute_callback(move |vcpu| st.rep(vcpu));
            } else if per_tb && plain != 0 {
                tb.register_execute_callback(move |vcpu| {
                    st.count(vcpu, kernel, plain);
                    if let Some(p) = prof {
                        st.prof(p);
                    }
                });
            } else if let Some(p) = prof {
                tb.register_execute_callback(move |_| st.prof(p));
            }
            let mut after = plain;
            for (insn, m) in insns.iter().zip(markers) {
                match m {
                    Some(m) => {
                        // Plain instructions after this one in the block.
                        let after = if per_tb { after } else { 0 };
                        insn.register_execute_callback(move |vcpu| match m {
                            Marker::Start => st.start(vcpu, kernel, after),
                            Marker::Stop => st.stop(vcpu, kernel, after),
                            Marker::Ops(n) => st.ops(vcpu, u64::from(n)),
                            Marker::Reset => st.reset(),
                        });
                    }
                    None => {
                        after -= 1;
                        if !per_tb && !rep {
                            insn.register_execute_callback(move |vcpu| st.count(vcpu, kernel, 1));
                        }
                        if st.cfg.mode == Mode::C2c {
                            let pc = insn.vaddr();
                            let system = st.system;
                            insn.register_memory_access_callback(
                                move |vcpu, info, vaddr| {
                                    if !st.is_active() {
                                        return;
                                    }
                                    let key = if system {
                                        match info.hwaddr(vaddr) {
                                            Some(h) if h.is_io() => return,
                                            Some(h) => h.hwaddr(),
                                            None => vaddr,
                                        }
                                    } else {
                                        vaddr
                                    };
                                    let size = 1u64 << info.size_shift();
                                    st.access(vcpu, key, vaddr, size, info.is_store(), pc);
                                },
                                MemRW::QEMU_PLUGIN_MEM_RW,
                            );
                        }
                    }
                }
            }
            Ok(())
        }
    }

    register!(TcgBench);
}
