//! The `opconform` command; see `opconform --help`.

fn main() -> std::process::ExitCode {
    opconform::cli::main()
}
