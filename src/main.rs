//! The `cairn` binary: parse the command line and run it (see `cairn::cli`).

fn main() -> std::process::ExitCode {
    cairn::cli::run()
}
