//! `cairn completions SHELL` (clap_complete) and `cairn man` (clap_mangen)
//! — both generated from the same clap definition as `--help` (issue 12).

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;

/// Writes the completion script for `shell` to stdout.
pub(super) fn completions_cmd(shell: Shell) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "cairn", &mut buf);
    write_all(&buf)
}

/// Writes the roff man page `cairn(1)` to stdout (`cairn man | man -l -`).
pub(super) fn man_cmd() -> anyhow::Result<ExitCode> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    write_all(&buf)
}

/// Writes `buf` to stdout; a reader that went away is a quiet end.
fn write_all(buf: &[u8]) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(buf).and_then(|()| out.flush()) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.into()),
    }
}
