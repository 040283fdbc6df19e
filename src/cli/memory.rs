//! The process's heap (issue 23: "`cairn serve` peak RSS under 200 MiB for
//! the heavy mix at 100k"; docs/performance.md "cairn serve's memory").
//!
//! glibc's allocator gives each thread that meets contention an arena of
//! its own (up to eight per core) and keeps what a freed arena held. A
//! server answers calls on whichever tokio worker or blocking thread is
//! free, so every thread that once shaped a large answer (94k tasks of
//! `knowledge`, every task of `(all)`) kept that answer's peak: the heavy
//! mix at 100k took `cairn serve` to 234 MiB where one call alone peaks at
//! 73 MiB. Two arenas bound it (115–125 MiB measured; one arena 81 MiB,
//! with every thread then sharing one lock).

/// The most glibc arenas the process uses.
pub const ARENAS: i32 = 2;

/// Caps the allocator's arenas at [`ARENAS`]; call before any thread is
/// started. Does nothing on a C library other than glibc.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called at start,
    // before other threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
    }
}
