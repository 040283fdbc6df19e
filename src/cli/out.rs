//! The one way the CLI writes a line (docs/cli.md "Exit status"): `writeln!`
//! and a flush, with a reader that went away (`cairn ... | head -1`, stdout
//! or stderr closed) treated as a quiet end of output rather than a panic.

use std::io::{ErrorKind, Write};

/// Writes `text` and a newline to `w` and flushes. `Ok(true)` when written;
/// `Ok(false)` when the reader went away (`BrokenPipe`) — the caller stops
/// writing and exits with the status it would have had. Other I/O errors are
/// returned.
pub fn write_line(w: &mut impl Write, text: &str) -> std::io::Result<bool> {
    match writeln!(w, "{text}").and_then(|()| w.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(e),
    }
}

/// [`write_line`] on stdout (locked for the one write).
pub fn emit(text: &str) -> std::io::Result<bool> {
    write_line(&mut std::io::stdout().lock(), text)
}

/// [`write_line`] on stdout through `anstream`: `text` may carry `anstyle`
/// colour, which is kept or stripped by the global colour choice
/// (`--color`, `NO_COLOR`, whether stdout is a terminal; `cli::color`).
pub fn emit_styled(text: &str) -> std::io::Result<bool> {
    write_line(&mut anstream::stdout().lock(), text)
}

/// [`write_line`] on stderr. Error reports go through here; a failure to
/// write one (stderr closed or broken) is not worth a second error, so this
/// returns only whether the line was written.
pub fn emit_err(text: &str) -> bool {
    matches!(write_line(&mut std::io::stderr().lock(), text), Ok(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader went away.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn broken_pipe_is_a_quiet_stop() {
        let mut buf = Vec::new();
        assert!(write_line(&mut buf, "a").unwrap());
        assert_eq!(buf, b"a\n");
        assert!(!write_line(&mut Closed, "a").unwrap());
    }
}
