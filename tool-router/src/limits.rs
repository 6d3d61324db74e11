//! How much a tools file may hold.

/// How much a tools file may hold. A file is input from outside the program: these
/// bound what reading it can cost (docs/reliability.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolsFileLimits {
    /// The most bytes a file may have. Default 4 MiB ([`ToolsFileLimits::DEFAULT_BYTES`]).
    pub bytes: usize,
    /// The most XML nodes (elements, text, comments) a `tools.xml` may have. Default 200,000
    /// ([`ToolsFileLimits::DEFAULT_NODES`]).
    pub nodes: u32,
}

impl ToolsFileLimits {
    /// The default of [`ToolsFileLimits::bytes`]: 4 MiB.
    pub const DEFAULT_BYTES: usize = 4 << 20;
    /// The default of [`ToolsFileLimits::nodes`].
    pub const DEFAULT_NODES: u32 = 200_000;

    /// These limits with another byte cap.
    pub fn with_bytes(mut self, bytes: usize) -> Self {
        self.bytes = bytes;
        self
    }

    /// These limits with another node cap.
    pub fn with_nodes(mut self, nodes: u32) -> Self {
        self.nodes = nodes;
        self
    }
}

impl Default for ToolsFileLimits {
    fn default() -> Self {
        ToolsFileLimits {
            bytes: Self::DEFAULT_BYTES,
            nodes: Self::DEFAULT_NODES,
        }
    }
}
