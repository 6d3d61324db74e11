//! [`LogLevel`] and [`LogSink`]: where a tool's [`ToolContext::log`](crate::ToolContext::log)
//! messages go.

use std::sync::Arc;

/// How severe a tool's log message is: the eight levels of syslog (RFC 5424) that MCP uses,
/// least severe first, so that `level >= LogLevel::Warning` reads as it should.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Normal progress of the work.
    Info,
    /// Normal but significant.
    Notice,
    /// Something to look at; the work goes on.
    Warning,
    /// Something failed.
    Error,
    /// A part of the system is failing.
    Critical,
    /// Someone must act at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name as MCP writes it: `debug`, `info`, ..., `emergency`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a call's log messages go, given by the caller in `CallOptions::with_log` (an MCP
/// server sends those at or above its client's level as `notifications/message`). Called on
/// the tool's thread: it should return at once.
pub type LogSink = Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::LogLevel;

    #[test]
    fn levels_are_ordered_by_severity_and_named_as_mcp_names_them() {
        assert!(LogLevel::ALL.windows(2).all(|w| w[0] < w[1]));
        let names: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
        assert_eq!(
            names,
            [
                "debug",
                "info",
                "notice",
                "warning",
                "error",
                "critical",
                "alert",
                "emergency"
            ]
        );
    }
}
