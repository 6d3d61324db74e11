//! What more than one test crate needs. Each crate compiles this module for itself and uses a
//! part of it, so any item may be unused in one crate.
#![allow(dead_code)]

#[cfg(feature = "cli")]
pub mod cli;
pub mod deep;
pub mod fixtures;
pub mod tools;

/// A small deterministic generator (xorshift), so that a failing random case can be replayed
/// from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// One of `items`.
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

/// A file in the system temp directory, with a name no other test of the run has, removed on
/// drop. Tests run in parallel: two that wrote one name would read each other's lines.
pub struct TempFile(std::path::PathBuf);

impl TempFile {
    /// A file named after `name`, with `lines` in it, each ended by a newline.
    pub fn with_lines(name: &str, lines: &[&str]) -> Self {
        let file = TempFile::new(name);
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(file.path(), text).expect("the temp directory is writable");
        file
    }

    /// A name for a file, not yet written.
    pub fn new(name: &str) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let file = format!("ai-tool-{}-{n}-{name}", std::process::id());
        TempFile(std::env::temp_dir().join(file))
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }

    /// The path as text, for a command line.
    pub fn arg(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temp path")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs `future` to its end on a runtime of its own (current thread, timers and I/O on).
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}
