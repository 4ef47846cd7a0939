//! `jpu`: the command-line client (see `jpu_share::cli`).

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    jpu_share::cli::main().await
}
