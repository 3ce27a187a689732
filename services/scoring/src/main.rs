//! The `scoring` binary: reads the settings, starts telemetry, builds the application and runs it
//! until SIGTERM or SIGINT. With `--rebuild` it instead rebuilds the ledger into the empty
//! database of its settings from the table events, then exits.

use okey_platform::{ServiceKind, Settings, build_then_serve, telemetry};
use scoring::startup::Application;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let rebuild = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--rebuild") => true,
        Some(other) => anyhow::bail!("unknown argument {other:?} (the one argument is --rebuild)"),
    };
    let settings = Settings::load(ServiceKind::Scoring)?;
    let _telemetry = telemetry::init(
        ServiceKind::Scoring.name(),
        env!("CARGO_PKG_VERSION"),
        &settings.telemetry,
    )?;
    if rebuild {
        let done = Application::rebuild(&settings).await?;
        println!(
            "rebuilt the ledger: {} events applied, {} messages set aside, in {:.1} s",
            done.events, done.poisoned, done.seconds
        );
        return Ok(());
    }
    build_then_serve(Application::build(&settings), |application, shutdown| {
        application.run_until_stopped(shutdown)
    })
    .await?;
    Ok(())
}
